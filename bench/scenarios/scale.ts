/**
 * Figure 7: turnpike at the scale its users reach. Both systems park turns in stages (1,000,
 * then 5,000, then 20,000 by default) on the one dev server; after each stage, once both
 * workers are quiet, each worker's RSS (and after a forced GC) and the server's RSS are read.
 * At the last stage: idle CPU of each worker and of the server over the idle window, then the
 * resume latency of `scaleSample` random parked turns per system.
 *
 * The resumes are cache misses on purpose, as a person's approval hours later is: the sampled
 * turns' approval ids are learned (one query each) in one order and resumed in the same order,
 * and with more sampled turns than `maxCachedWorkflows` every turn has been evicted (LRU) by
 * the time its approval arrives. The server holds both systems' parked turns, so its RSS is
 * for both together.
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { WorkflowHandle } from '@temporalio/client';
import type { BenchContext, Systems } from '../context.js';
import { runPool, seededShuffle, sleep, waitFor } from '../pool.js';
import { ratio, summarize, type Summary } from '../stats.js';
import type { SystemUnderTest } from '../system.js';
import { cpuSecondsBetween } from '../worker-handle.js';
import { parkTurns, waitUntilIdle } from './park.js';

const MiB = 2 ** 20;

export interface ScaleStageSide {
  /** Seconds this stage took to park its new turns. */
  parkSeconds: number;
  rssMB: number;
  rssAfterGcMB: number;
}

export interface ScaleStage {
  parked: number;
  turnpike: ScaleStageSide;
  floor: ScaleStageSide;
  /** The dev server's RSS with both systems' turns parked (2 × `parked`); undefined off Linux. */
  serverRssMB?: number;
  ratio: { rss: number };
}

export interface ScaleSide {
  /** From the first start to the last turn parked, over all stages. */
  parkSeconds: number;
  idleCpuSeconds: number;
  updateRoundTrip: Summary;
  resume: Summary;
}

export interface ScaleFigures {
  stages: ScaleStage[];
  idleSeconds: number;
  /** Server CPU seconds over the idle window (both systems' turns parked); undefined off Linux. */
  serverIdleCpuSeconds?: number;
  sample: number;
  turnpike: ScaleSide;
  floor: ScaleSide;
  ratio: {
    /** Worker RSS at the last stage ÷ at 5,000 parked (or the stage before the last), per system. */
    turnpikeGrowth: number;
    floorGrowth: number;
    resumeMedian: number;
    resumeP99: number;
  };
}

/** RSS (MiB) and CPU seconds of a process, from /proc; undefined where there is no /proc. */
function processSample(pid: number | undefined): { rssMB: number; cpuSeconds: number } | undefined {
  if (pid === undefined) return undefined;
  try {
    const rssKB = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
    // Fields 14 and 15 of /proc/<pid>/stat (utime, stime) in clock ticks, counted after the
    // parenthesised command name, which may itself contain spaces.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return { rssMB: rssKB / 1024, cpuSeconds: ticks / 100 };
  } catch {
    return undefined;
  }
}

