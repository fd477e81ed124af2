/**
 * turnpike's named agents as MCP tools with Tasks, over Streamable HTTP at `/api/mcp`, on the
 * official `@modelcontextprotocol/sdk` (an optional peer). The endpoint is stateless: each POST
 * gets its own SDK `Server` and transport, with a task store made for that request's caller
 * (api/mcp/turn-task-store.ts), so any API process answers any request and nothing of a task lives
 * in a process. The caller is authenticated by the API's own hook, as for every `/api/` route.
 *
 * - `tools/list`: one tool per agent, taking `{ prompt: string }`, `execution.taskSupport: 'optional'`.
 * - `tools/call` with a task: starts the turn and answers the task at once.
 * - `tools/call` without one: starts the turn and waits for it, at most `plainCallTimeoutMs`;
 *   past that, or when the client cancels, it answers an error naming the task, which goes on.
 * - `tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel`: the SDK's handlers over the store.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Caller } from '../auth.js';
import { zodRoutes, type ApiApp, type RouteContext } from '../route-context.js';
import { DEFAULT_PLAIN_CALL_TIMEOUT_MS, DEFAULT_TASK_POLL_INTERVAL_MS, MCP_PATH, type McpOptions } from './mcp-agents.js';
import { toolResultFrom } from './mcp-task-view.js';
import { TurnTaskStore, waitForEnd } from './turn-task-store.js';

const PROMPT_SCHEMA: Tool['inputSchema'] = {
  type: 'object',
  properties: { prompt: { type: 'string', minLength: 1, description: 'What the agent is asked to do' } },
  required: ['prompt'],
};

export function registerMcpRoute(app: ApiApp, routes: RouteContext, options: McpOptions): void {
  const api = zodRoutes(app);
  api.post(MCP_PATH, async (request, reply) => serve(routes, options, request, reply));
  // Stateless: no stream outside a request and no session to end (the transport's own answer to both).
  const notAllowed = async (_request: FastifyRequest, reply: FastifyReply) => reply.status(405).header('allow', 'POST').send({ jsonrpc: '2.0', error: { code: ErrorCode.ConnectionClosed, message: 'Method not allowed: this MCP endpoint is stateless and takes POST only' }, id: null });
  api.get(MCP_PATH, notAllowed);
  api.delete(MCP_PATH, notAllowed);
}

async function serve(routes: RouteContext, options: McpOptions, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const server = mcpServer(routes, options, request.caller!);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  reply.hijack();
  reply.raw.on('close', () => {
    void transport.close();
    void server.close();
  });
  try {
    await server.connect(transport);
    await transport.handleRequest(request.raw, reply.raw, request.body);
  } catch (error) {
    request.log.error(error);
    if (!reply.raw.headersSent) reply.raw.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: ErrorCode.InternalError, message: 'turnpike could not complete the request' }, id: null }));
  }
}

function mcpServer(routes: RouteContext, options: McpOptions, caller: Caller): Server {
  const pollIntervalMs = options.pollIntervalMs ?? DEFAULT_TASK_POLL_INTERVAL_MS;
  const taskStore = new TurnTaskStore({ routes, caller, agents: options.agents, pollIntervalMs });
  const server = new Server(
    { name: 'turnpike', version: '1.0.0' },
    { capabilities: { tools: {}, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } }, taskStore, defaultTaskPollInterval: pollIntervalMs },
  );
  const tools: Tool[] = Object.entries(options.agents).map(([name, agent]) => ({ name, description: agent.description, inputSchema: PROMPT_SCHEMA, execution: { taskSupport: 'optional' } }));
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    if (!Object.hasOwn(options.agents, request.params.name)) throw new McpError(ErrorCode.InvalidParams, `Tool ${request.params.name} not found`);
    const prompt = request.params.arguments?.prompt;
    if (typeof prompt !== 'string' || prompt.trim() === '') throw new McpError(ErrorCode.InvalidParams, 'Invalid arguments: prompt must be a non-empty string');
    const task = await extra.taskStore!.createTask({});
    if (request.params.task) return { task };
    return plainCall(routes, task.taskId, options.plainCallTimeoutMs ?? DEFAULT_PLAIN_CALL_TIMEOUT_MS, extra.signal);
  });
  return server;
}

/** A call without a task: the turn's answer once it ends, or, past the bound or a client's cancel, an error naming the task. */
async function plainCall(routes: RouteContext, turnId: string, timeoutMs: number, cancelled: AbortSignal): Promise<CallToolResult> {
  const bounded = AbortSignal.any([cancelled, AbortSignal.timeout(timeoutMs)]);
  try {
    return toolResultFrom(turnId, await waitForEnd(routes, turnId, bounded));
  } catch (error) {
    if (!bounded.aborted) throw error;
    const text = `The turn has not ended after ${timeoutMs} ms and goes on: read it as task ${turnId} (tasks/get, tasks/result) or GET /api/turns/${turnId}.`;
    return { content: [{ type: 'text', text }], isError: true, _meta: { 'turnpike/turn': { turnId } } };
  }
}
