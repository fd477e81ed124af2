/**
 * MCP servers as tool sources, end to end: a real Temporal dev server, a real Worker, the real
 * OpenAI SDK against the strict fake provider, and real MCP servers — the reference servers
 * `@modelcontextprotocol/server-everything` (over stdio and over streamable HTTP) and
 * `@modelcontextprotocol/server-filesystem` (stdio; its write tools are destructive-annotated),
 * watched from the server's side of the pipe by a tap (test/support/mcp-stdio-tap.mjs: the
 * processes started, the messages received), and a small server built with the official SDK
 * (test/support/mcp-test-server.ts) for what no reference server can show: a tool list that
 * changes while a turn runs, `_meta` and cancellation as the server's handler sees them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { McpServerConfig } from '../../activities/mcp/mcp-servers.js';
import { runCli } from '../../cli/main.js';
import { TurnpikeClient, type ParkedCall } from '../../client/turnpike-client.js';
import { MCP_IDEMPOTENCY_KEY_META } from '../../activities/mcp/mcp-tool-source.js';
import { approveToolCallUpdate, awaitElicitationAnswerUpdate, submitToolResultUpdate } from '../../workflows/messages/definitions.js';
import { MAX_AWAITING_ANSWERS } from '../../workflows/calls/elicitations.js';
import type { agentTurn } from '../../workflows/index.js';
import { useFakeProviders } from '../support/fake-providers.js';
import { startMcpTestServer, type McpTestServer } from '../support/mcp-test-server.js';
import { startTurnpike, waitForPending, waitForState, type TurnpikeHarness } from '../support/turnpike-harness.js';

const require = createRequire(import.meta.url);
const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
const FILESYSTEM = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js');
const TAP = fileURLToPath(new URL('../support/mcp-stdio-tap.mjs', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'turnpike-mcp-'));

/** What a tapped stdio server saw: one pid per process started, and each message it received. */
interface TapMessage {
  pid: number;
  in: { id?: number | string; method?: string; params?: { name?: string; requestId?: number | string; _meta?: Record<string, unknown> } };
}

let taps = 0;
/** A stdio server started through the tap, logging to a fresh file. */
function tapped(command: string, args: string[]): { config: { command: string; args: string[] }; log: string } {
  const log = join(scratch, `tap-${++taps}.jsonl`);
  writeFileSync(log, '');
  return { config: { command: process.execPath, args: [TAP, log, command, ...args] }, log };
}

function readTap(log: string): { starts: number[]; messages: TapMessage[] } {
  const lines = readFileSync(log, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as { start?: number } & Partial<TapMessage>);
  return { starts: lines.flatMap((line) => (line.start !== undefined ? [line.start] : [])), messages: lines.filter((line): line is TapMessage => line.in !== undefined) };
}

/** The `tools/call` requests of one turn (by the idempotency key in `_meta`), as the server received them. */
function callsOfTurn(log: string, workflowId: string): TapMessage[] {
  return readTap(log).messages.filter((message) => message.in.method === 'tools/call' && String(message.in.params?._meta?.[MCP_IDEMPOTENCY_KEY_META]).startsWith(`${workflowId}/`));
}

async function eventuallyAsync<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  let value = await read();
  for (let attempt = 0; attempt < 200 && !done(value); attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    value = await read();
  }
  return value;
}

async function eventually<T>(read: () => T, done: (value: T) => boolean): Promise<T> {
  let value = read();
  for (let attempt = 0; attempt < 200 && !done(value); attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    value = read();
  }
  return value;
}

let fake: Awaited<ReturnType<typeof useFakeProviders>>;
let notes: McpTestServer;
let httpEverything: ChildProcess;
let httpEverythingUrl: string;
const harnesses: TurnpikeHarness[] = [];

function decodeAttempt(data: Uint8Array): number {
  return (JSON.parse(Buffer.from(data).toString()) as { attempt: number }).attempt;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function startHttpEverything(): Promise<void> {
  const port = await freePort();
  httpEverything = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  // It says so on stderr once it listens.
  await new Promise<void>((resolve, reject) => {
    let seen = '';
    httpEverything.stderr!.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes('listening on port')) resolve();
    });
    httpEverything.once('exit', (code) => reject(new Error(`server-everything exited (${code}): ${seen}`)));
  });
  httpEverythingUrl = `http://127.0.0.1:${port}/mcp`;
}

const everythingOptions = {
  tools: { 'trigger-long-running-operation': { activityOptions: { startToCloseTimeout: '5m', heartbeatTimeout: '5s' } } },
} satisfies Partial<McpServerConfig>;

