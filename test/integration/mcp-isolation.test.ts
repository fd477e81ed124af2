/**
 * MCP fault isolation: one failing MCP server harms only the turns that need it. A worker
 * process run by `runWorker` (as `npm run worker` runs one) declares three servers:
 * - `everything`: the reference server `@modelcontextprotocol/server-everything` over stdio;
 * - `hanging`: a server built with the official SDK that completes the handshake and never
 *   answers `tools/list` (test/support/mcp-hanging-server.mjs);
 * - `broken`: server-everything over streamable HTTP at a port where nothing listens yet, started
 *   there later to show it coming back.
 * `everything` and `hanging` run through the tap (test/support/mcp-stdio-tap.mjs), which shows
 * from the server's side whether a turn started them and what it asked.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomUUID } from 'node:crypto';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import type { McpServerStatus } from '../../activities/mcp/mcp-server-health.js';
import type { McpServerConfig } from '../../activities/mcp/mcp-servers.js';
import { TurnpikeClient, turnpikeDataConverter } from '../../client/index.js';
import { freePort } from '../../scripts/dev-server.js';
import { turnStateQuery } from '../../workflows/messages/definitions.js';
import type { agentTurn } from '../../workflows/index.js';
import type { TurnEvent } from '../../workflows/types/turn-events.js';
import { startWorkerProcess, type WorkerProcess } from '../chaos/chaos-support.js';
import { useFakeProviders } from '../support/fake-providers.js';

const require = createRequire(import.meta.url);
const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
const HANGING = fileURLToPath(new URL('../support/mcp-hanging-server.mjs', import.meta.url));
const TAP = fileURLToPath(new URL('../support/mcp-stdio-tap.mjs', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'turnpike-mcp-isolation-'));

/**
 * The hanging server's list timeout: a turn that waited for it would start its model call this
 * late. Long enough that a loaded machine's slow start (8 s seen on two busy cores) never reaches
 * it, so the bound tells waiting from not waiting rather than timing the turn.
 */
const HANGING_LIST_TIMEOUT_MS = 20_000;

function tapped(name: string, args: string[]): { config: { command: string; args: string[] }; log: string } {
  const log = join(scratch, `${name}.jsonl`);
  writeFileSync(log, '');
  return { config: { command: process.execPath, args: [TAP, log, process.execPath, ...args] }, log };
}

/** What a tapped server saw: the processes started and the methods it was asked. */
function readTap(log: string): { starts: number; methods: string[] } {
  const lines = readFileSync(log, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as { start?: number; in?: { method?: string } });
  return { starts: lines.filter((line) => line.start !== undefined).length, methods: lines.flatMap((line) => (line.in?.method ? [line.in.method] : [])) };
}

let fake: Awaited<ReturnType<typeof useFakeProviders>>;
let client: Client;
const workers: WorkerProcess[] = [];
let brokenServer: ChildProcess | undefined;
const everything = tapped('everything', [EVERYTHING, 'stdio']);
const hanging = tapped('hanging', [HANGING]);
let brokenPort: number;

beforeAll(async () => {
  fake = await useFakeProviders();
  brokenPort = await freePort();
  client = new Client({ connection: await Connection.connect({ address: inject('temporalAddress') }), namespace: inject('temporalNamespace'), dataConverter: turnpikeDataConverter });
});

afterAll(async () => {
  brokenServer?.kill();
  for (const worker of workers) await worker.terminate();
  await client?.connection.close();
  await fake?.restore();
});

beforeEach(() => fake.reset());

function servers(brokenRequired: boolean): Record<string, McpServerConfig> {
  return {
    everything: everything.config,
    hanging: { ...hanging.config, listTimeout: HANGING_LIST_TIMEOUT_MS },
    broken: { url: `http://127.0.0.1:${brokenPort}/mcp`, required: brokenRequired, reconnect: { initialInterval: '200ms', maximumInterval: '1s' } },
  };
}

async function startWorker(taskQueue: string, brokenRequired: boolean): Promise<WorkerProcess> {
  const worker = await startWorkerProcess(
    {
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_NAMESPACE: inject('temporalNamespace'),
      TURNPIKE_TASK_QUEUE: taskQueue,
      WORKFLOW_BUNDLE: inject('workflowBundlePath'),
      TURNPIKE_HEALTH_PORT: String(await freePort()),
      TURNPIKE_METRICS_ADDRESS: `127.0.0.1:${await freePort()}`,
      TEST_MCP_SERVERS: JSON.stringify(servers(brokenRequired)),
    },
    'test/support/mcp-worker-process.ts',
  );
  workers.push(worker);
  return worker;
}

