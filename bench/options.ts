/**
 * `npm run bench -- [flags]`: what to run and how much of it.
 *
 *   --quick                    small N and few repetitions (about 1–2 minutes on 2 cores)
 *   --only a,b                 scenarios to run: latency, resume, throughput, capacity, history, payload, scale, streaming, readers,
 *                              long-stream, large-image, ai-sdk-model, closed-turn, fleet; and cluster (issue 57: its
 *                              own PostgreSQL-backed cluster; only with --only, never in a full run); eval (issue 58:
 *                              recorded turns evaluated by an evaluation run; only with --only)
 *   --reps N                   measured turns per (system, step count) in the latency figure
 *   --parked N                 turns parked at once while resume latency is measured (default 1000)
 *   --resume-sample N          parked turns resumed and timed, one at a time, per system
 *   --throughput-turns N       turns per system in the throughput figure
 *   --concurrency N            concurrent starters in the throughput figure (default 200)
 *   --capacity N               turns parked at once for the memory / idle CPU figure (default 5000)
 *   --scale-stages a,b,c       parked turns per system at each stage of the scale figure (default 1000,5000,20000)
 *   --scale-sample N           parked turns resumed (cache misses) per system at the last scale stage (default 200)
 *   --idle-seconds N           idle window over which worker CPU is measured (default 10)
 *   --image-turns N            turns per side (with / without the image) in the large-image figure (default 5; 3 with --quick)
 *   --fleet-turns N            tenant A's turns started at once in the fleet figure (default 500; 100 with --quick)
 *   --fleet-rate R             the model queue's calls a second in the fleet figure (default 6.8, see scenarios/fleet.ts)
 *   --fleet-tokens-rate R      the same with the token counter (default 7.5)
 *   --fleet-token-window S     the token counter's window in seconds, over which it holds the provider's 8,000 tokens (default 10.5)
 *   --fleet-workflow-tasks N   the workflow tasks each worker takes at once in the model queue variants (default 4; the SDK's is 40)
 *   --fleet-starter W          where tenant A's turns are started: process (its own, the default) or inline (the bench's)
 *   --fleet-start-concurrency N  tenant A's starts in flight at once (default startTurns' 4)
 *   --stream-minutes N         how long the long-stream figure's one model step streams (default 30; 2 with --quick)
 *   --turns N                  parked turns in the cluster figure (default 100,000; 10,000 with --quick); recorded and
 *                              evaluated turns in the eval figure (default 1,000; 100 with --quick; at most 1,000)
 *   --decision-rate R          rightful decisions a second in the cluster figure, for 30 s (default 20)
 *   --eval-concurrency a,b     one evaluation run per value, its `concurrency` (default 4,16; 4 is evaluate's default)
 *   --max-cached N             override maxCachedWorkflows on both workers (profiling; default: SDK default)
 *   --max-wft N                override maxConcurrentWorkflowTaskExecutions on both workers (profiling)
 *   --stock-server             run the dev server without the dispatch setting below (see SERVER_DYNAMIC_CONFIG)
 *   --name NAME                results file name under bench/results/ (default "latest"; "quick" with --quick;
 *                              with --only, the scenarios' names, e.g. "streaming" or "streaming-quick"),
 *                              so a smoke run or a partial run never overwrites the full figures
 */
import { parseArgs } from 'node:util';
import { DEFAULT_START_CONCURRENCY } from '../client/turn-batch.js';

export const SCENARIOS = ['latency', 'resume', 'throughput', 'capacity', 'history', 'payload', 'scale', 'streaming', 'readers', 'long-stream', 'large-image', 'ai-sdk-model', 'closed-turn', 'fleet'] as const;
/**
 * Scenarios that run only when named in `--only`: the cluster figure starts a cluster of its own
 * and parks 100,000 turns; the eval figure records and evaluates 1,000 turns twice (~10 minutes).
 */
export const ONLY_SCENARIOS = ['cluster', 'eval'] as const;
export type ScenarioName = (typeof SCENARIOS)[number] | (typeof ONLY_SCENARIOS)[number];

/**
 * The dev server has ONE history shard, and its transfer-queue reader polls at most
 * `history.transferProcessorMaxPollRPS` (default 20) times a second. Every activity and
 * workflow task is dispatched through that reader, so on a stock dev server each one waits
 * ~40 ms for the next poll: a 3-step turn takes ~550 ms for turnpike and floor alike, and that
 * fixed wait hides the very overhead this benchmark looks for (ratios all come out ≈ 1.0).
 * A production cluster spreads workflows over hundreds of shards. The benchmark lifts the
 * limit by default and records it in the results; `--stock-server` measures without.
 */
