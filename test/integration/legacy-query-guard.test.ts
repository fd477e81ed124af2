/**
 * A failed activation inside a legacy query's task must not shut the worker down
 * (workflows/legacy-query-guard.ts; docs/sdk-reports/legacy-query-update-no-validator).
 *
 * 1. Worker A runs `failsOnLiveResult` until it waits on its activity (served by a worker of
 *    its own), then stops.
 * 2. A query is sent: no workflow task is pending, so the server holds it as a legacy query task.
 * 3. The activity completes.
 * 4. Worker B (empty cache) starts, bundled with `TurnpikePlugin`. Taking the query's task, Core
 *    replays the history it carries, which ends with the activity's result: the workflow meets
 *    it live, adds a memo command and throws (the activation fails). Core answers the query with
 *    that failure, then hands the query to the same instance again. Without the guard, the
 *    answer carries the failed activation's memo command, Core refuses the completion and the
 *    worker shuts itself down (3 of 3 in the report's repro); with it, worker B keeps running.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { TurnpikePlugin } from '../../worker/plugin.js';
import { quietBundlerLogger } from '../../worker/quiet-bundler-logger.js';
import { statusQuery } from '../support/workflows/fails-on-live-result.js';

const WORKFLOWS = fileURLToPath(new URL('../support/workflows/fails-on-live-result.ts', import.meta.url));

describe('a failed activation in a legacy query task', () => {
  let connection: Connection;
  let nativeConnection: NativeConnection;
  let client: Client;
  let activityWorker: Worker;
  let activitiesRunning: Promise<void>;

  beforeAll(async () => {
    connection = await Connection.connect({ address: inject('temporalAddress') });
    client = new Client({ connection, namespace: inject('temporalNamespace') });
    nativeConnection = await NativeConnection.connect({ address: inject('temporalAddress') });
    activityWorker = await Worker.create({
      connection: nativeConnection,
      namespace: inject('temporalNamespace'),
      taskQueue: 'legacy-query-guard-activities',
      activities: {
        async slowStep(ms: number) {
          await sleep(ms);
          return ms;
        },
      },
    });
    activitiesRunning = activityWorker.run();
  });
  afterAll(async () => {
    activityWorker?.shutdown();
    await activitiesRunning;
    await nativeConnection?.close();
    await connection?.close();
  });

  it('fails the query, and the worker keeps running (TurnpikePlugin bundles the guard)', { timeout: 120_000 }, async () => {
    const workflowBundle = await bundleWorkflowCode({ workflowsPath: WORKFLOWS, plugins: [new TurnpikePlugin()], logger: quietBundlerLogger });
    const taskQueue = `legacy-query-guard-${Date.now()}`;
    const workflowId = `wf-${taskQueue}`;
    const workflowWorker = () => Worker.create({ connection: nativeConnection, namespace: inject('temporalNamespace'), taskQueue, workflowBundle });
    const handle = client.workflow.getHandle(workflowId);
    const eventTypes = async () => ((await handle.fetchHistory()).events ?? []).map((event) => event.eventType);
    const waitFor = async (type: number) => {
      for (let attempt = 0; attempt < 300; attempt++) {
        if ((await eventTypes()).includes(type)) return;
        await sleep(100);
      }
      throw new Error(`${workflowId} never had event type ${type}`);
    };
    const ACTIVITY_SCHEDULED = 10;
    const ACTIVITY_COMPLETED = 12;

    const a = await workflowWorker();
    await a.runUntil(async () => {
      await client.workflow.start('failsOnLiveResult', { taskQueue, workflowId, args: [3000] });
      await waitFor(ACTIVITY_SCHEDULED);
      await sleep(300); // the task that scheduled it completes
    });
    // No worker polls the queue: the query waits as a legacy query task.
    const query = handle.query(statusQuery).then(
      (answer) => ({ answered: answer }),
      (error: Error) => ({ failed: error.message }),
    );
    await waitFor(ACTIVITY_COMPLETED);
    const b = await workflowWorker();
    const running = b.run();
    try {
      const outcome = await query;
      // The path under test happened: the activation failed inside the query's task.
      expect(outcome).toEqual({ failed: expect.stringContaining('met only live') });
      await sleep(3_000); // a worker that refused its completion has shut itself down by now
      expect(b.getState()).toBe('RUNNING');
    } finally {
      await handle.terminate('test over').catch(() => undefined);
      if (b.getState() === 'RUNNING') b.shutdown();
      await Promise.race([running.catch(() => undefined), sleep(20_000)]);
    }
  });
});
