/**
 * One variant of the fleet figure (scenarios/fleet.ts): three worker processes on the variant's
 * settings and a fake provider that enforces the organisation's limits; B's turns alone, then
 * A's burst with B's turns one a second, measured from the client, the provider and the
 * histories.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Client, WorkflowHandle } from '@temporalio/client';
import proto from '@temporalio/proto';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { startWorkerProcess } from '../../test/chaos/chaos-support.js';
import { startFakeProviderServer } from '../../test/fake-provider/server.js';
import { providerRateLimit } from '../../test/fake-provider/rate-limit.js';
import type { BenchContext } from '../context.js';
import type { FleetStarter } from '../options.js';
import { percentile, round } from '../stats.js';
import { counterEnvironment, type FleetCounter } from './fleet-counter.js';
import { cpuStretch, type CpuStretch } from './fleet-cpu.js';
import { phasesOf, phaseSummary, type ClientTimes, type TurnPhases } from './fleet-phases.js';
import { startFleetTurn, startTenantA } from './fleet-turn.js';

const { EventType } = proto.temporal.api.enums.v1;

/**
 * The organisation's limits: 600 requests and 48,000 tokens a minute, enforced over 10 s windows
 * (100 requests, 8,000 tokens); at 100 tokens a call, 8 calls a second (TPM binds).
 */
export const PROVIDER = { requestsPerMinute: 600, tokensPerMinute: 48_000, windowMs: 10_000 };
/**
 * The model queue's rate across the fleet, calls a second (`--fleet-rate` for another). Temporal's
 * limiter allows a burst of a second's worth, so over the provider's 10 s window it may dispatch
 * 11 s of calls, and the workers' own delays bunch them: at 7.2 (79.2 in a window of 80) 13 calls
 * met a 429, at 7.5 10; at 6.8 (74.8) none.
 */
export const QUEUE_RATE = 6.8;
/**
 * The workflow tasks each worker takes at once in the model queue variants
 * (`TURNPIKE_MAX_CONCURRENT_WORKFLOW_TASKS`; `--fleet-workflow-tasks`): a task taken waits on the
 * worker's workflow thread behind those taken before it, so with the SDK's 40 a B turn's task
 * waits behind up to 39 of A's first tasks; with 4 the rest wait in the server's queue, where B's
 * priority puts it first.
 */
export const WORKFLOW_TASKS = 4;
export const WORKERS = 3;
const HISTORY_SAMPLE = 20;

export interface FleetVariant {
  server: string;
  /** 429s the provider answered, by the limit that refused them. */
  rejected: { requests: number; tokens: number };
  /** When the 429s came, in seconds since A's burst began (negative: while B ran alone), by 10 s. */
  rejectedBySecond: Record<string, number>;
  admitted: number;
  /** B's turns (ms, start → result): alone, then while A's burst runs. */
  bAlone: { n: number; p50: number; p95: number };
  bUnderBurst: { n: number; p50: number; p95: number };
  /** B's turns alone and under the burst, by phase (scenarios/fleet-phases.ts); absent in runs before it. */
  bPhasesAlone?: ReturnType<typeof phaseSummary>;
  bPhasesUnderBurst?: ReturnType<typeof phaseSummary>;
  /** How long the bench took to start A's turns (`aStartConcurrency` at a time; 50 in runs without it), and B's turns started after that (absent in runs before it). */
  aStartsSeconds?: number;
  bAfterAStarts?: { n: number; p50: number; p95: number };
  /** B's five slowest turns under the burst: when each started, in seconds since A's burst began, and its latency. */
  bSlowestUnderBurst?: Array<{ atS: number; ms: number }>;
  /** Where A's starts ran: a process of their own (the default) or the bench's (absent in runs before it: the bench's). */
  aStarter?: FleetStarter;
  aStartConcurrency?: number;
  /** The cores each process used while A's turns were started, and after (scenarios/fleet-cpu.ts; absent in runs before it). */
  cpu?: { aStarts: CpuStretch; afterStarts: CpuStretch };
  aTurns: number;
  aSeconds: number;
  /** A's turns a second, and A's and B's model calls a second, each ÷ the provider's allowed calls a second. */
  aPerSecond: number;
  aShareOfLimit: number;
  allShareOfLimit: number;
  /** From `HISTORY_SAMPLE` of A's turns: events per turn, and callModel attempts per turn. */
  eventsPerTurn: number;
  modelAttemptsPerTurn: number;
  /** The same sample's events per turn by type. */
  eventTypes: Record<string, number>;
}

