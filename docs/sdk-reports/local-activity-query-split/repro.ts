/**
 * Standalone repro: query attached to a WFT in which a local activity completes, combined with an
 * update accepted in the following WFT, yields a history that fails replay with TMPRL1100
 * (Activity machine does not handle WorkflowExecutionUpdateAccepted).
 *
 * Usage: TEMPORAL_CLI=/path/to/temporal npx tsx repro.ts [variant] [runs] [iterations]
 *   variant: both | updates-only | queries-only   (default both)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Connection, Client, WorkflowHandle } from '@temporalio/client';
import { Worker, NativeConnection, Runtime, bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import proto from '@temporalio/proto';
const { temporal } = proto;
import type { loopWorkflow } from './workflows.js';

const variant = (process.argv[2] ?? 'both') as 'both' | 'updates-only' | 'queries-only';
const runs = Number(process.argv[3] ?? 3);
const iterations = Number(process.argv[4] ?? 300);
const QUERY_CALLERS = 3;
const UPDATE_CALLERS = 3;
const MAX_UPDATES = 1500; // stay under the default per-execution total-updates limit (2000)
const LA_MS = Number(process.env.LA_MS ?? 2);

const cli = process.env.TEMPORAL_CLI;
if (!cli) throw new Error('set TEMPORAL_CLI');

Runtime.install({
  logger: new DefaultLogger('WARN'),
  // Optional: CORE_FILTER='temporalio_sdk_core=debug' prints Core's own logs to stderr.
  ...(process.env.CORE_FILTER ? { telemetryOptions: { logging: { filter: process.env.CORE_FILTER } } } : {}),
});

async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => res(p));
    });
    s.on('error', rej);
  });
}

const typeName = (t: unknown) =>
  (temporal.api.enums.v1.EventType[t as number] ?? String(t)).replace(/^EVENT_TYPE_/, '');

async function main() {
  const port = await freePort();
  const server: ChildProcess = spawn(
    cli!,
    ['server', 'start-dev', '--headless', '--port', String(port), '--ip', '127.0.0.1', '--log-level', 'error'],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const address = `127.0.0.1:${port}`;
  try {
    let connection: Connection | undefined;
    for (let i = 0; i < 100 && !connection; i++) {
      try {
        connection = await Connection.connect({ address });
        await connection.workflowService.getSystemInfo({});
      } catch {
        connection = undefined;
        await sleep(200);
      }
    }
    if (!connection) throw new Error('server did not come up');
    const client = new Client({ connection });
    const nativeConnection = await NativeConnection.connect({ address });
    const workflowBundle = await bundleWorkflowCode({
      workflowsPath: fileURLToPath(new URL('./workflows.ts', import.meta.url)),
      logger: new DefaultLogger('WARN'),
    });

    let failures = 0;
    for (let run = 1; run <= runs; run++) {
      const taskQueue = `la-query-${variant}-${run}-${Date.now()}`;
      const workflowId = `wf-${taskQueue}`;
      const worker = await Worker.create({
        connection: nativeConnection,
        taskQueue,
        workflowBundle,
        activities: {
          async localStep(i: number) {
            if (LA_MS > 0) await sleep(LA_MS);
            return i;
          },
          async remoteStep(i: number) {
            return i;
          },
        },
      });
      const stats = { queries: 0, queryErrs: 0, updates: 0, updateErrs: 0 };
      const t0 = Date.now();
      await worker.runUntil(async () => {
        const handle: WorkflowHandle<typeof loopWorkflow> = await client.workflow.start('loopWorkflow', {
          taskQueue,
          workflowId,
          args: [iterations],
        });
        let done = false;
        const result = handle.result().finally(() => (done = true));
        const loops: Promise<void>[] = [];
        if (variant !== 'updates-only') {
          for (let c = 0; c < QUERY_CALLERS; c++)
            loops.push(
              (async () => {
                while (!done) {
                  try {
                    await handle.query('getIter');
                    stats.queries++;
                  } catch {
                    stats.queryErrs++;
                  }
                }
              })(),
            );
        }
        if (variant !== 'queries-only') {
          for (let c = 0; c < UPDATE_CALLERS; c++)
            loops.push(
              (async () => {
                while (!done && stats.updates + stats.updateErrs < MAX_UPDATES) {
                  try {
                    await handle.executeUpdate('ping');
                    stats.updates++;
                  } catch {
                    stats.updateErrs++;
                    await sleep(20);
                  }
                }
              })(),
            );
        }
        await result;
        await Promise.all(loops);
      });
      const handle = client.workflow.getHandle(workflowId);
      const history = await handle.fetchHistory();
      const events = history.events ?? [];
      const types = events.map((e) => typeName(e.eventType));
      const markers = types.filter((t) => t === 'MARKER_RECORDED').length;
      // "split" marker: the WFT that recorded the LA marker did not also schedule the follow-up
      // activity (next non-update event after the marker is a new WFT). "bad": in the following
      // WFT an update is accepted before the ACTIVITY_TASK_SCHEDULED.
      let split = 0;
      let bad = 0;
      for (let i = 0; i < types.length; i++) {
        if (types[i] !== 'MARKER_RECORDED') continue;
        let j = i + 1;
        while (j < types.length && types[j].startsWith('WORKFLOW_EXECUTION_UPDATE')) j++;
        if (types[j] !== 'WORKFLOW_TASK_SCHEDULED') continue;
        split++;
        let k = j;
        while (k < types.length && types[k] !== 'WORKFLOW_TASK_COMPLETED') k++;
        if (types[k + 1] === 'WORKFLOW_EXECUTION_UPDATE_ACCEPTED') bad++;
      }
      let verdict = 'replay OK';
      try {
        await Worker.runReplayHistory({ workflowBundle }, history, workflowId);
      } catch (err) {
        failures++;
        const msg = (err as Error).message;
        verdict = `REPLAY FAILED: ${(err as Error).name}: ${msg}`;
        const file = `failing-history-${variant}-run${run}.json`;
        writeFileSync(file, historyToJSON(history));
        if (!process.env.NO_MAIN_SAVE) writeFileSync('failing-history.json', historyToJSON(history));
        const m = /id: (\d+)/.exec(msg);
        if (m) {
          const id = Number(m[1]);
          console.log(`  events around ${id} (saved ${file}):`);
          for (const e of events) {
            const eid = Number(e.eventId);
            if (eid >= id - 14 && eid <= id + 3) {
              let extra = '';
              if (e.activityTaskScheduledEventAttributes) extra = ` activityType=${e.activityTaskScheduledEventAttributes.activityType?.name}`;
              if (e.markerRecordedEventAttributes) extra = ` marker=${e.markerRecordedEventAttributes.markerName}`;
              if (e.workflowExecutionUpdateAcceptedEventAttributes) extra = ` update=${e.workflowExecutionUpdateAcceptedEventAttributes.acceptedRequest?.input?.name}`;
              if (e.workflowTaskCompletedEventAttributes) extra = ` sdkMetadata.langUsedFlags=${JSON.stringify(e.workflowTaskCompletedEventAttributes.sdkMetadata?.langUsedFlags ?? [])}`;
              console.log(`    ${eid} ${typeName(e.eventType)}${extra}`);
            }
          }
        }
      }
      console.log(
        `[${variant}] run ${run}: ${((Date.now() - t0) / 1000).toFixed(1)}s events=${events.length} markers=${markers} splitMarkers=${split} splitThenUpdateAccepted=${bad} ` +
          `queries=${stats.queries}(err ${stats.queryErrs}) updates=${stats.updates}(err ${stats.updateErrs}) -> ${verdict}`,
      );
    }
    console.log(`[${variant}] SUMMARY: ${failures}/${runs} runs failed replay`);
    await nativeConnection.close();
    await connection.close();
  } finally {
    server.kill('SIGTERM');
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
