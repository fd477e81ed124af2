/**
 * The live channel over PostgreSQL LISTEN/NOTIFY (activities/postgres-live/postgres-live-deltas.ts), against a
 * private PostgreSQL instance (scripts/postgres.ts): the worker publishes through one
 * `PostgresLiveDeltas`, the reading client listens through another (its own connections, as an
 * API process apart from the workers has), and from a worker in its own process configured by
 * TURNPIKE_LIVE_POSTGRES_URL. A reader sees a step's text while every durable read is held, a
 * piece of more than 8,000 bytes included; with PostgreSQL stopped mid-turn the turn finishes and
 * readers get everything from the durable stream; once it is back, or once a cut LISTEN
 * connection is replaced, turns are live again; and `npm run api` in its own process, given the
 * same variable, streams a worker process's deltas live over SSE.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@temporalio/client';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import type { LiveDeltaPiece } from '../../activities/live-deltas.js';
import { MAX_NOTIFY_PAYLOAD_BYTES } from '../../activities/postgres-live/live-delta-payload.js';
import { PostgresLiveDeltas } from '../../activities/postgres-live/postgres-live-deltas.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { startPostgres, type Postgres } from '../../scripts/postgres.js';
import type { TurnEventRecord } from '../../workflows/types/turn-events.js';
import { startWorkerProcess, type WorkerProcess } from '../chaos/chaos-support.js';
import { nonDeltaCount, readAll, shown, words } from '../support/live-view.js';
import { useFakeProviders } from '../support/fake-providers.js';
import { freeLowPort } from '../support/free-port.js';
import { readSseFrom } from '../support/sse-reader.js';
import { testTools } from '../support/test-tools.js';
import { startTurnpike, type TurnpikeHarness } from '../support/turnpike-harness.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const directory = mkdtempSync(path.join(tmpdir(), 'turnpike-pg-live-'));
// PostgreSQL runs as the postgres user when we are root: it must reach <directory>/pg.
chmodSync(directory, 0o755);


let port: number;
let postgres: Postgres;
let connectionString: string;
const startDatabase = async () =>
  (postgres = await startPostgres({ dataDirectory: path.join(directory, 'pg'), port, user: 'turnpike', password: 'live-test', logFile: path.join(directory, 'postgres.log') }));

let fake: Awaited<ReturnType<typeof useFakeProviders>>;
let turnpike: TurnpikeHarness;
let published: PostgresLiveDeltas;
let listened: PostgresLiveDeltas;
const warnings: string[] = [];
/** A worker in its own process, on a task queue of its own, with the channel TURNPIKE_LIVE_POSTGRES_URL names. */
const processQueue = `pg-live-${randomUUID()}`;
let workerProcess: WorkerProcess | undefined;

beforeAll(async () => {
  port = await freeLowPort();
  await startDatabase();
  connectionString = `postgresql://turnpike:live-test@127.0.0.1:${port}/postgres`;
  fake = await useFakeProviders();
  published = new PostgresLiveDeltas({ connectionString, onWarning: (message) => warnings.push(message) });
  listened = new PostgresLiveDeltas({ connectionString, onWarning: (message) => warnings.push(message) });
  turnpike = await startTurnpike({ tools: testTools, liveDeltas: published });
  await listened.ready();
}, 180_000);
afterAll(async () => {
  await workerProcess?.kill();
  await turnpike?.stop();
  await published?.close();
  await listened?.close();
  await fake?.restore();
  await postgres?.stop();
  rmSync(directory, { recursive: true, force: true });
}, 120_000);
beforeEach(() => fake.reset());

const FIRST = words(30, 'a');
const SECOND = words(40, 'b');
/** One streamed "word" of about 13,500 bytes: 2-, 3- and 4-byte characters, so one delta of it is over PostgreSQL's limit. */
const LONG_WORD = 'ж€😀'.repeat(1_500);

/** A two-step turn: text and a tool call, then text; tokens 10 ms apart. */
async function startTwoStepTurn(second = SECOND, control: { pauseAfterEvents?: number; resume?: Promise<unknown> } = {}, taskQueue = turnpike.taskQueue, workflowId = `turn-${randomUUID()}`) {
  fake.script('openai', [
    { text: FIRST, toolCalls: [{ name: 'record_action', input: { action: 'live' } }], stream: { eventIntervalMs: 10, ...control } },
    { text: second, stream: { eventIntervalMs: 10 } },
  ]);
  const input = { model: { provider: 'openai' as const, model: 'gpt-4.1-mini', maxTokens: 512 }, messages: [{ role: 'user' as const, content: 'Go.' }] };
  return turnpike.client.workflow.start('agentTurn', { taskQueue, workflowId, args: [input] });
}