const latency = (samples: number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return { n: sorted.length, p50: round(percentile(sorted, 50), 0), p95: round(percentile(sorted, 95), 0) };
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface VariantSetup {
  name: string;
  client: Client;
  address: string;
  namespace: string;
  withModelQueue: boolean;
  /** The token counter's database and settings, for the variant that books its calls there. */
  tokenCounterUrl?: string;
  counter?: FleetCounter;
  queueRate?: number;
  /** The server's and the token counter's PostgreSQL's processes, for where the CPU went (scenarios/fleet-cpu.ts). */
  serverPid?: number;
  postgresPid?: number;
}

export async function runVariant(context: BenchContext, setup: VariantSetup, aTurns: number, bAloneTurns: number): Promise<FleetVariant> {
  const fake = await startFakeProviderServer();
  const limit = providerRateLimit(PROVIDER);
  // When each of B's requests last reached the provider (the attempt that ran), by its question (`tenant-b question N`).
  const bRequests = new Map<string, number>();
  fake.setDefault('openai', (body) => {
    const content = (body as { messages?: Array<{ content?: unknown }> }).messages?.at(-1)?.content;
    const question = Array.isArray(content) ? (content[0] as { text?: unknown } | undefined)?.text : content;
    if (typeof question === 'string' && question.startsWith('tenant-b ')) bRequests.set(question, Date.now());
    return limit.respond(body);
  });
  const taskQueue = `bench-fleet-${setup.name}-${randomUUID().slice(0, 8)}`;
  const modelQueue = `${taskQueue}-models`;
  const env: Record<string, string> = {
    TEMPORAL_ADDRESS: setup.address,
    TEMPORAL_NAMESPACE: setup.namespace,
    TURNPIKE_TASK_QUEUE: taskQueue,
    WORKFLOW_BUNDLE: context.bundlePaths.turnpike,
    OPENAI_API_KEY: 'sk-bench-fleet',
    OPENAI_BASE_URL: fake.openaiBaseURL,
    ...(setup.withModelQueue
      ? {
          TURNPIKE_MODEL_TASK_QUEUE: modelQueue,
          TURNPIKE_MODEL_REQUESTS_PER_SECOND: String(setup.queueRate ?? context.options.fleetRate ?? QUEUE_RATE),
          TURNPIKE_MAX_CONCURRENT_WORKFLOW_TASKS: String(context.options.fleetWorkflowTasks ?? WORKFLOW_TASKS),
        }
      : {}),
    ...(setup.tokenCounterUrl && setup.counter ? counterEnvironment(setup.tokenCounterUrl, setup.counter) : {}),
  };
  const workers = await Promise.all(Array.from({ length: WORKERS }, () => startWorkerProcess(env, 'test/support/env-worker-process.ts')));
  const turnpike = new TurnpikeClient({ client: setup.client, taskQueue, ...(setup.withModelQueue ? { modelTaskQueue: modelQueue } : {}) });
  const start = (tenant: string, priority: 'interactive' | 'batch', index: number) => startFleetTurn(turnpike, tenant, priority, index, `fleet-${tenant}-${randomUUID()}`);
  const aStarter = context.options.fleetStarter ?? 'process';
  const aPrefix = `fleet-tenant-a-${randomUUID()}`;
  const starter = aStarter === 'process'
    ? await startWorkerProcess({ ...env, FLEET_TURNS: String(aTurns), FLEET_START_CONCURRENCY: String(context.options.fleetStartConcurrency), FLEET_TURN_PREFIX: aPrefix, ...(setup.withModelQueue ? { TURNPIKE_MODEL_TASK_QUEUE: modelQueue } : {}) }, 'bench/scenarios/fleet-a-starter.ts')
    : undefined;
  /** A's turns, started `fleetStartConcurrency` at a time, by the starter process or here; resolves once all have started. */
  const startA = async (): Promise<WorkflowHandle[]> => {
    if (!starter) return startTenantA(turnpike, aTurns, aPrefix, context.options.fleetStartConcurrency);
    if (starter.child.exitCode !== null) throw new Error(`A's starter exited with ${starter.child.exitCode} before the burst: ${starter.output()}`);
    const done = new Promise<void>((resolve, reject) => {
      const started = () => {
        if (!/^started /m.test(starter.output())) return;
        starter.child.stdout!.off('data', started);
        resolve();
      };
      starter.child.stdout!.on('data', started);
      starter.child.once('exit', (code) => reject(new Error(`A's starter exited with ${code}: ${starter.output()}`)));
    });
    starter.child.kill('SIGUSR2');
    await done;
    return Array.from({ length: aTurns }, (_, index) => setup.client.workflow.getHandle(`${aPrefix}-${index}`));
  };
  const bTurns: Array<{ handle: WorkflowHandle; times: ClientTimes }> = [];
  const bTurn = async (index: number) => {
    const started = performance.now();
    const startedAt = Date.now();
    const handle = await start('tenant-b', 'interactive', index);
    const result = await handle.result();
    if (result.status !== 'completed') throw new Error(`B's turn ended ${result.status}`);
    bTurns[index] = { handle, times: { startedAt, requestAt: bRequests.get(`tenant-b question ${index}`) ?? NaN, endedAt: Date.now() } };
    return performance.now() - started;
  };
  /** Where the time of B's turns `from`..`to` went, from their histories. */
  const phasesOfB = async (from: number, to?: number) => {
    const phases: TurnPhases[] = [];
    for (const { handle, times } of bTurns.slice(from, to)) {
      const turn = phasesOf((await handle.fetchHistory()).events ?? [], times);
      if (turn) phases.push(turn);
    }
    return phases.length > 0 ? phaseSummary(phases) : undefined;
  };
  try {
    // Two turns of B's that warm the workers and connections up, not measured; then B alone, one a second.
    for (const index of [0, 1]) await start('tenant-b', 'interactive', -1 - index).then((handle) => handle.result());
    const alone = await Promise.all(Array.from({ length: bAloneTurns }, async (_, index) => {
      await sleep(index * 1_000);
      return bTurn(index);
    }));
    context.log(`  fleet ${setup.name}: B alone p50 ${latency(alone).p50} ms; starting A's ${aTurns} turns`);

    // A's burst, and B's turns one a second until A's have all ended.
    const processes = { server: [setup.serverPid], workers: workers.map((worker) => worker.child.pid), bench: [process.pid], ...(starter ? { aStarter: [starter.child.pid] } : {}) };
    const trees = setup.tokenCounterUrl ? { postgres: setup.postgresPid } : {};
    const duringStarts = cpuStretch(processes, trees);
    const burstStarted = performance.now();
    const burstStartedAt = Date.now();
    let aDone = false;
    const under: Promise<number>[] = [];
    const bLoop = (async () => {
      for (let index = 0; !aDone; index++) {
        under.push(bTurn(bAloneTurns + index));
        await sleep(1_000);
      }
    })();
    const handles = await startA();
    const aStartsMs = Date.now() - burstStartedAt;
    const aStartsCpu = duringStarts.end();
    const afterStarts = cpuStretch(processes, trees);
    let ended = 0;
    await Promise.all(handles.map(async (handle) => {
      const result = await handle.result();
      if (result.status !== 'completed') throw new Error(`A's turn ended ${result.status}`);
      if (++ended % 100 === 0) context.log(`  fleet ${setup.name}: ${ended} of A's turns ended, ${limit.rejected} 429s so far`);
    }));
    const aSeconds = (performance.now() - burstStarted) / 1_000;
    const cpu = { aStarts: aStartsCpu, afterStarts: afterStarts.end() };
    aDone = true;
    await bLoop;
    const underBurst = await Promise.all(under);
    const bPhasesAlone = await phasesOfB(0, bAloneTurns);
    const bPhasesUnderBurst = await phasesOfB(bAloneTurns);
    const bSlowestUnderBurst = bTurns
      .slice(bAloneTurns)
      .map(({ times }) => ({ atS: round((times.startedAt - burstStartedAt) / 1_000, 1), ms: times.endedAt - times.startedAt }))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 5);

    // Events and callModel attempts per turn, from a sample of A's histories.
    let events = 0;
    let attempts = 0;
    const types: Record<string, number> = {};
    const sample = handles.slice(0, HISTORY_SAMPLE);
    for (const handle of sample) {
      const history = (await handle.fetchHistory()).events ?? [];
      events += history.length;
      for (const event of history) {
        const type = EventType[event.eventType ?? 0]?.replace('EVENT_TYPE_', '') ?? String(event.eventType);
        types[type] = (types[type] ?? 0) + 1;
      }
      const scheduled = new Set(history.filter((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel').map((event) => String(event.eventId)));
      for (const event of history) {
        const started = event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED ? event.activityTaskStartedEventAttributes : undefined;
        if (started && scheduled.has(String(started.scheduledEventId))) attempts += started.attempt ?? 1;
      }
    }
    const aPerSecond = aTurns / aSeconds;
    const allCalls = aTurns + underBurst.length;
    const figures: FleetVariant = {
      server: setup.withModelQueue ? `own dev server, matching.enableFairness=true, 1 read / 1 write partition${setup.tokenCounterUrl ? '; token counter in PostgreSQL, provider headers followed' : ''}` : "the run's dev server, stock matcher",
      rejected: { ...limit.rejectedBy },
      rejectedBySecond: limit.rejectedAt.reduce<Record<string, number>>((counts, at) => {
        const bucket = String(Math.floor((at - burstStartedAt) / 10_000) * 10);
        counts[bucket] = (counts[bucket] ?? 0) + 1;
        return counts;
      }, {}),
      admitted: limit.admitted.length,
      bAlone: latency(alone),
      bUnderBurst: latency(underBurst),
      aStartsSeconds: round(aStartsMs / 1_000, 1),
      bAfterAStarts: latency(bTurns.slice(bAloneTurns).filter(({ times }) => times.startedAt - burstStartedAt >= aStartsMs).map(({ times }) => times.endedAt - times.startedAt)),
      ...(bPhasesAlone ? { bPhasesAlone } : {}),
      ...(bPhasesUnderBurst ? { bPhasesUnderBurst } : {}),
      bSlowestUnderBurst,
      aStarter,
      aStartConcurrency: context.options.fleetStartConcurrency,
      cpu,
      aTurns,
      aSeconds: round(aSeconds, 1),
      aPerSecond: round(aPerSecond, 2),
      aShareOfLimit: round(aPerSecond / limit.callsPerSecond, 3),
      allShareOfLimit: round(allCalls / aSeconds / limit.callsPerSecond, 3),
      eventsPerTurn: round(events / sample.length, 1),
      modelAttemptsPerTurn: round(attempts / sample.length, 2),
      eventTypes: Object.fromEntries(Object.entries(types).map(([type, count]) => [type, round(count / sample.length, 2)])),
    };
    context.log(`  fleet ${setup.name}: ${JSON.stringify(figures)}`);
    return figures;
  } finally {
    await Promise.all([...workers, ...(starter ? [starter] : [])].map((worker) => worker.terminate()));
    await fake.close();
  }
}