beforeAll(async () => {
  fake = await useFakeProviders();
  notes = await startMcpTestServer();
  await startHttpEverything();
});

afterAll(async () => {
  // The child server first: a harness that fails to stop must not leave it running.
  httpEverything?.kill();
  try {
    for (const harness of harnesses) await harness.stop();
  } finally {
    await notes?.close();
    await fake?.restore();
  }
});

beforeEach(() => fake.reset());

async function turnpikeWith(mcpServers: Record<string, McpServerConfig>): Promise<TurnpikeHarness> {
  const harness = await startTurnpike({ tools: [], mcpServers });
  harnesses.push(harness);
  return harness;
}

function startOpenAITurn(harness: TurnpikeHarness, text: string, tools?: string[]): Promise<WorkflowHandle<typeof agentTurn>> {
  return harness.startTurn({
    model: { provider: 'openai', model: 'gpt-4.1-mini' },
    text,
    ...(tools ? { tools } : {}),
    modelCallOptions: { retry: { initialInterval: '50ms', backoffCoefficient: 1, maximumAttempts: 3 } },
  });
}

function openaiRequests() {
  return fake.requests.filter((request) => request.provider === 'openai');
}

function offeredTools(index: number): string[] {
  return (openaiRequests()[index].body.tools ?? []).map((tool: { function: { name: string } }) => tool.function.name);
}

const everythingTap = tapped(process.execPath, [EVERYTHING, 'stdio']);

describe.each([
  ['stdio', () => ({ ...everythingTap.config, ...everythingOptions })],
  ['streamable HTTP', () => ({ url: httpEverythingUrl, ...everythingOptions })],
] as const)('server-everything over %s', (transport, config) => {
  let turnpike: TurnpikeHarness;
  beforeAll(async () => {
    turnpike = await turnpikeWith({ everything: config() });
  });

  it('offers its tools under the server prefix, runs echo and get-sum as activities, and the model gets their results', async () => {
    fake.script('openai', [
      { toolCalls: [{ name: 'everything__echo', input: { message: 'hello mcp' } }, { name: 'everything__get-sum', input: { a: 2, b: 3 } }] },
      { text: 'Echoed and added.' },
    ]);
    const handle = await startOpenAITurn(turnpike, 'echo and add');
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'completed', text: 'Echoed and added.', steps: 2 });
    expect(result.toolCalls.map((call) => [call.toolName, call.outcome])).toEqual([
      ['everything__echo', 'executed'],
      ['everything__get-sum', 'executed'],
    ]);
    expect(offeredTools(0)).toEqual(expect.arrayContaining(['everything__echo', 'everything__get-sum', 'everything__trigger-long-running-operation']));
    expect(openaiRequests().flatMap((request) => request.errors)).toEqual([]);
    const results = openaiRequests()[1].body.messages.filter((message: { role: string }) => message.role === 'tool').map((message: { content: string }) => message.content);
    expect(results.join('\n')).toContain('Echo: hello mcp');
    expect(results.join('\n')).toContain('The sum of 2 and 3 is 5.');
  });

  it('rejects input that fails the tool input schema before anything runs, and the model can correct it', async () => {
    fake.script('openai', [
      { toolCalls: [{ name: 'everything__get-sum', input: { a: 'two', b: 3 } }] },
      { toolCalls: [{ name: 'everything__get-sum', input: { a: 2, b: 3 } }] },
      { text: 'Fixed.' },
    ]);
    const result = await (await startOpenAITurn(turnpike, 'add')).result();
    expect(result.toolCalls.map((call) => call.outcome)).toEqual(['error', 'executed']);
    const firstResult = JSON.stringify(openaiRequests()[1].body.messages.at(-1));
    expect(firstResult).toContain('Invalid input for tool \\"everything__get-sum\\"');
    expect(firstResult).toContain('must be number');
  });

  it('two questions asked at once, by calls on connections of their own, park together and each answer reaches its own call', async () => {
    fake.script('openai', [
      { toolCalls: [{ name: 'everything__trigger-elicitation-request', input: {} }, { name: 'everything__trigger-elicitation-request', input: {} }] },
      { text: 'Both answered.' },
    ]);
    const handle = await startOpenAITurn(turnpike, 'ask us both', ['everything__trigger-elicitation-request']);
    const pending = await waitForPending(handle, 2);
    expect(pending.map((call) => call.kind)).toEqual(['elicitation', 'elicitation']);
    const names = ['Ada Lovelace', 'Grace Hopper'];
    for (const [index, call] of pending.entries()) {
      await handle.executeUpdate(submitToolResultUpdate, { args: [{ toolCallId: call.toolCallId, output: { action: 'accept', content: { name: names[index], email: `person${index}@example.com` } } }] });
    }
    const result = await handle.result();
    expect(result.toolCalls.map((call) => call.outcome)).toEqual(['executed', 'executed']);
    for (const [index, call] of pending.entries()) {
      const output = JSON.stringify(result.toolCalls.find((done) => done.toolCallId === call.toolCallId)!.output);
      expect(output).toContain(names[index]);
      expect(output).not.toContain(names[1 - index]);
    }
  });

  it('turns progress notifications of a long-running tool into heartbeats, and cancelling the turn ends it', async () => {
    fake.script('openai', [{ toolCalls: [{ name: 'everything__trigger-long-running-operation', input: { duration: 600, steps: 600 } }] }]);
    const handle = await startOpenAITurn(turnpike, 'run the long operation');
    let details: { progress: number; total: number } | undefined;
    for (let attempt = 0; attempt < 300 && !(details && details.progress >= 2); attempt++) {
      const { raw } = await handle.describe();
      const payload = raw.pendingActivities?.[0]?.heartbeatDetails?.payloads?.[0];
      if (payload?.data) details = JSON.parse(Buffer.from(payload.data).toString()) as typeof details;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(details).toMatchObject({ total: 600 });
    expect(details!.progress).toBeGreaterThanOrEqual(2);
    await handle.cancel();
    const result = await handle.result();
    expect(result.status).toBe('cancelled');
    // Ended as cancelled within this test's time limit (2 minutes), not after the operation's 10.
    expect(result.toolCalls.map((call) => call.outcome)).toEqual(['cancelled']);
    const events = (await handle.fetchHistory()).events!;
    const scheduled = events.find((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'executeTool')!;
    expect(events.some((event) => String(event.activityTaskCancelRequestedEventAttributes?.scheduledEventId) === String(scheduled.eventId))).toBe(true);
    if (transport !== 'stdio') return;
    // On the server's side of the pipe: the call's activity saw the cancellation and cancelled
    // the request by notifications/cancelled, on the connection (process) that received it. (Over HTTP this is checked on the test
    // server below; server-everything does not show what it received.)
    const [call] = callsOfTurn(everythingTap.log, handle.workflowId);
    expect(call.in.params?.name).toBe('trigger-long-running-operation');
    const cancels = await eventually(
      () => readTap(everythingTap.log).messages.filter((message) => message.in.method === 'notifications/cancelled' && message.in.params?.requestId === call.in.id && message.pid === call.pid),
      (found) => found.length > 0,
    );
    expect(cancels).toHaveLength(1);
  });
});