function startTurn(taskQueue: string, text: string, tools?: string[]): Promise<WorkflowHandle<typeof agentTurn>> {
  return client.workflow.start<typeof agentTurn>('agentTurn', {
    taskQueue,
    workflowId: `mcp-isolation-${randomUUID()}`,
    args: [
      {
        model: { provider: 'openai', model: 'gpt-4.1-mini' },
        messages: [{ role: 'user', content: text }],
        ...(tools ? { tools } : {}),
        modelCallOptions: { retry: { initialInterval: '100ms', backoffCoefficient: 1, maximumAttempts: 2 } },
      },
    ],
  });
}

function offeredTools(index: number): string[] {
  const requests = fake.requests.filter((request) => request.provider === 'openai');
  return (requests[index].body.tools ?? []).map((tool: { function: { name: string } }) => tool.function.name);
}

async function statuses(worker: WorkerProcess): Promise<Record<string, McpServerStatus>> {
  const { servers: list } = (await (await fetch(`${worker.ready.healthUrl}/mcp-servers`)).json()) as { servers: McpServerStatus[] };
  return Object.fromEntries(list.map((status) => [status.server, status]));
}

async function gauge(worker: WorkerProcess, server: string): Promise<number | undefined> {
  const metrics = await (await fetch(worker.ready.metricsUrl!)).text();
  const line = metrics.split('\n').find((candidate) => candidate.startsWith('turnpike_mcp_server_up{') && candidate.includes(`server="${server}"`));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 30_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms (last: ${JSON.stringify(value)})`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function eventsOf(turnId: string): Promise<TurnEvent[]> {
  const events: TurnEvent[] = [];
  for await (const record of new TurnpikeClient({ client }).turnEvents(turnId)) events.push(record.event);
  return events;
}

describe('one MCP server that cannot start and one that hangs on tools/list', () => {
  const taskQueue = `mcp-isolation-${randomUUID()}`;
  let worker: WorkerProcess;

  beforeAll(async () => {
    worker = await startWorker(taskQueue, false);
  });

  it('a turn that uses only a third server\'s tools never asks the other two, and its first model call does not wait for them', async () => {
    fake.script('openai', [{ toolCalls: [{ name: 'everything__echo', input: { message: 'isolated' } }] }, { text: 'Echoed.' }]);
    const started = Date.now();
    const handle = await startTurn(taskQueue, 'echo', ['everything__echo']);
    const firstCallAfter = await until(
      async () => (fake.requests.some((request) => request.provider === 'openai') ? Date.now() - started : undefined),
      (after) => after !== undefined,
      'the first model call',
    );
    const result = await handle.result();
    console.log(`mcp-isolation: the first model call of a turn using only everything's tools started ${firstCallAfter} ms after the turn`);
    expect(result).toMatchObject({ status: 'completed', text: 'Echoed.' });
    expect(result.toolCalls.map((call) => [call.toolName, call.outcome])).toEqual([['everything__echo', 'executed']]);
    expect(offeredTools(0)).toEqual(['everything__echo']);
    // The hanging server was never started, so it could not hold the turn; the broken one was never asked.
    expect(readTap(hanging.log).starts).toBe(0);
    expect(firstCallAfter).toBeLessThan(HANGING_LIST_TIMEOUT_MS);
    const known = await statuses(worker);
    expect(known.everything).toMatchObject({ state: 'up', required: false });
    expect(known.hanging.state).toBe('unknown');
    expect(known.broken.state).toBe('unknown');
  });

  it('a turn offered all tools completes with the working server\'s tools, and its state and stream name the two left out and why', async () => {
    fake.script('openai', [{ toolCalls: [{ name: 'everything__echo', input: { message: 'all tools' } }] }, { text: 'Done without two servers.' }]);
    const handle = await startTurn(taskQueue, 'echo with everything you have');
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'completed', text: 'Done without two servers.' });
    const offered = offeredTools(0);
    expect(offered).toContain('everything__echo');
    expect(offered.filter((name) => !name.startsWith('everything__'))).toEqual([]);
    // The hanging server was started and asked for its tools, and its listing timed out.
    expect(readTap(hanging.log).methods).toContain('tools/list');

    const state = await handle.query(turnStateQuery);
    expect(state.toolsLeftOut?.map((left) => left.server).sort()).toEqual(['broken', 'hanging']);
    const reasons = Object.fromEntries(state.toolsLeftOut!.map((left) => [left.server, left.reason]));
    expect(reasons.hanging).toMatch(/timed out/i);
    expect(reasons.broken).toMatch(/fetch failed|ECONNREFUSED|connect/i);
    const leftOut = (await eventsOf(handle.workflowId)).filter((event) => event.type === 'tools-left-out');
    expect(leftOut).toEqual([{ type: 'tools-left-out', servers: state.toolsLeftOut }]);

    // The worker shows both down, logs it, and counts them 0 in the gauge; a retry is scheduled.
    const known = await statuses(worker);
    for (const server of ['hanging', 'broken']) {
      expect(known[server]).toMatchObject({ state: 'down', failures: expect.any(Number) });
      expect(known[server].error).toBeTruthy();
      expect(await gauge(worker, server)).toBe(0);
    }
    expect(await gauge(worker, 'everything')).toBe(1);
    expect(worker.output()).toMatch(/MCP server "broken" could not list its tools: .*trying again in \d+ ms/);
    expect(worker.output()).toMatch(/MCP server "hanging" could not list its tools: .*timed out/i);
  });

  it('the next turn offered all tools leaves the down servers out at once, without waiting for the hanging one again', async () => {
    const listingsBefore = readTap(hanging.log).methods.filter((method) => method === 'tools/list').length;
    fake.script('openai', [{ text: 'Still here.' }]);
    const started = Date.now();
    const handle = await startTurn(taskQueue, 'hello');
    await until(async () => fake.requests.some((request) => request.provider === 'openai'), Boolean, 'the first model call');
    const firstCallAfter = Date.now() - started;
    expect(await handle.result()).toMatchObject({ status: 'completed', text: 'Still here.' });
    console.log(`mcp-isolation: with two servers known down, the first model call started ${firstCallAfter} ms after the turn`);
    expect(firstCallAfter).toBeLessThan(HANGING_LIST_TIMEOUT_MS);
    expect((await handle.query(turnStateQuery)).toolsLeftOut?.map((left) => left.server).sort()).toEqual(['broken', 'hanging']);
    // Only the background retries asked the hanging server since (none of them is the turn's).
    expect((await statuses(worker)).hanging.state).toBe('down');
    expect(readTap(hanging.log).methods.filter((method) => method === 'tools/list').length).toBeGreaterThanOrEqual(listingsBefore);
  });

  it('when the broken server comes back, the next turn gets its tools, with no worker restart', async () => {
    brokenServer = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], { env: { ...process.env, PORT: String(brokenPort) }, stdio: ['ignore', 'ignore', 'pipe'] });
    // The background retry (every second at most) finds it.
    const back = await until(() => statuses(worker), (known) => known.broken?.state === 'up', 'the broken server up again');
    expect(back.broken.tools).toBeGreaterThan(0);
    expect(await gauge(worker, 'broken')).toBe(1);
    expect(worker.output()).toMatch(/MCP server "broken" answers again/);

    fake.script('openai', [{ toolCalls: [{ name: 'broken__echo', input: { message: 'back' } }] }, { text: 'It is back.' }]);
    const handle = await startTurn(taskQueue, 'echo on the server that was down');
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'completed', text: 'It is back.' });
    expect(result.toolCalls.map((call) => [call.toolName, call.outcome])).toEqual([['broken__echo', 'executed']]);
    expect(offeredTools(0)).toEqual(expect.arrayContaining(['everything__echo', 'broken__echo']));
    expect((await handle.query(turnStateQuery)).toolsLeftOut?.map((left) => left.server)).toEqual(['hanging']);
  });
});

describe('the broken server declared required', () => {
  it('a turn offered all tools fails with an error naming it; a turn that does not use it completes', async () => {
    brokenServer?.kill();
    const taskQueue = `mcp-required-${randomUUID()}`;
    // Its own port, where nothing listens.
    brokenPort = await freePort();
    await startWorker(taskQueue, true);
    fake.script('openai', [{ text: 'never asked' }]);
    const failing = await startTurn(taskQueue, 'use everything');
    const failure = await failing.result().then(
      () => undefined,
      (error: Error & { cause?: { cause?: { message?: string; type?: string } } }) => error,
    );
    expect(failure).toBeDefined();
    const cause = failure!.cause?.cause;
    expect(cause?.type).toBe('McpServerUnavailable');
    expect(cause?.message).toMatch(/^MCP server "broken" is required and could not list its tools: /);
    expect(fake.requests.filter((request) => request.provider === 'openai')).toEqual([]);

    fake.reset();
    fake.script('openai', [{ text: 'Fine without it.' }]);
    const other = await startTurn(taskQueue, 'hello', ['everything__echo']);
    expect(await other.result()).toMatchObject({ status: 'completed', text: 'Fine without it.' });
  });
});