const durableView = async (workflowId: string) => shown(await readAll(new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue }).turnEvents(workflowId)));

/**
 * Reads a two-step turn through the listening channel with every durable read held until both
 * steps' text (`second` for the second) has been shown; says whether it was shown before any read answered.
 */
async function readWithDurableHeld(second: string, taskQueue = turnpike.taskQueue) {
  let resolveGate!: () => void;
  const gate = new Promise<void>((resolve) => (resolveGate = resolve));
  const held = new Client({
    connection: turnpike.client.connection,
    namespace: turnpike.client.options.namespace,
    dataConverter: turnpike.client.options.dataConverter,
    interceptors: { workflow: [{ query: async (input, next) => (await gate, next(input)) }] },
  });
  const client = new TurnpikeClient({ client: held, taskQueue: turnpike.taskQueue, liveDeltas: listened });
  // Listening on the turn's channel before it starts, so that its first pieces are heard too (a
  // reader who comes later reads what came before its LISTEN from the durable stream).
  const workflowId = `turn-${randomUUID()}`;
  const listening = listened.subscribe(workflowId, () => {});
  await listened.ready();
  const handle = await startTwoStepTurn(second, {}, taskQueue, workflowId);
  let shownLive = false;
  let durableBefore = -1;
  const texts: Record<number, string> = {};
  const reading = (async () => {
    const records: TurnEventRecord[] = [];
    for await (const record of client.turnEvents(handle.workflowId, { live: true })) {
      records.push(record);
      if (record.event.type === 'text-delta') texts[record.event.step] = (texts[record.event.step] ?? '') + record.event.text;
      if (!shownLive && texts[1] === FIRST && texts[2] === second) {
        shownLive = true;
        durableBefore = nonDeltaCount(records);
        resolveGate();
      }
    }
    return records;
  })();
  await handle.result();
  resolveGate();
  const records = await reading;
  listening();
  expect(shownLive).toBe(true);
  expect(durableBefore).toBe(0);
  const expected = await durableView(handle.workflowId);
  expect(expected.texts).toEqual({ 1: FIRST, 2: second });
  // Every event once, in order: the text confirmed by the durable stream is not shown again.
  expect(shown(records)).toEqual(expected);
  expect(records.at(-1)!.event.type).toBe('turn-finished');
}