export const SERVER_DYNAMIC_CONFIG = { 'history.transferProcessorMaxPollRPS': 1000 } as const;

/** The results file a run writes when `--name` is not given: only a full run of every scenario writes "latest". */
export function defaultResultsName(quick: boolean, only?: readonly string[]): string {
  if (only !== undefined) return `${only.join('-')}${quick ? '-quick' : ''}`;
  return quick ? 'quick' : 'latest';
}

export interface BenchOptions {
  quick: boolean;
  /** Dynamic config given to the dev server (empty with `--stock-server`). */
  serverDynamicConfig: Record<string, number>;
  scenarios: ScenarioName[];
  /** Step counts of the latency figure: 1 = a text answer only. */
  latencySteps: number[];
  latencyWarmup: number;
  latencyReps: number;
  parked: number;
  resumeSample: number;
  throughputTurns: number;
  throughputConcurrency: number;
  /** Model steps of each throughput turn (2 tool steps + answer: the typical short agent turn). */
  throughputSteps: number;
  capacity: number;
  /** Parked turns per system after each stage of the scale figure, ascending. */
  scaleStages: number[];
  scaleSample: number;
  idleSeconds: number;
  /** Turns with the 10 MiB image, and as many without, in the large-image figure. */
  largeImageTurns: number;
  /** Tenant A's turns started at once in the fleet figure. */
  fleetTurns: number;
  /** Parked turns in the cluster figure. */
  clusterTurns: number;
  /** Rightful decisions a second in the cluster figure (for 30 s; hostile ones 1,000 ÷ that window's count each). */
  clusterDecisionRate: number;
  /** Recorded and evaluated turns in the eval figure. */
  evalTurns: number;
  /** The eval figure's evaluation runs: one per value, its `concurrency`. */
  evalConcurrency: number[];
  /** The model queue's rate in the fleet figure, when not the scenario's own. */
  fleetRate?: number;
  /** The model queue's rate in the fleet figure's token counter variant, when not the scenario's own. */
  fleetTokensRate?: number;
  /** The token counter's window in the fleet figure, when not the scenario's own. */
  fleetTokenWindow?: number;
  /** The workflow tasks each worker takes at once in the fleet figure's model queue variants, when not the scenario's own. */
  fleetWorkflowTasks?: number;
  /** Where the fleet figure starts tenant A's turns, when not in a process of their own. */
  fleetStarter?: FleetStarter;
  /** Tenant A's starts in flight at once in the fleet figure. */
  fleetStartConcurrency: number;
  /** Minutes the long-stream figure's model step streams. */
  streamMinutes?: number;
  /** Conversation lengths (messages) for the resume-payload figure. */
  conversationLengths: number[];
  maxCachedWorkflows?: number;
  maxConcurrentWorkflowTaskExecutions?: number;
  name: string;
}

function positiveInteger(flag: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1) throw new Error(`--${flag} must be a positive integer (got ${value})`);
  return parsed;
}

/** Where the fleet figure starts tenant A's turns: a process of their own, or the bench's. */
export type FleetStarter = 'process' | 'inline';

function fleetStarter(value: string): FleetStarter {
  if (value === 'process' || value === 'inline') return value;
  throw new Error(`--fleet-starter must be process or inline, not ${JSON.stringify(value)}`);
}

function positiveNumber(flag: string, value: string): number {
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed <= 0) throw new Error(`--${flag} must be a number above 0 (got ${value})`);
  return parsed;
}