describe('a server whose side the test observes (official SDK McpServer over streamable HTTP)', () => {
  let turnpike: TurnpikeHarness;
  beforeAll(async () => {
    turnpike = await turnpikeWith({
      notes: {
        url: notes.url,
        tools: {
          wait_forever: { activityOptions: { heartbeatTimeout: '2s' } },
          count_stock: { approval: ({ item }) => (item === 'gold' ? { decision: 'denied', reason: 'gold is counted by hand' } : 'approved') },
        },
      },
    });
  });

  it('parks a destructive-annotated tool, and a denial reaches the model while the tool is never called; a read-only tool runs with the idempotency key in _meta', async () => {
    notes.calls.length = 0;
    fake.script('openai', [
      { toolCalls: [{ name: 'notes__read_note', input: { id: 'n1' } }, { name: 'notes__delete_note', input: { id: 'n1' } }] },
      { text: 'I could not delete it.' },
    ]);
    const handle = await startOpenAITurn(turnpike, 'read and delete note n1', ['notes__read_note', 'notes__delete_note']);
    const [pending] = await waitForPending(handle, 1);
    expect(pending).toMatchObject({ kind: 'approval', toolName: 'notes__delete_note', input: { id: 'n1' } });
    await handle.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: pending.approvalId!, approved: false, approver: 'alice', reason: 'notes are kept for audit' }] });
    const result = await handle.result();
    expect(result.toolCalls.map((call) => [call.toolName, call.outcome])).toEqual([
      ['notes__read_note', 'executed'],
      ['notes__delete_note', 'denied'],
    ]);
    expect(JSON.stringify(openaiRequests()[1].body.messages)).toContain('notes are kept for audit');
    expect(notes.calls.map((call) => call.tool)).toEqual(['read_note']);
    expect(notes.notes.get('n1')).toBe('buy milk');
    const readCall = result.toolCalls[0];
    expect(notes.calls[0].meta?.[MCP_IDEMPOTENCY_KEY_META]).toBe(`${handle.workflowId}/${readCall.toolCallId}`);
    // The listing, the validation and the call shared one connection: one HTTP session.
    expect(notes.sessionsOpened()).toBe(1);
  });

  it('cancelling the turn sends notifications/cancelled to the server', async () => {
    fake.script('openai', [{ toolCalls: [{ name: 'notes__wait_forever', input: {} }] }]);
    const before = notes.cancelled.length;
    const handle = await startOpenAITurn(turnpike, 'wait', ['notes__wait_forever']);
    await waitForState(handle, () => notes.calls.some((call) => call.tool === 'wait_forever' && String(call.meta?.[MCP_IDEMPOTENCY_KEY_META]).startsWith(handle.workflowId)));
    await handle.cancel();
    expect((await handle.result()).status).toBe('cancelled');
    for (let attempt = 0; attempt < 100 && notes.cancelled.length === before; attempt++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(notes.cancelled.length).toBe(before + 1);
    // It was stopped by the notification for that request, on its session (not by the session ending).
    const call = notes.received.find((message) => message.method === 'tools/call' && String((message.params?._meta as Record<string, unknown> | undefined)?.[MCP_IDEMPOTENCY_KEY_META]).startsWith(handle.workflowId))!;
    expect(notes.received.filter((message) => message.method === 'notifications/cancelled' && message.params?.requestId === call.id && message.session === call.session)).toHaveLength(1);
  });

  it('a tool-list change is seen by the next turn, not by the turn already running', async () => {
    fake.script('openai', [{ toolCalls: [{ name: 'notes__delete_note', input: { id: 'n2' } }] }, { text: 'Turn one done.' }, { text: 'Turn two done.' }]);
    const running = await startOpenAITurn(turnpike, 'delete note n2');
    const [pending] = await waitForPending(running, 1);
    expect(offeredTools(0)).not.toContain('notes__fresh_tool');
    notes.addTool('fresh_tool');
    // The next turn lists again and sees the new tool; started now, it runs while the first is parked.
    const next = await startOpenAITurn(turnpike, 'what can you do?');
    expect((await next.result()).text).toBe('Turn one done.');
    expect(offeredTools(1)).toContain('notes__fresh_tool');
    await running.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: pending.approvalId!, approved: true, approver: 'alice' }] });
    expect((await running.result()).text).toBe('Turn two done.');
    // The running turn's second model call offered the tools it started with.
    expect(offeredTools(2)).toEqual(offeredTools(0));
    expect(offeredTools(2)).not.toContain('notes__fresh_tool');
  });

  it('applies a policy function to the validated input, returns structured content, and an isError result reaches the model as an error', async () => {
    notes.calls.length = 0;
    fake.script('openai', [
      {
        toolCalls: [
          { name: 'notes__count_stock', input: { item: 'bolts' } },
          { name: 'notes__count_stock', input: { item: 'gold' } },
          { name: 'notes__reach_warehouse', input: {} },
        ],
      },
      { text: 'Counted what I could.' },
    ]);
    const handle = await startOpenAITurn(turnpike, 'count stock', ['notes__count_stock', 'notes__reach_warehouse']);
    const result = await handle.result();
    expect(result.toolCalls.map((call) => call.outcome)).toEqual(['approved', 'denied', 'error']);
    expect(result.toolCalls[0]).toMatchObject({ output: { item: 'bolts', count: 5 } });
    expect(notes.calls.map((call) => call.tool).sort()).toEqual(['count_stock', 'reach_warehouse']);
    const toolMessages = openaiRequests()[1].body.messages.filter((message: { role: string }) => message.role === 'tool');
    expect(toolMessages.map((message: { content: string }) => message.content)).toEqual([
      expect.stringContaining('"count":5'),
      expect.stringContaining('gold is counted by hand'),
      expect.stringContaining('the warehouse is offline'),
    ]);
  });
});

