/**
 * The server's side of the query stall (connection/query-retry.ts, docs/streaming.md): a workflow
 * that has completed no workflow task yet holds one query in its buffer and refuses the next with
 * the status that turnpike's connections ask again at once, where the SDK's default retry waits
 * 1.4–2 s. Both queries go through a Connection without retries, so each answer is the server's own.
 */
import { afterAll, beforeAll, expect, it, inject } from 'vitest';
import { Client, Connection } from '@temporalio/client';
import { isFullQueryBuffer } from '../../connection/query-retry.js';
import { temporalConnectionOptions } from '../../connection/temporal-connection.js';
import { turnEventsQuery } from '../../workflows/messages/definitions.js';
import { testTools } from '../support/test-tools.js';
import { startTurnpike, type TurnpikeHarness } from '../support/turnpike-harness.js';

let turnpike: TurnpikeHarness;
let connection: Connection;
beforeAll(async () => {
  turnpike = await startTurnpike({ tools: testTools });
  connection = await Connection.connect(temporalConnectionOptions({ address: inject('temporalAddress'), interceptors: [] }));
});
afterAll(async () => {
  await connection?.close();
  await turnpike?.stop();
});

/** The gRPC status under a client error. */
function statusOf(error: unknown): { code: number; details: string } | undefined {
  for (let current = error, depth = 0; current && depth < 5; current = (current as { cause?: unknown }).cause, depth++) {
    const { code, details } = current as { code?: unknown; details?: unknown };
    if (typeof code === 'number' && typeof details === 'string') return { code, details };
  }
  return undefined;
}

it("refuses a second query while a turn's first workflow task is pending, with the status turnpike's connections ask again at once", async () => {
  // No worker: the turn's first workflow task stays scheduled, so every query is buffered.
  await turnpike.stopWorker();
  const handle = await turnpike.startTurn({ text: 'Hello.' });
  const client = new Client({ connection, namespace: turnpike.client.options.namespace, dataConverter: turnpike.client.options.dataConverter });
  const queries = [0, 1].map((index) =>
    client.workflow
      .getHandle(handle.workflowId)
      .query(turnEventsQuery, { fromOffset: 0 })
      .then(
        (page) => ({ index, page }),
        (error: unknown) => ({ index, error }),
      ),
  );
  // One takes the buffer's only place and waits; the other is refused at once.
  const first = await Promise.race(queries);
  expect(first).toHaveProperty('error');
  const status = statusOf((first as { error: unknown }).error);
  expect(status?.code).toBe(8);
  expect(isFullQueryBuffer(status!)).toBe(true);

  // The buffered one is answered once a worker completes the task.
  await turnpike.startWorker();
  const other = await queries[1 - first.index]!;
  expect(other).toHaveProperty('page');
  await handle.result();
});
