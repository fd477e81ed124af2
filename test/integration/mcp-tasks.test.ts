/**
 * turnpike's named agents as MCP tools with Tasks, driven only by `@modelcontextprotocol/sdk`'s
 * own client (`Client` + `StreamableHTTPClientTransport`, its experimental tasks API) over real
 * HTTP: a task is a turn on the dev server. A task returned at once and read working, then its
 * result; an approval shown in a working task's status message and decided through turnpike; a
 * result read from a new API instance after the first closed; cancel; the protocol's errors; a
 * plain call without a task; the caller's task listing.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, ErrorCode, McpError, type CallToolResult, type Task } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineTool } from '../../index.js';
import { parseTokenMap } from '../../api/auth.js';
import { serveApi, type ServedApi } from '../support/api-server.js';
import { executionsOf, testTools, use } from '../support/test-tools.js';
import { startTurnpike, type TurnpikeHarness } from '../support/turnpike-harness.js';

/** Calls of `held_action` wait until the test releases their `key`. */
const releases = new Map<string, () => void>();
const held = new Map<string, Promise<void>>();
function gate(key: string): Promise<void> {
  if (!held.has(key)) held.set(key, new Promise((resolve) => releases.set(key, resolve)));
  return held.get(key)!;
}
function release(key: string): void {
  void gate(key);
  releases.get(key)!();
}
const heldAction = defineTool({
  name: 'held_action',
  description: 'Waits until the test releases it.',
  inputSchema: z.object({ key: z.string().min(1) }),
  async execute({ key }) {
    await gate(key);
    return { released: key };
  },
});

const apiOptions = {
  tokens: parseTokenMap('alice-token:alice,bob-token:bob'),
  mcp: {
    agents: {
      desk: { description: 'Acts on orders; some actions wait for a person', model: { provider: 'scripted' as const, model: 'demo' }, tools: ['record_action', 'guarded_action', 'held_action', 'pick_colour'] },
      reporter: { description: 'Answers with a typed report', model: { provider: 'scripted' as const, model: 'demo' }, tools: [], output: { schema: z.object({ total: z.number() }) } },
    },
    pollIntervalMs: 200,
  },
};

let turnpike: TurnpikeHarness;
let served: ServedApi;
const opened: Client[] = [];