describe('server-filesystem over stdio (destructive-annotated tools)', () => {
  let turnpike: TurnpikeHarness;
  let files: string;
  beforeAll(async () => {
    files = mkdtempSync(join(scratch, 'files-'));
    writeFileSync(join(files, 'plan.txt'), 'keep this plan\n');
    turnpike = await turnpikeWith({ fs: { command: process.execPath, args: [FILESYSTEM, files] } });
  });

  it('parks write_file and move_file by their destructiveHint, a denial reaches the model, and the files on disk are untouched; read_text_file runs at once', async () => {
    fake.script('openai', [
      {
        toolCalls: [
          { name: 'fs__read_text_file', input: { path: join(files, 'plan.txt') } },
          { name: 'fs__write_file', input: { path: join(files, 'plan.txt'), content: 'overwritten' } },
          { name: 'fs__move_file', input: { source: join(files, 'plan.txt'), destination: join(files, 'moved.txt') } },
        ],
      },
      { text: 'I left the plan alone.' },
    ]);
    const handle = await startOpenAITurn(turnpike, 'rewrite and move the plan');
    const pending = await waitForPending(handle, 2);
    expect(pending.map((call) => [call.kind, call.toolName])).toEqual([
      ['approval', 'fs__write_file'],
      ['approval', 'fs__move_file'],
    ]);
    for (const call of pending) {
      await handle.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: call.approvalId!, approved: false, approver: 'alice', reason: 'the plan is frozen until Friday' }] });
    }
    const result = await handle.result();
    expect(result.toolCalls.map((call) => [call.toolName, call.outcome])).toEqual([
      ['fs__read_text_file', 'executed'],
      ['fs__write_file', 'denied'],
      ['fs__move_file', 'denied'],
    ]);
    expect(result.toolCalls[0].output).toEqual({ content: 'keep this plan\n' });
    const toolMessages = openaiRequests()[1].body.messages.filter((message: { role: string }) => message.role === 'tool').map((message: { content: string }) => message.content);
    expect(toolMessages[1]).toContain('the plan is frozen until Friday');
    expect(toolMessages[2]).toContain('the plan is frozen until Friday');
    // The server's side: nothing was written or moved.
    expect(readFileSync(join(files, 'plan.txt'), 'utf8')).toBe('keep this plan\n');
    expect(existsSync(join(files, 'moved.txt'))).toBe(false);
  });

  it('an approved write_file runs on the server and the file is on disk', async () => {
    fake.script('openai', [{ toolCalls: [{ name: 'fs__write_file', input: { path: join(files, 'notes.txt'), content: 'approved note' } }] }, { text: 'Written.' }]);
    const handle = await startOpenAITurn(turnpike, 'write a note', ['fs__write_file']);
    const [pending] = await waitForPending(handle, 1);
    await handle.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: pending.approvalId!, approved: true, approver: 'alice' }] });
    const result = await handle.result();
    expect(result.toolCalls.map((call) => call.outcome)).toEqual(['approved']);
    expect(readFileSync(join(files, 'notes.txt'), 'utf8')).toBe('approved note');
  });
});

