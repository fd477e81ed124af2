/**
 * Standalone attempt: an update delivered without its validator (`run_validator: false`) in a
 * workflow task that carries a legacy query, on a worker with an empty cache.
 *
 * Per workflow, while it runs its activity steps: two query loops (200 ms), a refused signal and
 * a refused update (unknown id, the validator throws) every 200 ms. Workers are restarted
 * gracefully every RESTART_EVERY workflows, or run with `maxCachedWorkflows: 0` (variant `nocache`).
 *
 * Usage: TEMPORAL_CLI=/path/to/temporal npx tsx repro.ts [restart|nocache] [workflows] [concurrency]
 * Env: RESTART_EVERY (default 10), STEPS (default 3), CORE_FILTER (e.g. temporalio_sdk_core=debug).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Connection, Client, type WorkflowHandle } from '@temporalio/client';
import { Worker, NativeConnection, Runtime, bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import proto from '@temporalio/proto';
import { approve, approveSignal, status, type parkingWorkflow } from './workflows.js';

const { temporal } = proto;
const variant = (process.argv[2] ?? 'restart') as 'restart' | 'nocache';
const TOTAL = Number(process.argv[3] ?? 100);
const CONCURRENCY = Number(process.argv[4] ?? 8);
const RESTART_EVERY = Number(process.env.RESTART_EVERY ?? 10);
const STEPS = Number(process.env.STEPS ?? 3);
const NOISE_EVERY_MS = 200;
const cli = process.env.TEMPORAL_CLI;
if (!cli) throw new Error('set TEMPORAL_CLI');

Runtime.install({
  logger: new DefaultLogger('ERROR'),
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

const typeName = (t: unknown) => (temporal.api.enums.v1.EventType[t as number] ?? String(t)).replace(/^EVENT_TYPE_/, '');

/** What the run saw. */
const seen = {
  workerFailures: [] as string[],
  legacyQueryWithCommands: 0,
  queryFailedWithHandlerError: 0,
  queries: 0,
  queryErrors: new Map<string, number>(),
  signals: 0,
  refusedUpdates: 0,
  acceptedBadUpdates: 0,
};
const suspects = new Set<string>();

