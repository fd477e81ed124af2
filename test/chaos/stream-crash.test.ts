/**
 * A worker killed mid-stream: the fake provider holds a model step's stream after its first
 * words, a `turnEvents` subscriber sees them, the worker process is SIGKILLed, and a new one
 * retries the step. The subscriber sees the retry marked (`step-retry`, each delta carrying its
 * attempt), so it can drop the dead attempt's words instead of doubling them, and the turn
 * returns exactly what an uninterrupted run of the same reply returns.
 */
import { rmSync } from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { turnpikeDataConverter } from '../../content/data-converter.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { startDevServer, type DevServer } from '../../scripts/dev-server.js';
import type { agentTurn } from '../../workflows/index.js';
import type { TurnEvent, TurnEventRecord } from '../../workflows/types/turn-events.js';
import type { ModelSettings } from '../../workflows/types/index.js';
import { startFakeProviderServer, type FakeProviderServer } from '../fake-provider/server.js';
import { startWorkerProcess, temporaryDirectory, writeBundle, type WorkerProcess } from './chaos-support.js';

let server: DevServer;
let fake: FakeProviderServer;
let client: Client;
let turnpike: TurnpikeClient;
let directory: string;
let worker: WorkerProcess | undefined;
let env: Record<string, string>;
const taskQueue = 'chaos-stream-crash';

beforeAll(async () => {
  directory = temporaryDirectory('turnpike-stream-crash-');
  let bundlePath: string;
  [server, fake, bundlePath] = await Promise.all([startDevServer(), startFakeProviderServer(), writeBundle(directory)]);
  client = new Client({ connection: await Connection.connect({ address: server.address }), dataConverter: turnpikeDataConverter });
  turnpike = new TurnpikeClient({ client, taskQueue });
  env = {
    TEMPORAL_ADDRESS: server.address,
    TURNPIKE_TASK_QUEUE: taskQueue,
    CHAOS_RECORDS_DIR: directory,
    WORKFLOW_BUNDLE: bundlePath,
    OPENAI_API_KEY: 'sk-test-chaos',
    OPENAI_BASE_URL: fake.openaiBaseURL,
    ANTHROPIC_API_KEY: 'sk-ant-test-chaos',
    ANTHROPIC_BASE_URL: fake.anthropicBaseURL,
  };
}, 120_000);

afterAll(async () => {
  await worker?.kill();
  await client?.connection.close();
  await fake?.close();
  await server?.stop();
  rmSync(directory, { recursive: true, force: true });
});

const TEXT = 'Your refund of 42 euros was approved and will reach your account within three days.';

function startTurn(model: ModelSettings, workflowId: string) {
  return client.workflow.start<typeof agentTurn>('agentTurn', {
    taskQueue,
    workflowId,
    // A task lost with the killed worker is retried after 2s rather than 10s.
    workflowTaskTimeout: '2s',
    args: [{
      model,
      messages: [{ role: 'user', content: 'Where is my refund?' }],
      // The model activity does not heartbeat: the killed attempt times out after this. Long
      // enough that the retry, streaming on a loaded machine, finishes within it (at 4s, a
      // retry under a load of 15 timed out and a third attempt was made).
      modelCallOptions: { startToCloseTimeout: '8s', retry: { initialInterval: '100ms', maximumAttempts: 5 } },
    }],
  });
}

/** What a chat UI shows: the text deltas, dropping a step's earlier attempts when `step-retry` says so. */
function displayedText(records: TurnEventRecord[]): string {
  const byStep = new Map<number, { attempt: number; text: string }>();
  for (const { event } of records) {
    if (event.type === 'step-retry') byStep.set(event.step, { attempt: event.attempt, text: '' });
    if (event.type !== 'text-delta') continue;
    const shown = byStep.get(event.step);
    if (!shown || event.attempt > shown.attempt) byStep.set(event.step, { attempt: event.attempt, text: event.text });
    else if (event.attempt === shown.attempt) shown.text += event.text;
  }
  return [...byStep.entries()].sort(([a], [b]) => a - b).map(([, { text }]) => text).join('');
}