describe('a server limited to one connection (server-everything over stdio, maxConnections: 1)', () => {
  let turnpike: TurnpikeHarness;
  const tap = tapped(process.execPath, [EVERYTHING, 'stdio']);
  beforeAll(async () => {
    turnpike = await turnpikeWith({ solo: { ...tap.config, maxConnections: 1 } });
  });

  it('the second of two calls waits for the first one\'s connection: its question parks after the first is answered, on the same process', async () => {
    fake.script('openai', [
      { toolCalls: [{ name: 'solo__trigger-elicitation-request', input: {} }, { name: 'solo__trigger-elicitation-request', input: {} }] },
      { text: 'One after the other.' },
    ]);
    const handle = await startOpenAITurn(turnpike, 'ask twice', ['solo__trigger-elicitation-request']);
    const [first] = await waitForPending(handle, 1);
    await handle.executeUpdate(submitToolResultUpdate, { args: [{ toolCallId: first.toolCallId, output: { action: 'accept', content: { name: 'First Person', email: 'first@example.com' } } }] });
    const [second] = await waitForPending(handle, 1).then((pending) => pending.filter((call) => call.toolCallId !== first.toolCallId));
    expect(second).toBeDefined();
    await handle.executeUpdate(submitToolResultUpdate, { args: [{ toolCallId: second.toolCallId, output: { action: 'accept', content: { name: 'Second Person', email: 'second@example.com' } } }] });
    const result = await handle.result();
    expect(result.toolCalls.map((call) => call.outcome)).toEqual(['executed', 'executed']);
    expect(JSON.stringify(result.toolCalls.find((call) => call.toolCallId === first.toolCallId)!.output)).toContain('First Person');
    expect(JSON.stringify(result.toolCalls.find((call) => call.toolCallId === second.toolCallId)!.output)).toContain('Second Person');
    const { starts } = readTap(tap.log);
    expect(starts).toHaveLength(1);
    expect(callsOfTurn(tap.log, handle.workflowId).map((call) => call.pid)).toEqual([starts[0], starts[0]]);
  });
});