/** Waits until a piece published by the worker's channel reaches the listening one (both connected again). */
async function untilLive(): Promise<void> {
  let arrived = false;
  const unsubscribe = listened.subscribe('probe', () => (arrived = true));
  try {
    for (let attempt = 0; !arrived; attempt++) {
      if (attempt > 600) throw new Error('The live channel did not come back within 2 minutes');
      published.publish('probe', { event: { type: 'text-delta', text: 'x', step: 1, attempt: 1 }, start: attempt });
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  } finally {
    unsubscribe();
  }
}

describe('the PostgreSQL live channel', () => {
  it("shows a step's text live from another channel's connection while the durable reads are held", async () => {
    await readWithDurableHeld(SECOND);
  });

  it('shows the text live from a worker in its own process', async () => {
    workerProcess = await startWorkerProcess(
      {
        TEMPORAL_ADDRESS: inject('temporalAddress'),
        TEMPORAL_NAMESPACE: inject('temporalNamespace'),
        TURNPIKE_TASK_QUEUE: processQueue,
        WORKFLOW_BUNDLE: inject('workflowBundlePath'),
        TURNPIKE_LIVE_POSTGRES_URL: `${connectionString}?channel=turnpike_live`,
      },
      'test/support/env-worker-process.ts',
    );
    await readWithDurableHeld(SECOND, processQueue);
  });

  it("`npm run api` (api/main.ts) in its own process, given TURNPIKE_LIVE_POSTGRES_URL, streams the worker process's deltas live over SSE", async () => {
    workerProcess ??= await startWorkerProcess(
      { TEMPORAL_ADDRESS: inject('temporalAddress'), TEMPORAL_NAMESPACE: inject('temporalNamespace'), TURNPIKE_TASK_QUEUE: processQueue, WORKFLOW_BUNDLE: inject('workflowBundlePath'), TURNPIKE_LIVE_POSTGRES_URL: connectionString },
      'test/support/env-worker-process.ts',
    );
    const apiPort = await freeLowPort();
    const api = spawn(process.execPath, ['--import', 'tsx', 'api/main.ts'], {
      cwd: ROOT,
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: inject('temporalAddress'),
        TEMPORAL_NAMESPACE: inject('temporalNamespace'),
        TURNPIKE_TASK_QUEUE: processQueue,
        TURNPIKE_API_PORT: String(apiPort),
        TURNPIKE_API_TOKENS: 'reader-token:reader',
        TURNPIKE_ADMINS: 'reader',
        TURNPIKE_LIVE_POSTGRES_URL: connectionString,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    api.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    try {
      const base = `http://127.0.0.1:${apiPort}`;
      for (let attempt = 0; ; attempt++) {
        const up = await fetch(`${base}/api/turns/none`, { headers: { authorization: 'Bearer reader-token' } }).then(() => true, () => false);
        if (up) break;
        if (attempt > 300 || api.exitCode !== null) throw new Error(`npm run api did not start: ${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const handle = await startTwoStepTurn(SECOND, {}, processQueue);
      const { status, messages } = await readSseFrom(`${base}/api/turns/${encodeURIComponent(handle.workflowId)}/events`, { authorization: 'Bearer reader-token' }, (message) => message.event === 'end');
      expect(status).toBe(200);
      const records = messages.filter((message) => message.event === 'message').map((message) => ({ id: message.id, ...(JSON.parse(message.data) as TurnEventRecord) }));
      // Deltas came through the channel ahead of the durable stream: their records carry `live`
      // and their ids say what they showed ahead (an API without the channel sends offsets only).
      const ahead = records.filter((record) => record.live !== undefined);
      expect(ahead.length).toBeGreaterThan(0);
      for (const record of ahead) expect(record.id).toMatch(/^-?\d+\.\d+-\d+-\d+/);
      // Every event once, in order, as the durable stream holds them.
      expect(shown(records)).toEqual(await durableView(handle.workflowId));
    } finally {
      const exited = new Promise((resolve) => api.once('exit', resolve));
      api.kill('SIGKILL');
      await exited;
    }
  });

  it('carries a piece of more than 8,000 bytes whole and numbered, in parts PostgreSQL takes', async () => {
    // PostgreSQL's limit, as the payload encoding assumes it.
    const client = new pg.Client({ connectionString });
    await client.connect();
    try {
      await client.query('SELECT pg_notify($1, $2)', ['limit_check', 'x'.repeat(MAX_NOTIFY_PAYLOAD_BYTES)]);
      await expect(client.query('SELECT pg_notify($1, $2)', ['limit_check', 'x'.repeat(MAX_NOTIFY_PAYLOAD_BYTES + 1)])).rejects.toThrow('payload string too long');
    } finally {
      await client.end();
    }

    // The channel alone: one piece of about 13,500 bytes, from one instance to the other.
    const parts: LiveDeltaPiece[] = [];
    const unsubscribe = listened.subscribe('long-piece', (piece) => parts.push(piece));
    await listened.ready();
    published.publish('long-piece', { event: { type: 'text-delta', text: LONG_WORD, step: 2, attempt: 1 }, start: 7 });
    published.publish('long-piece', { event: { type: 'text-delta', text: ' end', step: 2, attempt: 1 }, start: 7 + LONG_WORD.length });
    await expect.poll(() => parts.at(-1)?.event, { timeout: 30_000 }).toMatchObject({ text: ' end' });
    unsubscribe();
    expect(parts.length).toBeGreaterThan(2);
    let start = 7;
    for (const part of parts) {
      expect(part.start).toBe(start);
      start += (part.event as { text: string }).text.length;
    }
    expect(parts.map((part) => (part.event as { text: string }).text).join('')).toBe(`${LONG_WORD} end`);

    // And in a turn: the reader shows the whole long word live.
    await readWithDurableHeld(`Before ${LONG_WORD} after.`);
  });

  it('falls back to the durable stream when PostgreSQL stops mid-turn, and is live again once it is back', async () => {
    warnings.length = 0;
    let resume!: () => void;
    const resumed = new Promise<void>((resolve) => (resume = resolve));
    const client = new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue, liveDeltas: listened });
    // The first step pauses after 10 events; PostgreSQL stops there, and the step goes on.
    const handle = await startTwoStepTurn(SECOND, { pauseAfterEvents: 10, resume: resumed });
    let pieces = 0;
    const unsubscribe = listened.subscribe(handle.workflowId, () => pieces++);
    const reading = readAll(client.turnEvents(handle.workflowId, { live: true }));
    // Pieces were flowing when the database went.
    await expect.poll(() => pieces, { timeout: 60_000 }).toBeGreaterThanOrEqual(5);
    unsubscribe();
    await postgres.stop();
    resume();
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'completed', text: SECOND });
    const records = await reading;
    const expected = await durableView(handle.workflowId);
    expect(expected.texts).toEqual({ 1: FIRST, 2: SECOND });
    expect(shown(records)).toEqual(expected);
    // Each side told of the outage once, however many pieces it dropped.
    expect(warnings.filter((message) => message.includes('cannot publish'))).toHaveLength(1);
    expect(warnings.filter((message) => message.includes('cannot listen'))).toHaveLength(1);

    await startDatabase();
    await listened.ready();
    await untilLive();
    await readWithDurableHeld(SECOND);
  });

  it('a process receives only the turns its readers read: LISTEN from the first reader of a turn, UNLISTEN after the last', async () => {
    const [first, second] = [randomUUID(), randomUUID()].map((id) => `turn-${id}`) as [string, string];
    const processes = [new PostgresLiveDeltas({ connectionString }), new PostgresLiveDeltas({ connectionString })] as const;
    const [one, two] = processes;
    const heard = { one: [] as string[], two: [] as string[] };
    const piece = (text: string): LiveDeltaPiece => ({ event: { type: 'text-delta', text, step: 1, attempt: 1 }, start: 0 });
    try {
      // The first process reads the first turn, the second the second.
      one.subscribe(first, (got) => heard.one.push((got.event as { text: string }).text));
      const twoReadsSecond = two.subscribe(second, (got) => heard.two.push((got.event as { text: string }).text));
      await Promise.all([one.ready(), two.ready()]);
      for (const text of ['a1', 'a2', 'a3']) published.publish(first, piece(text));
      published.publish(second, piece('b1'));
      await expect.poll(() => heard.one.length + heard.two.length, { timeout: 30_000 }).toBe(4);
      expect(heard).toEqual({ one: ['a1', 'a2', 'a3'], two: ['b1'] });
      // Nothing of the turn nobody there reads reached a process's connection.
      expect(one.received.notifications).toBe(3);
      expect(two.received.notifications).toBe(1);

      // A reader of the first turn in the second process: from now on it hears that turn too.
      const twoReadsFirst = two.subscribe(first, (got) => heard.two.push((got.event as { text: string }).text));
      await two.ready();
      published.publish(first, piece('a4'));
      await expect.poll(() => heard.two, { timeout: 30_000 }).toEqual(['b1', 'a4']);
      expect(two.received.notifications).toBe(2);

      // Its last reader of the first turn left: UNLISTEN. A piece of each turn, the first turn's
      // first: when the second's arrives, the first's would have come before it.
      twoReadsFirst();
      await two.ready();
      published.publish(first, piece('a5'));
      published.publish(second, piece('b2'));
      await expect.poll(() => heard.two, { timeout: 30_000 }).toEqual(['b1', 'a4', 'b2']);
      expect(two.received.notifications).toBe(3);
      await expect.poll(() => heard.one, { timeout: 30_000 }).toEqual(['a1', 'a2', 'a3', 'a4', 'a5']);
      twoReadsSecond();
    } finally {
      await Promise.all(processes.map((process) => process.close()));
    }
  });

  it('listens again when its connection is cut (pg_terminate_backend)', async () => {
    const admin = new pg.Client({ connectionString });
    await admin.connect();
    const listening = async () =>
      (await admin.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE application_name = 'turnpike live listener'`)).rows.map((row) => row.pid);
    try {
      // The listening instance's connection, once those of instances closed before it have gone.
      await expect.poll(listening, { timeout: 30_000, interval: 200 }).toHaveLength(1);
      const cut = await listening();
      await admin.query('SELECT pg_terminate_backend($1)', [cut[0]]);
      // A new LISTEN connection, not the one cut.
      await expect.poll(async () => (await listening()).filter((pid) => !cut.includes(pid)).length, { timeout: 60_000, interval: 200 }).toBe(1);
      expect(await listening()).not.toContain(cut[0]);
    } finally {
      await admin.end();
    }
    await untilLive();
    await readWithDurableHeld(SECOND);
  });
});
