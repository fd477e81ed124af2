/**
 * Figure 3: turns per second at saturation. Many concurrent starters (each starts a turn,
 * waits for its result, starts the next) drive a fixed number of turns through each system.
 *
 * The turns are run in four rounds, turnpike–floor–floor–turnpike, each system's figure
 * summed over its two rounds: on a shared machine the background load drifts over a run, and
 * this order cancels a linear drift instead of charging it to whichever system went second.
 * Where `@temporalio/ai-sdk` is measured, four more rounds follow in the same order:
 * turnpike (openai provider)–ai-sdk–ai-sdk–turnpike (openai provider).
 */
import { performance } from 'node:perf_hooks';
import type { BenchContext, Systems } from '../context.js';
import { runPool } from '../pool.js';
import { ratio, summarize, type Summary } from '../stats.js';
import type { SystemUnderTest } from '../system.js';
import { cpuSecondsBetween } from '../worker-handle.js';

export interface ThroughputSide {
  turnsPerSecond: number;
  /** Per round, for judging the noise: [first round, second round]. */
  roundTurnsPerSecond: number[];
  seconds: number;
  /** Start → result of each turn under load. */
  latency: Summary;
  /** Worker process CPU per turn, ms: where the worker, not the server, is the bottleneck. */
  workerCpuMsPerTurn: number;
  workerPeakRssMB: number;
}

export interface ThroughputFigures {
  turns: number;
  concurrency: number;
  steps: number;
  turnpike: ThroughputSide;
  floor: ThroughputSide;
  ratio: number;
  /** turnpike (openai provider) and ai-sdk, both against the fake OpenAI server; ratio turnpike / ai-sdk. */
  aiSdk?: { turnpike: ThroughputSide; aiSdk: ThroughputSide; ratio: number };
}

interface Round {
  turns: number;
  seconds: number;
  cpuSeconds: number;
  latencies: number[];
  peakRss: number;
}

async function runRound(context: BenchContext, system: SystemUnderTest, turns: number): Promise<Round> {
  const { throughputConcurrency, throughputSteps } = context.options;
  let peakRss = 0;
  const sampler = setInterval(() => {
    void system.worker.sample().then((sample) => (peakRss = Math.max(peakRss, sample.rss)), () => undefined);
  }, 1_000);
  const before = await system.worker.sample();
  const started = performance.now();
  const latencies = await runPool(turns, throughputConcurrency, async () => {
    const turnStarted = performance.now();
    await system.finishTurn(await system.startTurn(throughputSteps), throughputSteps);
    return performance.now() - turnStarted;
  });
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  const after = await system.worker.sample();
  context.log(`  throughput: ${system.name} ${(turns / seconds).toFixed(1)} turns/s (${turns} turns in ${seconds.toFixed(1)} s)`);
  return { turns, seconds, cpuSeconds: cpuSecondsBetween(before, after), latencies, peakRss: Math.max(peakRss, after.rss) };
}

function combine(rounds: Round[]): ThroughputSide {
  const turns = rounds.reduce((sum, round) => sum + round.turns, 0);
  const seconds = rounds.reduce((sum, round) => sum + round.seconds, 0);
  return {
    turnsPerSecond: turns / seconds,
    roundTurnsPerSecond: rounds.map((round) => round.turns / round.seconds),
    seconds,
    latency: summarize(rounds.flatMap((round) => round.latencies)),
    workerCpuMsPerTurn: (rounds.reduce((sum, round) => sum + round.cpuSeconds, 0) * 1000) / turns,
    workerPeakRssMB: Math.max(...rounds.map((round) => round.peakRss)) / 2 ** 20,
  };
}

export async function measureThroughput(context: BenchContext, systems: Systems): Promise<ThroughputFigures> {
  const { throughputTurns, throughputConcurrency, throughputSteps } = context.options;
  // Warm-up, not measured: JIT, workflow contexts, connection pools.
  for (const system of [...systems.both, ...(systems.aiSdk?.both ?? [])]) {
    await runPool(Math.min(throughputConcurrency, 50), throughputConcurrency, async () => {
      await system.finishTurn(await system.startTurn(throughputSteps), throughputSteps);
    });
  }
  const half = Math.ceil(throughputTurns / 2);
  const rounds = new Map<SystemUnderTest, Round[]>(systems.both.map((system) => [system, []]));
  for (const system of [systems.turnpike, systems.floor, systems.floor, systems.turnpike]) {
    rounds.get(system)!.push(await runRound(context, system, half));
  }
  const turnpike = combine(rounds.get(systems.turnpike)!);
  const floor = combine(rounds.get(systems.floor)!);
  const figures: ThroughputFigures = { turns: half * 2, concurrency: throughputConcurrency, steps: throughputSteps, turnpike, floor, ratio: ratio(turnpike.turnsPerSecond, floor.turnsPerSecond) };
  if (systems.aiSdk) {
    const { turnpike: openai, aiSdk } = systems.aiSdk;
    const aiSdkRounds = new Map<SystemUnderTest, Round[]>([[openai, []], [aiSdk, []]]);
    for (const system of [openai, aiSdk, aiSdk, openai]) aiSdkRounds.get(system)!.push(await runRound(context, system, half));
    const turnpikeSide = combine(aiSdkRounds.get(openai)!);
    const aiSdkSide = combine(aiSdkRounds.get(aiSdk)!);
    figures.aiSdk = { turnpike: turnpikeSide, aiSdk: aiSdkSide, ratio: ratio(turnpikeSide.turnsPerSecond, aiSdkSide.turnsPerSecond) };
  }
  return figures;
}