async function connect(token: string, api: ServedApi = served): Promise<Client> {
  const client = new Client({ name: 'mcp-tasks-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${api.base}/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  opened.push(client);
  await client.listTools(); // the client learns which tools take tasks
  return client;
}

beforeAll(async () => {
  turnpike = await startTurnpike({ tools: [...testTools, heldAction] });
  served = await serveApi(turnpike, apiOptions);
});
afterAll(async () => {
  for (const release of releases.values()) release();
  for (const client of opened) await client.close().catch(() => undefined);
  await served?.api.close();
  await turnpike?.stop();
});

/** A task-augmented call: the first message of the SDK's stream is the task it created. */
async function startTask(client: Client, name: string, prompt: string): Promise<Task> {
  const stream = client.experimental.tasks.callToolStream({ name, arguments: { prompt } });
  const first = await stream.next();
  await stream.return(undefined);
  expect(first.value?.type).toBe('taskCreated');
  return (first.value as { task: Task }).task;
}

/** Reads the task through the SDK until `done` holds (each read a round trip; no clock involved). */
async function readUntil(client: Client, taskId: string, done: (task: Task) => boolean): Promise<Task> {
  for (let read = 0; read < 600; read++) {
    const task = await client.experimental.tasks.getTask(taskId);
    if (done(task)) return task;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`task ${taskId} never reached the expected state`);
}

const textOf = (result: CallToolResult) => result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
const resultOf = async (client: Client, taskId: string) => (await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)) as CallToolResult;

async function refusal(work: Promise<unknown>): Promise<McpError> {
  const error = await work.then(() => undefined, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(McpError);
  return error as McpError;
}

describe('MCP tools with Tasks', () => {
  it('lists each agent as a tool taking a prompt, with optional task support', async () => {
    const alice = await connect('alice-token');
    const { tools } = await alice.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(['desk', 'reporter']);
    expect(tools[0]!.execution?.taskSupport).toBe('optional');
    expect(tools[0]!.inputSchema.required).toEqual(['prompt']);
  });

  it('answers a task-augmented call with a task at once, reads it working, then fetches the result', async () => {
    const alice = await connect('alice-token');
    const task = await startTask(alice, 'desk', use('held_action', { key: 'first' }));
    expect(task.status).toBe('working');
    expect(task.taskId).toMatch(/^mcp-desk-/);
    // The tool waits for the test: the turn is running, and the task says so.
    expect((await alice.experimental.tasks.getTask(task.taskId)).status).toBe('working');
    expect((await served.client.turnState(task.taskId)).status).toBe('running');
    release('first');
    const result = await resultOf(alice, task.taskId);
    expect(result.isError).toBeUndefined();
    expect(textOf(result)).toContain('first');
    expect((await alice.experimental.tasks.getTask(task.taskId)).status).toBe('completed');
    // The task is the turn.
    const turn = await served.client.turnResult(task.taskId);
    expect(turn.status).toBe('completed');
    expect(textOf(result)).toBe(turn.text);
  });

  it('shows a parked approval as working with a message naming the call and its approvers; decided through turnpike, the task completes with the tool result', async () => {
    const alice = await connect('alice-token');
    const task = await startTask(alice, 'desk', use('guarded_action', { target: 'mcp-desk', count: 2 }));
    const parked = await readUntil(alice, task.taskId, (read) => read.statusMessage !== undefined);
    expect(parked.status).toBe('working');
    expect(parked.statusMessage).toMatch(/guarded_action \(call [^)]+\) waits for approval from alice or bob until /);
    const pending = (await served.client.turnState(task.taskId)).pending[0]!;
    expect(parked.statusMessage).toContain(pending.toolCallId);
    await served.client.approveToolCall(task.taskId, { approvalId: pending.approvalId!, approved: true, approver: 'bob', inputHash: pending.inputHash });
    const result = await resultOf(alice, task.taskId);
    expect(textOf(result)).toContain('mcp-desk');
    expect(executionsOf(task.taskId).map((execution) => execution.toolName)).toEqual(['guarded_action']);
    const done = await alice.experimental.tasks.getTask(task.taskId);
    expect(done.status).toBe('completed');
    expect(done.statusMessage).toBeUndefined();
  });

  it('shows a client tool waiting for the user as input_required with the call in its message; its result sent through turnpike completes the task', async () => {
    const alice = await connect('alice-token');
    const task = await startTask(alice, 'desk', use('pick_colour', { options: ['red', 'blue'] }));
    const parked = await readUntil(alice, task.taskId, (read) => read.statusMessage !== undefined);
    expect(parked.status).toBe('input_required');
    const pending = (await served.client.turnState(task.taskId)).pending[0]!;
    expect(parked.statusMessage).toContain(`pick_colour (call ${pending.toolCallId}) waits for the client's result`);
    await served.client.submitToolResult(task.taskId, { toolCallId: pending.toolCallId, output: { colour: 'blue' } });
    expect(textOf(await resultOf(alice, task.taskId))).toContain('blue');
    expect((await alice.experimental.tasks.getTask(task.taskId)).status).toBe('completed');
  });

  it('fetches the result from a new API instance after the one that created the task closed', async () => {
    const first = await serveApi(turnpike, apiOptions);
    const before = await connect('alice-token', first);
    const task = await startTask(before, 'desk', use('held_action', { key: 'restart' }));
    await before.close();
    await first.api.close();
    release('restart');
    const second = await serveApi(turnpike, apiOptions);
    try {
      const after = await connect('alice-token', second);
      const result = await resultOf(after, task.taskId);
      expect(textOf(result)).toContain('restart');
      expect((await after.experimental.tasks.getTask(task.taskId)).status).toBe('completed');
    } finally {
      await second.api.close();
    }
  });

  it('cancels the turn: the task and the turn end cancelled, and the parked tool never runs', async () => {
    const alice = await connect('alice-token');
    const task = await startTask(alice, 'desk', use('guarded_action', { target: 'cancel-me', count: 1 }));
    await readUntil(alice, task.taskId, (read) => read.statusMessage !== undefined);
    const cancelled = await alice.experimental.tasks.cancelTask(task.taskId);
    expect(cancelled.status).toBe('cancelled');
    expect((await served.client.turnResult(task.taskId)).status).toBe('cancelled');
    expect((await alice.experimental.tasks.getTask(task.taskId)).status).toBe('cancelled');
    expect(executionsOf(task.taskId)).toEqual([]);
    // A task that ended cannot be cancelled again: the SDK's own error.
    expect((await refusal(alice.experimental.tasks.cancelTask(task.taskId))).code).toBe(ErrorCode.InvalidParams);
  });

  it('answers unknown task ids, turns not started here and other callers\' tasks with the protocol\'s error', async () => {
    const alice = await connect('alice-token');
    const bob = await connect('bob-token');
    const unknown = await refusal(alice.experimental.tasks.getTask('mcp-desk-no-such-task'));
    expect(unknown.code).toBe(ErrorCode.InvalidParams);
    expect(unknown.message).toContain('Task not found');
    // A turn alice started through the HTTP API, not through this endpoint, is no MCP task.
    const other = await turnpike.startTurn({ text: use('record_action', { action: 'not-mcp' }), startedBy: 'alice' });
    expect((await refusal(alice.experimental.tasks.getTask(other.workflowId))).code).toBe(ErrorCode.InvalidParams);
    // alice's task, asked for by bob.
    const task = await startTask(alice, 'desk', use('record_action', { action: 'alice-only' }));
    expect((await refusal(bob.experimental.tasks.getTask(task.taskId))).code).toBe(ErrorCode.InvalidParams);
    expect((await refusal(bob.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema))).code).toBe(ErrorCode.InvalidParams);
    expect((await refusal(bob.experimental.tasks.cancelTask(task.taskId))).code).toBe(ErrorCode.InvalidParams);
    expect(textOf(await resultOf(alice, task.taskId))).toContain('alice-only');
    // An unknown tool and a call without a prompt are refused by the protocol's error too.
    expect((await refusal(alice.callTool({ name: 'nobody', arguments: { prompt: 'hello' } }))).code).toBe(ErrorCode.InvalidParams);
    const noPrompt = (await alice.experimental.tasks.callToolStream({ name: 'desk', arguments: {} }).next()).value;
    expect(noPrompt?.type).toBe('error');
    expect((noPrompt as { error: McpError }).error.code).toBe(ErrorCode.InvalidParams);
  });

  it('answers a call without a task with the turn\'s text, and a typed answer as structured content', async () => {
    const alice = await connect('alice-token');
    const plain = (await alice.callTool({ name: 'desk', arguments: { prompt: use('record_action', { action: 'plain-call' }) } })) as CallToolResult;
    expect(plain.isError).toBeUndefined();
    expect(textOf(plain)).toContain('plain-call');
    const typed = (await alice.callTool({ name: 'reporter', arguments: { prompt: 'answer with {"total": 3}' } })) as CallToolResult;
    expect(typed.structuredContent).toEqual({ total: 3 });
  });

  it('answers a call without a task whose turn outlasts the bound with an error naming the task, which goes on and stays readable', async () => {
    const bounded = await serveApi(turnpike, { ...apiOptions, mcp: { ...apiOptions.mcp, plainCallTimeoutMs: 500 } });
    try {
      const alice = await connect('alice-token', bounded);
      // The tool is held until after the answer: the turn cannot have ended by then.
      const answer = (await alice.callTool({ name: 'desk', arguments: { prompt: use('held_action', { key: 'bounded' }) } })) as CallToolResult;
      expect(answer.isError).toBe(true);
      const taskId = /read it as task (\S+) /.exec(textOf(answer))?.[1];
      expect(taskId).toMatch(/^mcp-desk-/);
      expect((await alice.experimental.tasks.getTask(taskId!)).status).toBe('working');
      release('bounded');
      expect(textOf(await resultOf(alice, taskId!))).toContain('bounded');
    } finally {
      await bounded.api.close();
    }
  });

  it('lists the caller\'s own tasks', async () => {
    const alice = await connect('alice-token');
    const bob = await connect('bob-token');
    const mine = await startTask(bob, 'desk', use('record_action', { action: 'bob-listed' }));
    await resultOf(bob, mine.taskId);
    // The listing is Temporal's visibility, which follows the turn a moment behind: read until it shows the end.
    let listed: Task | undefined;
    for (let read = 0; read < 300 && listed?.status !== 'completed'; read++) {
      if (read > 0) await new Promise((resolve) => setTimeout(resolve, 100));
      listed = (await bob.experimental.tasks.listTasks()).tasks.find((task) => task.taskId === mine.taskId);
    }
    expect(listed?.status).toBe('completed');
    expect((await alice.experimental.tasks.listTasks()).tasks.map((task) => task.taskId)).not.toContain(mine.taskId);
  });

  it('refuses a caller the API does not know before any MCP message is read', async () => {
    const stranger = new Client({ name: 'mcp-tasks-test', version: '1.0.0' });
    const error = await stranger.connect(new StreamableHTTPClientTransport(new URL(`${served.base}/api/mcp`), { requestInit: { headers: { authorization: 'Bearer nobody' } } })).then(() => undefined, (caught: unknown) => caught as Error);
    expect(error).toBeDefined();
    expect(String(error)).toMatch(/401|Unauthorized/);
  });
});
