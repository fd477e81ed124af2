/**
 * A tokens-per-minute limit the fleet shares (`modelCapacity.tokenLimit`), on the dev server:
 * three worker processes (`runWorker` with `TURNPIKE_MODEL_TOKENS_*`) book their model calls in
 * one PostgreSQL counter (scripts/postgres.ts runs a private one) against a fake OpenAI that
 * enforces tokens per minute with its real 429s. With the limit no call is refused, and every
 * turn completes with one admitted call; the same burst without it meets 429s. In one process
 * with the in-memory counter: a call larger than the limit fails at once without reaching the
 * provider, and a booking further away than `maxWaitSeconds` is retried when due.
 *
 * The turns are started before the workers, so the calls meet a backlog at once: no timing is
 * asserted, only counts and the provider's windows.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { InMemoryModelTokenCounter, placeBooking } from '../../activities/model-tokens/token-counter.js';
import { PostgresModelTokenCounter } from '../../activities/model-tokens/postgres-token-counter.js';
import { startPostgres, type Postgres } from '../../scripts/postgres.js';
import { providerRateLimit } from '../fake-provider/rate-limit.js';
import { startWorkerProcess } from '../chaos/chaos-support.js';
import { useClientWithFakes } from '../support/client-with-fakes.js';
import { freeLowPort } from '../support/free-port.js';
import { noteStarted } from '../support/history-recorder.js';
import { startModelQueueWorker } from '../support/model-queue-worker.js';

try {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
} catch {
  // Already installed in this process.
}

const { EventType } = temporal.api.enums.v1;
const directory = mkdtempSync(path.join(tmpdir(), 'turnpike-model-tokens-'));
// PostgreSQL runs as the postgres user when we are root: it must reach <directory>/pg.
chmodSync(directory, 0o755);

/**
 * The provider: 8,000 tokens a minute, held over any 3 s (400 tokens), each call charged 100
 * (90 in, 10 out); requests are not what binds. The fleet's counter: 400 tokens over any 6 s
 * (4,000 a minute), three seconds' margin for the time between a booking and its request's
 * arrival: a worker woken late by a busy machine sends its call later than booked, and the
 * provider then sees it beside the next window's calls (a 4 s window met one 429 in a full CI
 * run, on a machine running the whole suite). A call expects its request's characters ÷ 4 plus
 * 100 output tokens: about 113.
 */
const USAGE = { inputTokens: 90, outputTokens: 10 };
const PROVIDER = { requestsPerMinute: 60_000, tokensPerMinute: 8_000, windowMs: 3_000 };
const COUNTER = { tokensPerMinute: 4_000, windowSeconds: 6, outputTokens: 100 };
const TURNS = 18;
const WORKERS = 3;

const suite = useClientWithFakes();
let postgres: Postgres;
let connectionString: string;

beforeAll(async () => {
  const port = await freeLowPort();
  postgres = await startPostgres({ dataDirectory: path.join(directory, 'pg'), port, user: 'turnpike', password: 'tokens-test', logFile: path.join(directory, 'postgres.log') });
  connectionString = `postgresql://turnpike:tokens-test@127.0.0.1:${port}/postgres`;
}, 180_000);

afterAll(async () => {
  await postgres?.stop();
  rmSync(directory, { recursive: true, force: true });
}, 120_000);

/** Three worker processes on the turns' queue, each polling the model queue, with the token limit or without it. */
function workerEnv(taskQueue: string, modelQueue: string, withLimit: boolean): Record<string, string> {
  return {
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_NAMESPACE: inject('temporalNamespace'),
    TURNPIKE_TASK_QUEUE: taskQueue,
    WORKFLOW_BUNDLE: inject('workflowBundlePath'),
    TURNPIKE_MODEL_TASK_QUEUE: modelQueue,
    TURNPIKE_MODEL_MAX_CONCURRENT_CALLS: '4',
    ...(withLimit
      ? {
          TURNPIKE_MODEL_TOKENS_PER_MINUTE: String(COUNTER.tokensPerMinute),
          TURNPIKE_MODEL_TOKEN_WINDOW_SECONDS: String(COUNTER.windowSeconds),
          TURNPIKE_MODEL_EXPECTED_OUTPUT_TOKENS: String(COUNTER.outputTokens),
          TURNPIKE_MODEL_TOKENS_POSTGRES_URL: connectionString,
        }
      : {}),
  };
}

