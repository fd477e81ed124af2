/**
 * Fairness and priority switched on: a dev server of this file's own with
 * `matching.enableFairness` (which brings the new matcher, and with it priority), one read and one
 * write partition so that the order is exact, and a worker that runs one workflow task at a time.
 * While no worker polls, tenant acme queues a backlog of turns, then tenant globex queues one,
 * then acme queues one `interactive` turn. Once the worker starts, the order the turns' first
 * workflow tasks started in (read from their histories) shows globex's turn taken near the front,
 * not behind acme's backlog, and the interactive turn before both. The same turns on a queue
 * without fairness (the shared dev server's default) would go first in, first out.
 */
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { turnpikeDataConverter } from '../../content/data-converter.js';
import { startDevServer, type DevServer } from '../../scripts/dev-server.js';
import { createWorker } from '../../worker/create-worker.js';
import { testTools } from '../support/test-tools.js';

try {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
} catch {
  // Already installed in this process.
}

const { EventType } = temporal.api.enums.v1;
const BACKLOG = 12;

let server: DevServer | undefined;
let connection: Connection | undefined;
let native: NativeConnection | undefined;
let worker: Worker | undefined;
let running: Promise<void> | undefined;

beforeAll(async () => {
  server = await startDevServer({
    log: () => undefined,
    dynamicConfig: { 'matching.enableFairness': true, 'matching.numTaskqueueReadPartitions': 1, 'matching.numTaskqueueWritePartitions': 1 },
  });
  connection = await Connection.connect({ address: server.address });
});
afterAll(async () => {
  if (worker?.getState() === 'RUNNING') worker.shutdown();
  await running;
  await native?.close();
  await connection?.close();
  await server?.stop();
});

describe('a task queue with fairness on', () => {
  it("takes another tenant's turn near the front of a backlog, and an interactive turn first", async () => {
    const taskQueue = `fairness-${randomUUID()}`;
    const client = new TurnpikeClient({ client: new Client({ connection: connection!, namespace: server!.namespace, dataConverter: turnpikeDataConverter }), taskQueue });
    const input = { model: { provider: 'scripted', model: 'demo' } as const, messages: [{ role: 'user' as const, content: 'look up order 1001' }] };
    const backlog = Array.from({ length: BACKLOG }, (_, index) => `acme-${index}-${randomUUID()}`);
    for (const turnId of backlog) await client.startTurn(input, { turnId, tenant: 'acme' });
    const other = `globex-${randomUUID()}`;
    await client.startTurn(input, { turnId: other, tenant: 'globex' });
    const urgent = `acme-interactive-${randomUUID()}`;
    await client.startTurn(input, { turnId: urgent, tenant: 'acme', priority: 'interactive' });

    native = await NativeConnection.connect({ address: server!.address });
    worker = await createWorker({
      tools: testTools,
      taskQueue,
      connection: native,
      namespace: server!.namespace,
      workflowBundle: { codePath: inject('workflowBundlePath') },
      workerOptions: { maxConcurrentWorkflowTaskExecutions: 1, maxCachedWorkflows: 0 },
    });
    running = worker.run();
    const turns = [...backlog, other, urgent];
    for (const turnId of turns) expect((await client.turnResult(turnId)).status).toBe('completed');

    // When each turn's first workflow task started (the server's clock), in order.
    const firstTask = new Map<string, number>();
    for (const turnId of turns) {
      const { events } = await client.turn(turnId).fetchHistory();
      const started = events?.find((event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED);
      const { seconds, nanos } = started!.eventTime!;
      firstTask.set(turnId, Number(seconds) * 1e9 + (nanos ?? 0));
    }
    const order = [...turns].sort((a, b) => firstTask.get(a)! - firstTask.get(b)!);
    // Priority 1 goes before every priority-3 task queued ahead of it.
    expect(order.indexOf(urgent)).toBe(0);
    // Fairness: globex's one task is dispatched beside acme's, not after all twelve.
    expect(order.indexOf(other)).toBeLessThanOrEqual(3);
  });
});
