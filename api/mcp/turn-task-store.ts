/**
 * The MCP SDK's `TaskStore`, backed by turns: a task is a turn and its id is the turn's id, so a
 * task outlives the connection and the API process, and nothing is kept here. The store is made
 * for one request and its authenticated caller (the endpoint is stateless; MCP session ids play
 * no part): a task the caller may not read is not found, as one that does not exist.
 *
 * - `createTask` starts the turn of the called agent with the call's `prompt`.
 * - `getTask` reads the turn (api/mcp/mcp-task-view.ts for the mapping of its states).
 * - `getTaskResult` is the turn's answer (the SDK asks for it once the task is terminal).
 * - `updateTaskStatus(…, 'cancelled')` (what `tasks/cancel` does) cancels the turn's workflow: every
 *   open call gets a cancelled result, so its history stays valid; it waits for the turn to end.
 * - `listTasks`: api/mcp/mcp-task-list.ts.
 */
import { randomUUID } from 'node:crypto';
import type { CreateTaskOptions, TaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import type { Request, RequestId, Result, Task } from '@modelcontextprotocol/sdk/types.js';
import { TurnpikeNotFoundError } from '../../client/errors.js';
import type { Caller } from '../auth.js';
import type { RouteContext } from '../route-context.js';
import { requestPlacement } from '../tenant-binding.js';
import { mcpTaskPrefix, type McpAgent } from './mcp-agents.js';
import { listCallersTasks } from './mcp-task-list.js';
import { readTask, toolResultFrom } from './mcp-task-view.js';

/** How long a cancel waits for the turn to end before answering with the task as it then is. */
const CANCEL_WAIT_MS = 30_000;

export interface TurnTaskStoreOptions {
  routes: RouteContext;
  caller: Caller;
  agents: Record<string, McpAgent>;
  pollIntervalMs: number;
}

export class TurnTaskStore implements TaskStore {
  constructor(private readonly options: TurnTaskStoreOptions) {}

  async createTask(_params: CreateTaskOptions, _requestId: RequestId, request: Request): Promise<Task> {
    const { routes, caller, agents } = this.options;
    const params = request.params as { name: string; arguments?: { prompt?: unknown } };
    const agent = Object.hasOwn(agents, params.name) ? agents[params.name]! : undefined;
    if (!agent) throw new Error(`No agent ${JSON.stringify(params.name)} is served here`);
    const prompt = params.arguments?.prompt;
    if (typeof prompt !== 'string' || prompt.trim() === '') throw new Error('prompt must be a non-empty string');
    const placement = requestPlacement(caller, routes.access.isAdmin(caller), {});
    if (typeof placement === 'string') throw new Error(placement);
    const { model, system, tools, maxSteps, approvalTimeout, output } = agent;
    const turnId = `${mcpTaskPrefix(params.name)}${randomUUID()}`;
    const input = {
      model,
      messages: [{ role: 'user' as const, content: prompt }],
      ...(system !== undefined ? { system } : {}),
      ...(tools !== undefined ? { tools } : {}),
      ...(maxSteps !== undefined ? { maxSteps } : {}),
      ...(approvalTimeout !== undefined ? { approvalTimeout } : {}),
      ...(output !== undefined ? { output } : {}),
    };
    await routes.client.startTurn(input, { turnId, startedBy: caller.identity, ...placement });
    const now = new Date().toISOString();
    return { taskId: turnId, status: 'working', createdAt: now, lastUpdatedAt: now, ttl: null, pollInterval: this.options.pollIntervalMs };
  }

  async getTask(taskId: string): Promise<Task | null> {
    if (!(await this.readable(taskId))) return null;
    try {
      return await readTask(this.options.routes.client, taskId, this.options.pollIntervalMs);
    } catch (error) {
      if (error instanceof TurnpikeNotFoundError) return null;
      throw error;
    }
  }

  async getTaskResult(taskId: string): Promise<Result> {
    if (!(await this.readable(taskId))) throw new Error(`Task not found: ${taskId}`);
    return toolResultFrom(taskId, await this.options.routes.client.turnResult(taskId));
  }

  async storeTaskResult(): Promise<void> {
    throw new Error('A task\'s result is its turn\'s answer: nothing is stored beside it');
  }

  async updateTaskStatus(taskId: string, status: Task['status']): Promise<void> {
    // The only change a client asks for is a cancel; a turn's other states are its own.
    if (status !== 'cancelled') return;
    if (!(await this.readable(taskId))) throw new Error(`Task not found: ${taskId}`);
    const { client } = this.options.routes;
    await client.turn(taskId).cancel();
    await waitForEnd(this.options.routes, taskId, AbortSignal.timeout(CANCEL_WAIT_MS)).catch(() => undefined);
  }

  async listTasks(cursor?: string): Promise<{ tasks: Task[]; nextCursor?: string }> {
    if (cursor !== undefined) throw new Error('tasks/list answers in one page: it takes no cursor');
    return { tasks: await listCallersTasks(this.options.routes, this.options.caller, Object.keys(this.options.agents), this.options.pollIntervalMs) };
  }

  /** Only ids of this endpoint's agents, of turns the caller may read. */
  private async readable(taskId: string): Promise<boolean> {
    if (!Object.keys(this.options.agents).some((name) => taskId.startsWith(mcpTaskPrefix(name)))) return false;
    return this.options.routes.access.mayReadTurn(this.options.caller, taskId);
  }
}

/** Awaits the turn's end, or rejects when `signal` aborts (the gRPC call is cancelled with it). */
export async function waitForEnd(routes: RouteContext, turnId: string, signal: AbortSignal) {
  return routes.client.client.connection.withAbortSignal(signal, () => routes.client.turnResult(turnId));
}