async function startWorkerProcesses(taskQueue: string, modelQueue: string, withLimit: boolean): Promise<() => Promise<void>> {
  const env = workerEnv(taskQueue, modelQueue, withLimit);
  // Started together: with the limit, all three create the counter's table at once.
  const processes = await Promise.all(Array.from({ length: WORKERS }, () => startWorkerProcess(env, 'test/support/env-worker-process.ts')));
  return async () => {
    const ended = await Promise.all(processes.map((worker) => worker.terminate()));
    for (const { output } of ended) expect(output).toContain('stopped');
  };
}

async function startTurns(turnpike: TurnpikeClient, count: number, prefix: string, heartbeatTimeout?: string): Promise<WorkflowHandle[]> {
  const handles: WorkflowHandle[] = [];
  for (let index = 0; index < count; index++) {
    const handle = await turnpike.startTurn(
      {
        model: { provider: 'openai', model: 'gpt-4.1-mini' },
        messages: [{ role: 'user', content: `${prefix} question ${index}` }],
        tools: [],
        ...(heartbeatTimeout ? { modelCallOptions: { heartbeatTimeout } } : {}),
      },
      { turnId: `${prefix}-${randomUUID()}`, tenant: index % 2 === 0 ? 'acme' : 'globex', priority: 'batch' },
    );
    noteStarted(handle);
    handles.push(handle);
  }
  return handles;
}

/** `TURNS` turns queued at once, then the worker processes; resolves once every turn has ended. */
async function burst(withLimit: boolean) {
  const taskQueue = `tokens-${randomUUID()}`;
  const modelQueue = `${taskQueue}-models`;
  const limit = providerRateLimit({ ...PROVIDER, reply: { text: 'ok', usage: USAGE } });
  suite.fake.setDefault('openai', (body: { model?: string }) => limit.respond(body));
  const turnpike = new TurnpikeClient({ client: suite.client, taskQueue, modelTaskQueue: modelQueue });
  const handles = await startTurns(turnpike, TURNS, 'tokens');
  const stop = await startWorkerProcesses(taskQueue, modelQueue, withLimit);
  try {
    const results = await Promise.all(handles.map((handle) => handle.result()));
    return { results, handles, limit, modelQueue };
  } finally {
    await stop();
  }
}

/** The most tokens the provider admitted in any one of its windows. */
function busiestTokens(admitted: readonly number[]): number {
  return Math.max(...admitted.map((end) => admitted.filter((at) => at <= end && at > end - PROVIDER.windowMs).length)) * (USAGE.inputTokens + USAGE.outputTokens);
}

describe('the PostgreSQL counter', () => {
  it('places each booking where placeBooking places it, given the rows it held, in the shared lane and the reserve', async () => {
    const counter = new PostgresModelTokenCounter({ connectionString, table: 'placement_check' });
    const database = new pg.Client({ connectionString });
    await database.connect();
    try {
      const key = `check-${randomUUID()}`;
      const [limit, windowMs, reserved] = [1_000, 300, 250];
      let seed = 11;
      let waited = 0;
      let inReserve = 0;
      const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
      for (let call = 0; call < 150; call++) {
        const rows = (await database.query<{ at_ms: number; tokens: string; reserved: boolean }>('SELECT at_ms, tokens, reserved FROM placement_check WHERE key = $1', [key]).catch(() => ({ rows: [] }))).rows;
        const interactive = random() < 0.3;
        const tokens = 1 + Math.floor(random() * (interactive ? 200 : 300));
        const request = { key, id: `call-${call}`, tokens, limit, windowMs, reserved, interactive };
        const { waitMs } = await counter.book(request);
        const placed = (await database.query<{ at_ms: number; reserved: boolean }>('SELECT at_ms, reserved FROM placement_check WHERE key = $1 AND id = $2', [key, `call-${call}`])).rows[0]!;
        const nowMs = placed.at_ms - waitMs;
        if (waitMs > 0) waited++;
        if (placed.reserved) inReserve++;
        const before = rows.map((row) => ({ atMs: row.at_ms, tokens: Number(row.tokens), reserved: row.reserved })).filter((booking) => booking.atMs > nowMs - windowMs);
        expect({ atMs: placed.at_ms, reserved: placed.reserved }).toEqual(placeBooking(before, nowMs, request));
        // Some calls use less than they expected.
        if (random() < 0.3) await counter.settle(key, `call-${call}`, Math.floor(tokens / 2));
      }
      // Most bookings went beyond a full window, into the future; some interactive ones into the reserve.
      expect(waited).toBeGreaterThan(100);
      expect(inReserve).toBeGreaterThan(10);
    } finally {
      await database.end();
      await counter.close();
    }
  });
});