describe('elicitation and connections (server-everything over stdio, through the tap)', () => {
  let turnpike: TurnpikeHarness;
  const tap = tapped(process.execPath, [EVERYTHING, 'stdio']);
  beforeAll(async () => {
    // The restart test stops a worker whose call waits for an answer: it is cancelled after this.
    process.env.TURNPIKE_SHUTDOWN_GRACE_TIME = '1s';
    turnpike = await turnpikeWith({
      everything: { ...tap.config, tools: { 'trigger-elicitation-request': { activityOptions: { heartbeatTimeout: '3s' } } } },
    });
  });

  it('sequential calls, in one turn and the next, reuse one connection: one server process', async () => {
    fake.script('openai', [
      { toolCalls: [{ name: 'everything__echo', input: { message: 'one' } }] },
      { toolCalls: [{ name: 'everything__get-sum', input: { a: 1, b: 2 } }] },
      { text: 'Done once.' },
      { toolCalls: [{ name: 'everything__echo', input: { message: 'two' } }] },
      { text: 'Done twice.' },
    ]);
    const first = await startOpenAITurn(turnpike, 'echo, then add');
    expect((await first.result()).text).toBe('Done once.');
    const second = await startOpenAITurn(turnpike, 'echo again');
    expect((await second.result()).text).toBe('Done twice.');
    const { starts } = readTap(tap.log);
    expect(starts).toHaveLength(1);
    const calls = [...callsOfTurn(tap.log, first.workflowId), ...callsOfTurn(tap.log, second.workflowId)];
    expect(calls.map((call) => [call.in.params?.name, call.pid])).toEqual([
      ['echo', starts[0]],
      ['get-sum', starts[0]],
      ['echo', starts[0]],
    ]);
  });

  it('calls running at once each hold their own connection: three questions park together, each answer reaches its own call, by long poll or, beyond the limit, by polling', async () => {
    fake.script('openai', [
      {
        toolCalls: [
          { name: 'everything__trigger-elicitation-request', input: {} },
          { name: 'everything__trigger-elicitation-request', input: {} },
          { name: 'everything__trigger-elicitation-request', input: {} },
          { name: 'everything__echo', input: { message: 'meanwhile' } },
        ],
      },
      { text: 'All answered.' },
    ]);
    const handle = await startOpenAITurn(turnpike, 'ask us all', ['everything__trigger-elicitation-request', 'everything__echo']);
    const pending = await waitForPending(handle, 3);
    expect(pending.map((call) => call.kind)).toEqual(['elicitation', 'elicitation', 'elicitation']);
    expect(new Set(pending.map((call) => call.toolCallId)).size).toBe(3);
    // Two calls wait by the awaitElicitationAnswer update (a long poll); the turn refuses more.
    const awaits = async () =>
      (await handle.fetchHistory()).events!.filter((event) => event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'awaitElicitationAnswer').length;
    expect(await eventuallyAsync(awaits, (count) => count === MAX_AWAITING_ANSWERS)).toBe(MAX_AWAITING_ANSWERS);
    const refused = await handle.executeUpdate(awaitElicitationAnswerUpdate, { args: [pending[0].elicitationId!] }).then(
      () => undefined,
      (error: unknown) => (error as { cause?: Error }).cause,
    );
    expect(refused?.message).toContain('poll elicitationAnswer');

    const names = ['Ada Lovelace', 'Grace Hopper', 'Katherine Johnson'];
    for (const [index, call] of pending.entries()) {
      await handle.executeUpdate(submitToolResultUpdate, { args: [{ toolCallId: call.toolCallId, output: { action: 'accept', content: { name: names[index], email: `person${index}@example.com` } } }] });
    }
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'completed', text: 'All answered.' });
    expect(result.toolCalls.map((call) => call.outcome)).toEqual(['executed', 'executed', 'executed', 'executed']);
    for (const [index, call] of pending.entries()) {
      const output = JSON.stringify(result.toolCalls.find((done) => done.toolCallId === call.toolCallId)!.output);
      expect(output).toContain(names[index]);
      for (const other of names.filter((name) => name !== names[index])) expect(output).not.toContain(other);
    }
    // The third call, refused the long poll, got its answer by polling.
    expect(await awaits()).toBe(MAX_AWAITING_ANSWERS);
    expect(result.toolCalls[3].output).toBe('Echo: meanwhile');
    // On the server's side: the three questions, waiting together, came from three processes
    // (connections). The echo, over at once, may have had one to itself or reused one.
    const calls = callsOfTurn(tap.log, handle.workflowId);
    expect(calls).toHaveLength(4);
    const asking = calls.filter((call) => call.in.params?.name === 'trigger-elicitation-request');
    expect(new Set(asking.map((call) => call.pid)).size).toBe(3);

    // Afterwards a call reuses one of the connections that are open: no new process.
    const startsBefore = readTap(tap.log).starts;
    fake.script('openai', [{ toolCalls: [{ name: 'everything__echo', input: { message: 'after' } }] }, { text: 'Echoed.' }]);
    const after = await startOpenAITurn(turnpike, 'echo', ['everything__echo']);
    expect((await after.result()).text).toBe('Echoed.');
    expect(readTap(tap.log).starts).toEqual(startsBefore);
    expect(startsBefore).toContain(callsOfTurn(tap.log, after.workflowId)[0].pid);
  });

  it('parks the server question in turnState, rejects an answer that fails the requested schema, and the call completes with a valid answer', async () => {
    fake.script('openai', [{ toolCalls: [{ name: 'everything__trigger-elicitation-request', input: {} }] }, { text: 'Thanks for the details.' }]);
    const handle = await startOpenAITurn(turnpike, 'ask me for my details', ['everything__trigger-elicitation-request']);
    const [pending] = await waitForPending(handle, 1);
    expect(pending).toMatchObject({ kind: 'elicitation', toolName: 'everything__trigger-elicitation-request', message: 'Please provide inputs for the following fields:' });
    expect(pending.requestedSchema).toMatchObject({ type: 'object', properties: { email: { type: 'string', format: 'email' } } });
    expect((await handle.describe()).searchAttributes).toMatchObject({ AgentTurnStatus: ['awaiting-input'], AgentPendingTools: ['everything__trigger-elicitation-request'] });
    // Listed across turns like every parked call (what the CLI's `pending` and the HTTP API use); visibility is eventually consistent.
    const client = new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue });
    let listed: Awaited<ReturnType<TurnpikeClient['listParkedCalls']>> = [];
    for (let attempt = 0; attempt < 100 && listed.length === 0; attempt++) {
      listed = await client.listParkedCalls({ query: `WorkflowId="${handle.workflowId}" AND AgentTurnStatus="awaiting-input"` });
      if (listed.length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(listed).toMatchObject([{ kind: 'elicitation', toolCallId: pending.toolCallId, turnWorkflowId: handle.workflowId }]);

    const rejected = await handle
      .executeUpdate(submitToolResultUpdate, { args: [{ toolCallId: pending.toolCallId, output: { action: 'accept', content: { name: 'Ada', email: 'not an email' } } }] })
      .then(() => undefined, (error: unknown) => (error as { cause?: Error }).cause);
    expect(rejected).toMatchObject({ type: 'InvalidToolOutput' });
    expect(rejected?.message).toContain('does not fit the requested schema');
    expect(rejected?.message).toContain('email');
    expect((await waitForPending(handle, 1))[0].elicitationId).toBe(pending.elicitationId);

    await handle.executeUpdate(submitToolResultUpdate, { args: [{ toolCallId: pending.toolCallId, output: { action: 'accept', content: { name: 'Ada Lovelace', email: 'ada@example.com', check: true } } }] });
    const result = await handle.result();
    expect(result.status).toBe('completed');
    expect(result.toolCalls.map((call) => call.outcome)).toEqual(['executed']);
    const output = JSON.stringify(result.toolCalls[0].output);
    expect(output).toContain('Ada Lovelace');
    expect(output).toContain('ada@example.com');
  });

  it('the CLI lists a parked question with pending, as a table with the question and as JSON, and submit answers it', async () => {
    fake.script('openai', [{ toolCalls: [{ name: 'everything__trigger-elicitation-request', input: {} }] }, { text: 'Answered from the CLI.' }]);
    const handle = await startOpenAITurn(turnpike, 'ask me', ['everything__trigger-elicitation-request']);
    const [pending] = await waitForPending(handle, 1);
    const client = new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue });
    const cli = async (...argv: string[]) => {
      const run = { stdout: '', stderr: '' };
      const code = await runCli(argv, { client, stdout: { write: (chunk: string) => (run.stdout += chunk), isTTY: false }, stderr: { write: (chunk: string) => (run.stderr += chunk) } });
      expect(code, run.stderr).toBe(0);
      return run.stdout;
    };
    // Visibility is eventually consistent: the turn shows up as parked a moment after it parks.
    let listed: ParkedCall[] = [];
    for (let attempt = 0; attempt < 100 && !listed.some((call) => call.turnWorkflowId === handle.workflowId); attempt++) {
      listed = JSON.parse(await cli('pending', '--json')) as ParkedCall[];
      if (!listed.some((call) => call.turnWorkflowId === handle.workflowId)) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(listed.find((call) => call.turnWorkflowId === handle.workflowId)).toEqual({ ...pending, turnWorkflowId: handle.workflowId });

    const table = await cli('pending');
    for (const text of [handle.workflowId, pending.toolCallId, 'elicitation', 'everything__trigger-elicitation-request', 'question', 'Please provide inputs for the following fields:']) {
      expect(table).toContain(text);
    }
    // The hint is a command to copy, with a placeholder for each field the server asks for.
    const hint = table.split('\n').find((line) => line.includes(`turnpike submit ${handle.workflowId} ${pending.toolCallId}`));
    expect(hint).toContain('\'{"action":"accept","content":{"name":"<string>",');
    expect(hint).toContain('"email":"<string: email>"');
    expect(hint).toContain('(or \'{"action":"decline"}\')');

    let refusal = '';
    const refused = await runCli(['submit', handle.workflowId, pending.toolCallId, '{"action":"accept","content":{"name":"Ada","email":"nope"}}'], {
      client,
      stdout: { write: () => undefined, isTTY: false },
      stderr: { write: (chunk: string) => void (refusal += chunk) },
    });
    expect(refused).not.toBe(0);
    expect(refusal).toContain('email: not a valid email');
    await cli('submit', handle.workflowId, pending.toolCallId, '{"action":"accept","content":{"name":"Ada Lovelace","email":"ada@example.com"}}');
    const result = await handle.result();
    expect(result.text).toBe('Answered from the CLI.');
    expect(JSON.stringify(result.toolCalls[0].output)).toContain('Ada Lovelace');
  });

  it('a declined question reaches the server as a decline', async () => {
    fake.script('openai', [{ toolCalls: [{ name: 'everything__trigger-elicitation-request', input: {} }] }, { text: 'Understood.' }]);
    const handle = await startOpenAITurn(turnpike, 'ask me', ['everything__trigger-elicitation-request']);
    const [pending] = await waitForPending(handle, 1);
    await handle.executeUpdate(submitToolResultUpdate, { args: [{ toolCallId: pending.toolCallId, output: { action: 'decline' } }] });
    const result = await handle.result();
    expect(JSON.stringify(result.toolCalls[0].output).toLowerCase()).toContain('decline');
  });

  it('a question nobody answers expires as cancel, and the call goes on to its result', async () => {
    fake.script('openai', [{ toolCalls: [{ name: 'everything__trigger-elicitation-request', input: {} }] }, { text: 'Nobody answered.' }]);
    const handle = await turnpike.startTurn({
      model: { provider: 'openai', model: 'gpt-4.1-mini' },
      text: 'ask me',
      tools: ['everything__trigger-elicitation-request'],
      clientToolTimeout: '2s',
    });
    const [pending] = await waitForPending(handle, 1);
    expect(Date.parse(pending.expiresAt) - Date.parse(pending.requestedAt)).toBe(2000);
    const result = await handle.result();
    expect(result.status).toBe('completed');
    expect(JSON.stringify(result.toolCalls[0].output)).toContain('cancel');
  });

  it('a question parked when the worker stops is asked again by the retried call on a new worker, and the answer completes it', async () => {
    fake.script('openai', [{ toolCalls: [{ name: 'everything__trigger-elicitation-request', input: {} }] }, { text: 'Got it after the restart.' }]);
    const handle = await startOpenAITurn(turnpike, 'ask me', ['everything__trigger-elicitation-request']);
    const [before] = await waitForPending(handle, 1);
    // The worker stops: its MCP connection (and the stdio server with it) is gone, and the call's attempt is cancelled.
    await turnpike.stopWorker();
    // Answered while no worker runs: the turn takes it once a worker is back, whichever comes
    // first, the answer or the retried call's question.
    const answered = handle.executeUpdate(submitToolResultUpdate, {
      args: [{ toolCallId: before.toolCallId, output: { action: 'accept', content: { name: 'Grace Hopper', email: 'grace@example.com' } } }],
    });
    await turnpike.startWorker();
    await answered;
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'completed', text: 'Got it after the restart.' });
    expect(result.toolCalls.map((call) => call.outcome)).toEqual(['executed']);
    expect(JSON.stringify(result.toolCalls[0].output)).toContain('Grace Hopper');
    // The first attempt asked on the stopped worker; a retry on the new worker asked again (each
    // attempt that reaches the server asks once; how many attempts ran depends on timing).
    const history = await handle.fetchHistory();
    const parks = history.events!.filter((event) => event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'parkElicitation');
    expect(parks.length).toBeGreaterThanOrEqual(2);
    const attempts = parks.map((event) => decodeAttempt(event.workflowExecutionUpdateAcceptedEventAttributes!.acceptedRequest!.input!.args!.payloads![0]!.data!));
    expect(new Set(attempts).size).toBe(attempts.length);
  });
});
