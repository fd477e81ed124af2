/**
 * `TurnpikeClient.startTurns` on the dev server: a batch of turns started a few at a time. The
 * starts in flight are counted on the client's own gRPC connection (an interceptor that sees each
 * `StartWorkflowExecution` call begin and end), and what was started is read back from the
 * server. No worker polls this file's queue: the turns only need to exist, and are terminated
 * at the end.
 */
import { randomUUID } from 'node:crypto';
import { InterceptingCall, type Interceptor } from '@grpc/grpc-js';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEFAULT_START_CONCURRENCY, type BatchTurn } from '../../client/turn-batch.js';
import { TurnpikeClient, TurnpikeRejectedError } from '../../client/turnpike-client.js';
import { turnpikeGrpcRetryInterceptor } from '../../connection/query-retry.js';
import { turnpikeDataConverter } from '../../content/data-converter.js';
import { turnpikeTenantKey } from '../../workflows/context/search-attributes.js';
import { workflowExists } from '../support/workflow-exists.js';

/** Counts the `StartWorkflowExecution` calls in flight on a connection, and the most at once. */
function startCounter() {
  const counter = { inFlight: 0, most: 0, calls: 0 };
  const interceptor: Interceptor = (options, nextCall) => {
    const call = new InterceptingCall(nextCall(options), {
      start(metadata, _listener, next) {
        const counted = options.method_definition.path.endsWith('/StartWorkflowExecution');
        if (counted) {
          counter.calls++;
          counter.most = Math.max(counter.most, ++counter.inFlight);
        }
        // grpc-js fills in the listener's other methods; each gets the next listener's as its second argument.
        next(metadata, {
          onReceiveStatus(status, nextStatus) {
            if (counted) counter.inFlight--;
            nextStatus(status);
          },
        });
      },
    });
    return call;
  };
  return { counter, interceptor };
}

const { counter, interceptor } = startCounter();
let connection: Connection;
let turnpike: TurnpikeClient;
const taskQueue = `start-turns-${randomUUID().slice(0, 8)}`;
const started: string[] = [];

beforeAll(async () => {
  connection = await Connection.connect({ address: inject('temporalAddress'), interceptors: [interceptor, turnpikeGrpcRetryInterceptor()] });
  const client = new Client({ connection, namespace: inject('temporalNamespace'), dataConverter: turnpikeDataConverter });
  turnpike = new TurnpikeClient({ client, taskQueue });
});

afterAll(async () => {
  await Promise.all(started.map((turnId) => turnpike.turn(turnId).terminate('start-turns test done').catch(() => undefined)));
  await connection?.close();
});

function batch(count: number, tenant = 'acme'): BatchTurn[] {
  const prefix = `start-turns-${randomUUID().slice(0, 8)}`;
  return Array.from({ length: count }, (_, index) => ({
    input: { model: { provider: 'openai', model: 'gpt-4.1-mini' }, messages: [{ role: 'user', content: `question ${index}` }] },
    options: { turnId: `${prefix}-${index}`, tenant, priority: 'batch' },
  }));
}

const exists = (turnId: string) => workflowExists(turnpike.client, turnId);

describe('startTurns', () => {
  it('starts every turn, at most `concurrency` at a time, and answers in order', async () => {
    const turns = batch(24);
    counter.most = 0;
    const callsBefore = counter.calls;
    const results = await turnpike.startTurns(turns, { concurrency: 7 });
    started.push(...results.map((result) => result.turnId));

    expect(results.map((result) => result.turnId)).toEqual(turns.map((turn) => turn.options.turnId));
    expect(results.every((result) => result.handle !== undefined && result.error === undefined)).toBe(true);
    expect(counter.calls - callsBefore).toBe(24);
    expect(counter.most).toBe(7);
    // Each is a turn on the queue with the tenant and the batch priority.
    for (const turnId of [turns[0]!.options.turnId, turns[23]!.options.turnId]) {
      const description = await turnpike.turn(turnId).describe();
      expect(description.taskQueue).toBe(taskQueue);
      expect(description.typedSearchAttributes.get(turnpikeTenantKey)).toBe('acme');
      const [first] = (await turnpike.turn(turnId).fetchHistory()).events ?? [];
      expect(first?.workflowExecutionStartedEventAttributes?.priority?.priorityKey).toBe(5);
      expect(first?.workflowExecutionStartedEventAttributes?.priority?.fairnessKey).toBe('acme');
    }
  });

  it(`keeps ${DEFAULT_START_CONCURRENCY} in flight by default, and starting the batch again returns the same runs`, async () => {
    const turns = batch(40);
    counter.most = 0;
    const results = await turnpike.startTurns(turns);
    started.push(...results.map((result) => result.turnId));
    expect(results.filter((result) => result.handle).length).toBe(40);
    expect(counter.most).toBe(DEFAULT_START_CONCURRENCY);

    // The client's start returns the run it started or found (the SDK's handle carries its run id).
    const runIds = (starts: typeof results) => starts.map((result) => (result.handle as unknown as { firstExecutionRunId?: string }).firstExecutionRunId);
    const again = await turnpike.startTurns(turns);
    expect(runIds(results).every((runId) => typeof runId === 'string' && runId.length > 0)).toBe(true);
    expect(runIds(again)).toEqual(runIds(results));
  });

  it('answers a refused turn with its error and starts the others', async () => {
    const turns = batch(6);
    turns[1] = { ...turns[1]!, input: { ...turns[1]!.input, historyLimit: 'ten' as never } };
    turns[4] = { ...turns[4]!, options: { ...turns[4]!.options, tenant: 'x'.repeat(65) } };
    const results = await turnpike.startTurns(turns, { concurrency: 3 });
    started.push(...results.map((result) => result.turnId));

    expect(results.map((result) => (result.error ? 'refused' : 'started'))).toEqual(['started', 'refused', 'started', 'started', 'refused', 'started']);
    expect(results[1]!.error).toBeInstanceOf(TurnpikeRejectedError);
    expect(results[1]!.error!.message).toMatch(/historyLimit must be an object/);
    expect(results[4]!.error!.message).toMatch(/tenant is 65 bytes long/);
    expect(await Promise.all(turns.map((turn) => exists(turn.options.turnId)))).toEqual([true, false, true, true, false, true]);
  });

  it.each([
    ['a repeated turnId', (turns: BatchTurn[]) => [...turns, turns[0]!], {}, /turns\[3\] repeats the turnId/],
    ['a missing turnId', (turns: BatchTurn[]) => [...turns, { input: turns[0]!.input, options: {} as never }], {}, /turns\[3\]\.options\.turnId must be a non-empty string/],
    ['concurrency 0', (turns: BatchTurn[]) => turns, { concurrency: 0 }, /concurrency must be a whole number from 1 to 100, not 0/],
    ['concurrency 101', (turns: BatchTurn[]) => turns, { concurrency: 101 }, /not 101/],
    ['concurrency 2.5', (turns: BatchTurn[]) => turns, { concurrency: 2.5 }, /not 2\.5/],
    ['not an array', () => ({}) as never, {}, /expected an array of \{ input, options \}/],
  ])('refuses a batch with %s and starts none of it', async (_, shape, options, message) => {
    const turns = batch(3);
    const callsBefore = counter.calls;
    const error = await turnpike.startTurns(shape(turns), options).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TurnpikeRejectedError);
    expect((error as TurnpikeRejectedError).type).toBe('InvalidRequest');
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).toMatch(/no turn was started/);
    expect(counter.calls).toBe(callsBefore);
    expect(await Promise.all(turns.map((turn) => exists(turn.options.turnId)))).toEqual([false, false, false]);
  });
});