describe('a tokens-per-minute limit held by three worker processes in one PostgreSQL counter', () => {
  it('meets no 429 and admits every call once; the counter holds what each call used', async () => {
    const { results, handles, limit, modelQueue } = await burst(true);
    expect(results.map((result) => result.status)).toEqual(handles.map(() => 'completed'));
    expect(limit.rejected).toBe(0);
    expect(limit.admitted.length).toBe(TURNS);
    expect(busiestTokens(limit.admitted)).toBeLessThanOrEqual((PROVIDER.tokensPerMinute * PROVIDER.windowMs) / 60_000);
    // The rows still in the counter were settled to the provider's usage (100), not the 113 expected.
    const client = new pg.Client({ connectionString });
    await client.connect();
    try {
      const { rows } = await client.query<{ tokens: string }>('SELECT tokens FROM turnpike_model_tokens WHERE key = $1', [modelQueue]);
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.map((row) => Number(row.tokens))).toEqual(rows.map(() => USAGE.inputTokens + USAGE.outputTokens));
    } finally {
      await client.end();
    }
  }, 240_000);

  it('meets 429s without it (the control): every worker calls as fast as it can', async () => {
    const { results, handles, limit } = await burst(false);
    expect(results.map((result) => result.status)).toEqual(handles.map(() => 'completed'));
    expect(limit.rejectedBy.tokens).toBeGreaterThan(0);
    expect(limit.admitted.length).toBe(TURNS);
  }, 240_000);
});

/** Admitted (200) provider requests, by the question each turn asks. */
function admittedByQuestion(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const request of suite.fake.requests) {
    if (request.provider !== 'openai' || request.status !== 200) continue;
    const messages = (request.body as { messages: Array<{ role: string; content: unknown }> }).messages;
    const question = String(messages.filter((message) => message.role === 'user').at(-1)?.content);
    counts.set(question, (counts.get(question) ?? 0) + 1);
  }
  return counts;
}

async function until(done: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await done())) await new Promise((resolve) => setTimeout(resolve, 50));
}

describe('a worker SIGKILLed while calls wait in it for their bookings', () => {
  it('loses nothing and doubles nothing: the calls are retried elsewhere, every turn completes with one admitted call', async () => {
    const taskQueue = `tokens-crash-${randomUUID()}`;
    const modelQueue = `${taskQueue}-models`;
    const turns = 6;
    let admitting = true;
    // The provider refuses nothing on tokens here; it stops admitting (a 429, so a refused call never ran) before the kill.
    suite.fake.setDefault('openai', () => (admitting ? { text: 'ok', usage: USAGE } : { status: 429, headers: { 'retry-after': '1' } }));
    const turnpike = new TurnpikeClient({ client: suite.client, taskQueue, modelTaskQueue: modelQueue });
    // A 10 s heartbeat timeout (the step heartbeats every 5 s): the dead worker's calls are retried 10 s after their last heartbeat.
    const handles = await startTurns(turnpike, turns, 'tokens-crash', '10s');
    const first = await startWorkerProcess(workerEnv(taskQueue, modelQueue, true), 'test/support/env-worker-process.ts');
    let second: Awaited<ReturnType<typeof startWorkerProcess>> | undefined;
    const database = new pg.Client({ connectionString });
    await database.connect();
    try {
      // About three calls per window of 6 s: the others wait in the worker for their bookings.
      const ours = () => [...admittedByQuestion().keys()].filter((question) => question.startsWith('tokens-crash '));
      await until(() => ours().length >= 2);
      admitting = false;
      const admittedBeforeKill = ours();
      // Every admitted call has ended its turn, so none is in flight in the process about to die.
      const byQuestion = new Map(handles.map((handle, index) => [`tokens-crash question ${index}`, handle]));
      for (const question of admittedBeforeKill) expect((await byQuestion.get(question)!.result()).status).toBe('completed');
      // Calls are waiting in the worker: bookings later than now.
      await until(async () => {
        const { rows } = await database.query<{ waiting: string }>(
          'SELECT count(*) AS waiting FROM turnpike_model_tokens WHERE key = $1 AND at_ms > extract(epoch FROM clock_timestamp()) * 1000',
          [modelQueue],
        );
        return Number(rows[0]!.waiting) > 0;
      });
      expect(admittedBeforeKill.length).toBeLessThan(turns);

      await first.kill();
      admitting = true;
      second = await startWorkerProcess(workerEnv(taskQueue, modelQueue, true), 'test/support/env-worker-process.ts');
      const results = await Promise.all(handles.map((handle) => handle.result()));
      expect(results.map((result) => result.status)).toEqual(handles.map(() => 'completed'));
      const admitted = [...admittedByQuestion()].filter(([question]) => question.startsWith('tokens-crash '));
      expect(Object.fromEntries(admitted)).toEqual(Object.fromEntries(handles.map((_, index) => [`tokens-crash question ${index}`, 1])));
      for (const handle of handles) {
        const events = (await handle.fetchHistory()).events ?? [];
        expect(events.filter((event) => event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED).length).toBe(1);
      }
    } finally {
      await database.end();
      await first.kill();
      if (second) expect((await second.terminate()).output).toContain('stopped');
    }
  }, 240_000);
});