export async function measureScale(context: BenchContext, systems: Systems): Promise<ScaleFigures> {
  const { scaleStages, scaleSample, idleSeconds } = context.options;
  for (const system of systems.both) await system.finishTurn(await system.startTurn(3), 3);

  const handles = new Map<SystemUnderTest, WorkflowHandle[]>(systems.both.map((system) => [system, []]));
  const parkSeconds = new Map<SystemUnderTest, number>(systems.both.map((system) => [system, 0]));
  const stages: ScaleStage[] = [];
  for (const target of scaleStages) {
    const stageSeconds = new Map<SystemUnderTest, number>();
    await Promise.all(
      systems.both.map(async (system) => {
        const parked = await parkTurns(context, system, target - handles.get(system)!.length);
        handles.get(system)!.push(...parked.handles);
        stageSeconds.set(system, parked.seconds);
        parkSeconds.set(system, parkSeconds.get(system)! + parked.seconds);
      }),
    );
    await Promise.all(systems.both.map((system) => waitUntilIdle(system)));
    const side = async (system: SystemUnderTest): Promise<ScaleStageSide> => {
      const { rss } = await system.worker.sample();
      const collected = await system.worker.heaps(true);
      return { parkSeconds: stageSeconds.get(system)!, rssMB: rss / MiB, rssAfterGcMB: collected.rss / MiB };
    };
    const turnpike = await side(systems.turnpike);
    const floor = await side(systems.floor);
    const server = processSample(context.serverPid);
    stages.push({ parked: target, turnpike, floor, ...(server ? { serverRssMB: server.rssMB } : {}), ratio: { rss: ratio(turnpike.rssMB, floor.rssMB) } });
    context.log(`  scale: ${target} parked per system; worker RSS turnpike ${turnpike.rssMB.toFixed(0)} MB, floor ${floor.rssMB.toFixed(0)} MB`);
  }

  const workersBefore = new Map(await Promise.all(systems.both.map(async (system) => [system, await system.worker.sample()] as const)));
  const serverBefore = processSample(context.serverPid);
  await sleep(idleSeconds * 1000);
  const workersAfter = new Map(await Promise.all(systems.both.map(async (system) => [system, await system.worker.sample()] as const)));
  const serverAfter = processSample(context.serverPid);

  const parked = scaleStages.at(-1)!;
  const sample = Math.min(scaleSample, parked);
  const indices = seededShuffle(
    Array.from({ length: parked }, (_, index) => index),
    parked,
  ).slice(0, sample);
  const approvalIds = new Map<SystemUnderTest, string[]>();
  for (const system of systems.both) {
    const all = handles.get(system)!;
    approvalIds.set(
      system,
      await runPool(sample, 1, (position) => waitFor(`${system.name} approval id`, () => system.approvalIdOf(all[indices[position]]), 60_000, 200)),
    );
  }
  const updates = new Map<SystemUnderTest, number[]>(systems.both.map((system) => [system, []]));
  const resumes = new Map<SystemUnderTest, number[]>(systems.both.map((system) => [system, []]));
  for (const [position, index] of indices.entries()) {
    const sides = position % 2 === 0 ? systems.both : [...systems.both].reverse();
    for (const system of sides) {
      const handle = handles.get(system)![index];
      const sent = performance.now();
      await system.approve(handle, approvalIds.get(system)![position]);
      const accepted = performance.now();
      await system.finishTurn(handle, 2);
      updates.get(system)!.push(accepted - sent);
      resumes.get(system)!.push(performance.now() - accepted);
    }
  }

  const growthBase = stages.find((stage) => stage.parked === 5000) ?? stages.at(-2) ?? stages[0];
  const last = stages.at(-1)!;
  const side = (system: SystemUnderTest): ScaleSide => ({
    parkSeconds: parkSeconds.get(system)!,
    idleCpuSeconds: cpuSecondsBetween(workersBefore.get(system)!, workersAfter.get(system)!),
    updateRoundTrip: summarize(updates.get(system)!),
    resume: summarize(resumes.get(system)!),
  });
  const turnpike = side(systems.turnpike);
  const floor = side(systems.floor);
  return {
    stages,
    idleSeconds,
    ...(serverBefore && serverAfter ? { serverIdleCpuSeconds: serverAfter.cpuSeconds - serverBefore.cpuSeconds } : {}),
    sample,
    turnpike,
    floor,
    ratio: {
      turnpikeGrowth: ratio(last.turnpike.rssMB, growthBase.turnpike.rssMB),
      floorGrowth: ratio(last.floor.rssMB, growthBase.floor.rssMB),
      resumeMedian: ratio(turnpike.resume.median, floor.resume.median),
      resumeP99: ratio(turnpike.resume.p99, floor.resume.p99),
    },
  };
}
