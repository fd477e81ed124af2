/**
 * Many tenants on one fleet (issue 55): three worker processes share one OpenAI key whose
 * organisation allows so many requests and tokens a minute (a fake that enforces both, with
 * OpenAI's own 429 body and `x-ratelimit-*` / `retry-after` headers, test/fake-provider/rate-limit.ts).
 * Tenant A starts `fleetTurns` batch turns at once; tenant B starts one interactive turn a second
 * while A's run, after 20 alone (5 with --quick; two before them, unmeasured, warm the workers and
 * connections up). Three variants in one run:
 *   - today: no model queue, on the run's dev server (the matcher FIFO); every worker calls the
 *     model as fast as it can, and each 429 is retried after `retry-after`;
 *   - model queue: `modelTaskQueue` on the client, `TURNPIKE_MODEL_*` on each worker, the queue's
 *     rate under the provider's, on a dev server of its own with `matching.enableFairness=true`
 *     and one read and one write partition (so the rate and the order are exact; see
 *     docs/tenants-and-capacity.md);
 *   - model queue and token counter: the same, with the queue at `TOKENS_QUEUE_RATE`, each worker
 *     booking its calls in one PostgreSQL token counter (`TURNPIKE_MODEL_TOKENS_*`, a private
 *     PostgreSQL from scripts/postgres.ts) and following the provider's headers; on the same
 *     fairness dev server, with queues of its own.
 * Each variant reports the 429s, B's latency (start → result) alone and under A's burst, A's
 * throughput against the provider's limit, and, from a sample of histories, the events and
 * `callModel` attempts per turn (each attempt, a retry included, is a Temporal action).
 * turnpike only: the floor has no model queue.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { connectTemporal } from '../../connection/temporal-connection.js';
import { turnpikeDataConverter } from '../../content/data-converter.js';
import { startDevServer } from '../../scripts/dev-server.js';
import { startPostgres } from '../../scripts/postgres.js';
import { freeLowPort } from '../../test/support/free-port.js';
import { providerRateLimit } from '../../test/fake-provider/rate-limit.js';
import type { BenchContext } from '../context.js';
import { SERVER_DYNAMIC_CONFIG } from '../options.js';
import { counterFor, TOKENS_QUEUE_RATE, type FleetCounter } from './fleet-counter.js';
import { PROVIDER, QUEUE_RATE, runVariant, WORKERS, WORKFLOW_TASKS, type FleetVariant } from './fleet-variant.js';
import { measureTokenCounterRate, type TokenCounterRate } from './token-counter-rate.js';

export type { FleetVariant } from './fleet-variant.js';

export interface FleetFigures {
  workers: number;
  provider: typeof PROVIDER & { tokensPerCall: number; callsPerSecond: number };
  queueRate: number;
  /** The workflow tasks each worker takes at once in the model queue variants (absent in runs before it: the SDK's 40). */
  workflowTasks?: number;
  today: FleetVariant;
  modelQueue: FleetVariant;
  /** The model queue at `tokensQueueRate` with the token counter and the provider's headers (absent in runs before it). */
  tokensQueueRate?: number;
  counter?: FleetCounter;
  tokenCounter?: FleetVariant;
  /** The PostgreSQL counter's bookings a second for one key (scenarios/token-counter-rate.ts). */
  counterRate?: TokenCounterRate;
}


export async function measureFleet(context: BenchContext): Promise<FleetFigures> {
  const { fleetTurns, quick } = context.options;
  const bAloneTurns = quick ? 5 : 20;
  const limit = providerRateLimit(PROVIDER);
  const today = await runVariant(context, { name: 'today', client: context.client, address: context.address, namespace: context.namespace, serverPid: context.serverPid, withModelQueue: false }, fleetTurns, bAloneTurns);

  const server = await startDevServer({
    headless: true,
    dynamicConfig: { ...SERVER_DYNAMIC_CONFIG, 'matching.enableFairness': true, 'matching.numTaskqueueReadPartitions': 1, 'matching.numTaskqueueWritePartitions': 1 },
    log: context.log,
  });
  const connection = await connectTemporal({ address: server.address });
  const directory = mkdtempSync(path.join(tmpdir(), 'turnpike-bench-fleet-'));
  // PostgreSQL runs as the postgres user when we are root: it must reach <directory>/pg.
  chmodSync(directory, 0o755);
  const port = await freeLowPort();
  const postgres = await startPostgres({ dataDirectory: path.join(directory, 'pg'), port, user: 'turnpike', password: 'bench-fleet', logFile: path.join(directory, 'postgres.log') });
  try {
    const client = new Client({ connection, namespace: server.namespace, dataConverter: turnpikeDataConverter });
    const common = { client, address: server.address, namespace: server.namespace, serverPid: server.pid, withModelQueue: true };
    const modelQueue = await runVariant(context, { ...common, name: 'model-queue' }, fleetTurns, bAloneTurns);
    const tokensQueueRate = context.options.fleetTokensRate ?? TOKENS_QUEUE_RATE;
    const counter = counterFor(context.options.fleetTokenWindow);
    const counterUrl = `postgresql://turnpike:bench-fleet@127.0.0.1:${port}/postgres`;
    const counterRate = await measureTokenCounterRate(counterUrl);
    context.log(`  fleet: token counter ${JSON.stringify(counterRate)}`);
    const tokenCounter = await runVariant(
      context,
      { ...common, name: 'token-counter', tokenCounterUrl: counterUrl, counter, queueRate: tokensQueueRate, postgresPid: postmasterPid(path.join(directory, 'pg')) },
      fleetTurns,
      bAloneTurns,
    );
    return {
      workers: WORKERS,
      provider: { ...PROVIDER, tokensPerCall: limit.tokensPerCall, callsPerSecond: limit.callsPerSecond },
      queueRate: context.options.fleetRate ?? QUEUE_RATE,
      workflowTasks: context.options.fleetWorkflowTasks ?? WORKFLOW_TASKS,
      today,
      modelQueue,
      tokensQueueRate,
      counter,
      tokenCounter,
      counterRate,
    };
  } finally {
    await connection.close();
    await server.stop();
    await postgres.stop();
    rmSync(directory, { recursive: true, force: true });
  }
}

/** The postmaster's pid, the first line of its data directory's postmaster.pid. */
function postmasterPid(dataDirectory: string): number | undefined {
  const pid = Number(readFileSync(path.join(dataDirectory, 'postmaster.pid'), 'utf8').split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}