function countError(message: string) {
  const key = message.split('\n')[0]!.slice(0, 160);
  seen.queryErrors.set(key, (seen.queryErrors.get(key) ?? 0) + 1);
}

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
    for (let i = 0; i < 150 && !connection; i++) {
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
    const workflowBundle = await bundleWorkflowCode({
      workflowsPath: fileURLToPath(new URL('./workflows.ts', import.meta.url)),
      logger: new DefaultLogger('ERROR'),
    });
    const taskQueue = `legacy-query-${variant}-${Date.now()}`;

    // One worker at a time; `restart()` stops it gracefully and starts the next one.
    let worker: Worker | undefined;
    let running: Promise<void> | undefined;
    let nativeConnection: NativeConnection | undefined;
    let failed = false; // the worker shut itself down
    const startWorker = async () => {
      nativeConnection = await NativeConnection.connect({ address });
      const w = await Worker.create({
        connection: nativeConnection,
        taskQueue,
        workflowBundle,
        shutdownGraceTime: '10s',
        ...(variant === 'nocache' ? { maxCachedWorkflows: 0 } : {}),
        activities: {
          async step(i: number) {
            await sleep(50 + Math.floor(Math.random() * 350));
            return i;
          },
        },
      });
      worker = w;
      running = w.run().catch((err: Error) => {
        const message = `${err.name}: ${err.message}`;
        seen.workerFailures.push(message);
        failed = true;
        if (/legacy query response along with other commands/.test(message)) seen.legacyQueryWithCommands++;
        console.log(`worker failed: ${message.slice(0, 600)}`);
      });
    };
    const stopWorker = async () => {
      if (worker && worker.getState() === 'RUNNING') worker.shutdown();
      await running;
      const closing = nativeConnection;
      nativeConnection = undefined;
      worker = undefined;
      await closing?.close();
    };
    // One restart at a time; lanes wait for it.
    let restarting: Promise<void> | undefined;
    const restart = async () => {
      if (!restarting) {
        restarting = (async () => {
          await stopWorker();
          failed = false;
          await startWorker();
        })().finally(() => (restarting = undefined));
      }
      await restarting;
    };
    await startWorker();

    const handles: WorkflowHandle<typeof parkingWorkflow>[] = [];
    let started = 0;
    const restartsAt = Array.from({ length: Math.ceil(TOTAL / RESTART_EVERY) - 1 }, (_, i) => (i + 1) * RESTART_EVERY);

    const runOne = async (index: number) => {
      const workflowId = `wf-${index}-${Date.now()}`;
      const handle = await client.workflow.start<typeof parkingWorkflow>('parkingWorkflow', { taskQueue, workflowId, args: [STEPS] });
      handles.push(handle);
      const done = new AbortController();
      let badUpdates = 0;
      const loop = async (work: () => Promise<void>) => {
        while (!done.signal.aborted) {
          await work().catch(() => undefined);
          await sleep(NOISE_EVERY_MS);
        }
      };
      const query = async () => {
        try {
          await handle.query(status);
          seen.queries++;
        } catch (err) {
          const message = `${(err as Error).name}: ${(err as Error).message}`;
          countError(message);
          if (/Cannot read properties of undefined/.test(message)) {
            seen.queryFailedWithHandlerError++;
            suspects.add(workflowId);
            console.log(`query failed with the handler's error on ${workflowId}: ${message.slice(0, 300)}`);
          }
        }
      };
      const noise = Promise.all([
        loop(query),
        loop(query),
        loop(async () => {
          await handle.signal(approveSignal, 'apr_unknown');
          seen.signals++;
        }),
        loop(async () => {
          try {
            // Ids that name the workflow, to find its updates in Core's debug log.
            await handle.executeUpdate(approve, { args: ['apr_unknown'], updateId: `bad-${index}-${++badUpdates}` });
            seen.acceptedBadUpdates++;
            suspects.add(workflowId);
          } catch {
            seen.refusedUpdates++;
          }
        }),
      ]);
      try {
        // Wait until parked, then decide.
        for (;;) {
          try {
            if ((await handle.query(status)) === 'awaiting-input') break;
          } catch {
            // counted by the loops
          }
          await sleep(100);
        }
        await handle.executeUpdate(approve, { args: ['apr_1'] }).catch(async (err) => {
          // Refused or lost (e.g. its task failed with UnhandledCommand): decide by signal instead.
          console.log(`decision update on ${workflowId}: ${(err as Error).message}: ${((err as Error).cause as Error | undefined)?.message}`);
          await handle.signal(approveSignal, 'apr_1');
        });
        await handle.result();
      } finally {
        done.abort();
        await noise;
      }
    };

    const t0 = Date.now();
    const lanes = Array.from({ length: CONCURRENCY }, async () => {
      while (started < TOTAL) {
        const index = started++;
        if (variant === 'restart' && restartsAt[0] !== undefined && index >= restartsAt[0]) {
          restartsAt.shift();
          console.log(`restart at workflow ${index} (${((Date.now() - t0) / 1000).toFixed(1)}s)`);
          await restart();
        }
        if (failed) await restart();
        if (restarting) await restarting;
        await runOne(index).catch((err) => {
          console.log(`workflow ${index} failed: ${(err as Error).message}`);
        });
      }
    });
    await Promise.all(lanes);

    // Histories: failed workflow tasks, accepted updates with the unknown id.
    let failedTasks = 0;
    for (const handle of handles) {
      const history = await handle.fetchHistory();
      let bad = false;
      for (const e of history.events ?? []) {
        const failure = e.workflowTaskFailedEventAttributes?.failure?.message;
        // UnhandledCommand: a signal arrived as the workflow completed; the next task completes it.
        if (e.workflowTaskFailedEventAttributes && failure !== 'UnhandledCommand') {
          failedTasks++;
          bad = true;
          console.log(`${handle.workflowId} event ${e.eventId}: WFT failed: ${e.workflowTaskFailedEventAttributes.failure?.message?.slice(0, 200)}`);
        }
        const accepted = e.workflowExecutionUpdateAcceptedEventAttributes;
        if (accepted && JSON.stringify(accepted.acceptedRequest?.input?.args ?? '').includes('YXByX3Vua25vd24')) bad = true; // base64 of "apr_unknown"
      }
      if (bad || suspects.has(handle.workflowId)) {
        const file = `history-${variant}-${handle.workflowId}.json`;
        writeFileSync(file, historyToJSON(history));
        console.log(`saved ${file} (${history.events?.length} events: ${(history.events ?? []).slice(-40).map((e) => `${e.eventId}:${typeName(e.eventType)}`).join(' ')})`);
      }
    }
    await stopWorker();
    console.log(
      `[${variant}] ${TOTAL} workflows in ${((Date.now() - t0) / 1000).toFixed(0)}s: ` +
        JSON.stringify({ ...seen, queryErrors: Object.fromEntries(seen.queryErrors), failedTasks }),
    );
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