const isText = (event: TurnEvent): event is Extract<TurnEvent, { type: 'text-delta' }> => event.type === 'text-delta';

describe('a worker killed mid-stream', () => {
  it.each([
    // Where each fake holds the stream: after the opening events and the first three words.
    [{ provider: 'openai', model: 'gpt-4.1-mini', maxTokens: 256 }, 4],
    [{ provider: 'anthropic', model: 'claude-sonnet-4-6', maxTokens: 256 }, 6],
  ] as const)('retries the step, marks the retry to subscribers and returns what an uninterrupted run returns (%j)', async (model, pauseAfterEvents) => {
    const { provider } = model;
    worker ??= await startWorkerProcess(env);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    fake.reset();
    fake.script(provider, [{ text: TEXT, stream: { pauseAfterEvents, resume: released } }, { text: TEXT }, { text: TEXT }]);

    const handle = await startTurn(model, `stream-crash-${provider}`);
    const iterator = turnpike.turnEvents(handle.workflowId)[Symbol.asyncIterator]();
    const seen: TurnEventRecord[] = [];
    // Read until the held stream's words have all reached the subscriber.
    while (seen.map(({ event }) => (isText(event) ? event.text : '')).join('') !== 'Your refund of ') {
      const next = await iterator.next();
      expect(next.done).toBe(false);
      seen.push(next.value!);
    }
    expect(seen.every(({ event }) => !isText(event) || event.attempt === 1)).toBe(true);
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]!.stream).toBeUndefined();

    // Mid-stream: the provider has sent three words and holds the rest.
    await worker.kill();
    worker = undefined;
    release();
    worker = await startWorkerProcess(env);

    for (let next = await iterator.next(); !next.done; next = await iterator.next()) seen.push(next.value);
    const result = await handle.result();

    // The killed attempt's request was cut off by the dead client; the retry's streamed whole.
    expect(fake.requests.map((request) => [request.errors, request.stream])).toEqual([
      [[], 'client-closed'],
      [[], 'complete'],
    ]);
    expect(seen.map(({ offset }) => offset)).toEqual(seen.map((_, index) => index));
    const retries = seen.filter(({ event }) => event.type === 'step-retry');
    expect(retries.map(({ event }) => event)).toEqual([{ type: 'step-retry', step: 1, attempt: 2 }]);
    const retryAt = retries[0]!.offset;
    const deltas = seen.filter((record): record is TurnEventRecord & { event: Extract<TurnEvent, { type: 'text-delta' }> } => isText(record.event));
    // Before the mark only the killed attempt's words, after it only the retry's, all of them.
    expect(deltas.filter(({ offset }) => offset < retryAt).every(({ event }) => event.attempt === 1)).toBe(true);
    expect(deltas.filter(({ offset }) => offset > retryAt).every(({ event }) => event.attempt === 2)).toBe(true);
    expect(deltas.filter(({ event }) => event.attempt === 2).map(({ event }) => event.text).join('')).toBe(TEXT);
    // Not a silently doubled text: read naively the words of the dead attempt come twice; read
    // with the mark, the subscriber shows exactly the turn's answer.
    expect(deltas.map(({ event }) => event.text).join('')).toBe(`Your refund of ${TEXT}`);
    expect(displayedText(seen)).toBe(result.text);
    expect(seen.at(-1)!.event).toMatchObject({ type: 'turn-finished', status: 'completed', text: TEXT });

    // The same reply, never interrupted, on the same worker.
    const uninterrupted = await (await startTurn(model, `stream-uninterrupted-${provider}`)).result();
    expect(fake.requests.at(-1)).toMatchObject({ errors: [], stream: 'complete' });
    expect(result).toEqual(uninterrupted);
    expect(result).toMatchObject({ status: 'completed', text: TEXT, steps: 1 });
  }, 120_000);
});