export function parseBenchOptions(argv: string[]): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      only: { type: 'string' },
      reps: { type: 'string' },
      parked: { type: 'string' },
      'resume-sample': { type: 'string' },
      'throughput-turns': { type: 'string' },
      concurrency: { type: 'string' },
      capacity: { type: 'string' },
      'idle-seconds': { type: 'string' },
      'decision-rate': { type: 'string' },
      'stream-minutes': { type: 'string' },
      'fleet-turns': { type: 'string' },
      'fleet-rate': { type: 'string' },
      'fleet-tokens-rate': { type: 'string' },
      'fleet-token-window': { type: 'string' },
      'fleet-workflow-tasks': { type: 'string' },
      'fleet-starter': { type: 'string' },
      'fleet-start-concurrency': { type: 'string' },
      'image-turns': { type: 'string' },
      'scale-stages': { type: 'string' },
      'scale-sample': { type: 'string' },
      turns: { type: 'string' },
      'eval-concurrency': { type: 'string' },
      'max-cached': { type: 'string' },
      'max-wft': { type: 'string' },
      name: { type: 'string' },
      'stock-server': { type: 'boolean', default: false },
    },
    strict: true,
  });
  const quick = values.quick ?? false;
  const scenarios = values.only === undefined ? [...SCENARIOS] : values.only.split(',').map((name) => name.trim());
  for (const name of scenarios) {
    if (![...SCENARIOS, ...ONLY_SCENARIOS].includes(name as ScenarioName)) throw new Error(`--only: unknown scenario "${name}"; expected ${[...SCENARIOS, ...ONLY_SCENARIOS].join(', ')}`);
  }
  const parked = positiveInteger('parked', values.parked, quick ? 100 : 1000);
  const scaleStages = (values['scale-stages'] ?? (quick ? '100,300,600' : '1000,5000,20000')).split(',').map((value) => positiveInteger('scale-stages', value.trim(), 0));
  if (scaleStages.some((stage, index) => index > 0 && stage <= scaleStages[index - 1])) throw new Error(`--scale-stages must ascend (got ${scaleStages.join(',')})`);
  return {
    quick,
    serverDynamicConfig: values['stock-server'] ? {} : { ...SERVER_DYNAMIC_CONFIG },
    scenarios: scenarios as ScenarioName[],
    latencySteps: [1, 3, 10],
    latencyWarmup: quick ? 2 : 5,
    latencyReps: positiveInteger('reps', values.reps, quick ? 10 : 50),
    parked,
    resumeSample: Math.min(parked, positiveInteger('resume-sample', values['resume-sample'], quick ? 30 : 200)),
    throughputTurns: positiveInteger('throughput-turns', values['throughput-turns'], quick ? 200 : 800),
    throughputConcurrency: positiveInteger('concurrency', values.concurrency, quick ? 100 : 200),
    throughputSteps: 3,
    capacity: positiveInteger('capacity', values.capacity, quick ? 500 : 5000),
    scaleStages,
    scaleSample: positiveInteger('scale-sample', values['scale-sample'], quick ? 150 : 200),
    idleSeconds: positiveInteger('idle-seconds', values['idle-seconds'], quick ? 5 : 10),
    conversationLengths: [10, 100, 1000],
    ...(values['fleet-rate'] !== undefined ? { fleetRate: positiveNumber('fleet-rate', values['fleet-rate']) } : {}),
    ...(values['fleet-tokens-rate'] !== undefined ? { fleetTokensRate: positiveNumber('fleet-tokens-rate', values['fleet-tokens-rate']) } : {}),
    ...(values['fleet-token-window'] !== undefined ? { fleetTokenWindow: positiveNumber('fleet-token-window', values['fleet-token-window']) } : {}),
    ...(values['fleet-workflow-tasks'] !== undefined ? { fleetWorkflowTasks: positiveInteger('fleet-workflow-tasks', values['fleet-workflow-tasks'], 4) } : {}),
    ...(values['fleet-starter'] !== undefined ? { fleetStarter: fleetStarter(values['fleet-starter']) } : {}),
    fleetStartConcurrency: positiveInteger('fleet-start-concurrency', values['fleet-start-concurrency'], DEFAULT_START_CONCURRENCY),
    fleetTurns: positiveInteger('fleet-turns', values['fleet-turns'], quick ? 100 : 500),
    clusterTurns: positiveInteger('turns', values.turns, quick ? 10_000 : 100_000),
    clusterDecisionRate: values['decision-rate'] !== undefined ? positiveNumber('decision-rate', values['decision-rate']) : 20,
    evalTurns: Math.min(1_000, positiveInteger('turns', values.turns, quick ? 100 : 1_000)),
    evalConcurrency: (values['eval-concurrency'] ?? '4,16').split(',').map((value) => positiveInteger('eval-concurrency', value.trim(), 0)),
    largeImageTurns: positiveInteger('image-turns', values['image-turns'], quick ? 3 : 5),
    ...(values['stream-minutes'] !== undefined ? { streamMinutes: positiveInteger('stream-minutes', values['stream-minutes'], 0) } : {}),
    ...(values['max-cached'] !== undefined ? { maxCachedWorkflows: positiveInteger('max-cached', values['max-cached'], 0) } : {}),
    ...(values['max-wft'] !== undefined ? { maxConcurrentWorkflowTaskExecutions: positiveInteger('max-wft', values['max-wft'], 0) } : {}),
    name: values.name ?? defaultResultsName(quick, scenarios.length < SCENARIOS.length ? scenarios : undefined),
  };
}