describe('the token limit in one process', () => {
  it('fails a call larger than the limit at once, and the provider sees no request', async () => {
    const taskQueue = `tokens-${randomUUID()}`;
    const modelQueue = `${taskQueue}-models`;
    const stop = await startModelQueueWorker(taskQueue, { taskQueue: modelQueue, tokenLimit: { tokensPerMinute: 60, counter: new InMemoryModelTokenCounter(), outputTokens: 100 } });
    try {
      const before = suite.fake.requests.length;
      const turnpike = new TurnpikeClient({ client: suite.client, taskQueue, modelTaskQueue: modelQueue });
      const [handle] = await startTurns(turnpike, 1, 'tokens-large');
      const error = await handle!.result().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(WorkflowFailedError);
      const failure = (error as WorkflowFailedError).cause?.cause as ApplicationFailure | undefined;
      expect(failure?.type).toBe('ModelTokensTooLarge');
      expect(failure?.message).toMatch(/^Model call too large for the token limit of queue ".+-models": a call expecting \d+ tokens can never fit a limit of 60 tokens per 60 s$/);
      expect(suite.fake.requests.length).toBe(before);
    } finally {
      await stop();
    }
  }, 120_000);

  it('retries a call whose booking is further away than maxWaitSeconds when it is due; no 429', async () => {
    const taskQueue = `tokens-${randomUUID()}`;
    const modelQueue = `${taskQueue}-models`;
    // 150 tokens over any 2 s: one call of about 113 at a time.
    const stop = await startModelQueueWorker(taskQueue, { taskQueue: modelQueue, tokenLimit: { tokensPerMinute: 4_500, windowSeconds: 2, counter: new InMemoryModelTokenCounter(), outputTokens: 100, maxWaitSeconds: 0 } });
    try {
      const limit = providerRateLimit({ ...PROVIDER, reply: { text: 'ok', usage: USAGE } });
      suite.fake.setDefault('openai', (body: { model?: string }) => limit.respond(body));
      const turnpike = new TurnpikeClient({ client: suite.client, taskQueue, modelTaskQueue: modelQueue });
      const handles = await startTurns(turnpike, 2, 'tokens-busy');
      const results = await Promise.all(handles.map((handle) => handle.result()));
      expect(results.map((result) => result.status)).toEqual(['completed', 'completed']);
      expect(limit.rejected).toBe(0);
      expect(limit.admitted.length).toBe(2);
      expect(limit.admitted[1]! - limit.admitted[0]!).toBeGreaterThanOrEqual(1_500);
      // One of the two calls ran on its second attempt, after the first told it the limit was busy.
      const started = [];
      for (const handle of handles) {
        const events = (await handle.fetchHistory()).events ?? [];
        started.push(...events.filter((event) => event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED).map((event) => event.activityTaskStartedEventAttributes!));
      }
      const retried = started.filter((attributes) => attributes.attempt === 2);
      expect(retried.length).toBe(1);
      expect(retried[0]!.lastFailure?.applicationFailureInfo?.type).toBe('ModelTokensBusy');
      expect(retried[0]!.lastFailure?.message).toMatch(/^The token limit of queue ".+-models" has no room for \d+ tokens for \d+ s; retried then$/);
    } finally {
      await stop();
    }
  }, 120_000);
});
