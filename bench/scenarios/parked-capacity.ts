/**
 * Figure 4: many turns parked at once. Both systems park `capacity` turns (in parallel, to
 * halve the set-up time); once both workers are quiet, each worker process's RSS and its CPU
 * time over an idle window are read. Both workers run with the same settings, reported here,
 * because `maxCachedWorkflows` decides how many parked turns stay in worker memory.
 */
import type { BenchContext, Systems } from '../context.js';
import { sleep } from '../pool.js';
import { ratio } from '../stats.js';
import type { SystemUnderTest } from '../system.js';
import { cpuSecondsBetween } from '../worker-handle.js';
import type { WorkerSettings } from '../worker-protocol.js';
import { parkTurns, waitUntilIdle } from './park.js';
import { workflowInstanceHeapKB } from '../workflow-instance-heap.js';

const MiB = 2 ** 20;

export interface CapacitySide {
  settings: WorkerSettings;
  parkSeconds: number;
  /** Worker RSS after one completed turn, before parking. */
  baselineRssMB: number;
  rssMB: number;
  heapUsedMB: number;
  /** (RSS parked − baseline) / turns held in the cache. */
  rssPerCachedTurnKB: number;
  /** Worker CPU seconds (user + system, all threads) over the idle window. */
  idleCpuSeconds: number;
  /** Worker metrics after parking (sticky cache size, forced evictions). */
  metrics: Record<string, number>;
  /**
   * Every thread's V8 heap (MB) after the idle window, as found and after a forced full GC, and
   * the RSS after that GC: live memory versus garbage V8 had not collected yet.
   */
  heapsMB: { thread: string; used: number; total: number; usedAfterGc: number; totalAfterGc: number }[];
  rssAfterGcMB: number;
}

export interface CapacityFigures {
  capacity: number;
  idleSeconds: number;
  /** turnpike turns with AgentTurnStatus="awaiting-input" per visibility: every one really parked. */
  turnpikeAwaitingInputPerVisibility: number;
  turnpike: CapacitySide;
  floor: CapacitySide;
  /**
   * Live heap one workflow instance adds before its code runs (its own copy of every module
   * not preloaded; bench/workflow-instance-heap.ts): paid per cached turn, garbage per eviction.
   */
  instanceHeapKB: { turnpike: number; floor: number };
  ratio: { rss: number; idleCpu: number };
}

export async function measureParkedCapacity(context: BenchContext, systems: Systems): Promise<CapacityFigures> {
  const { capacity, idleSeconds } = context.options;
  for (const system of systems.both) await system.finishTurn(await system.startTurn(3), 3);
  const baseline = new Map(await Promise.all(systems.both.map(async (system) => [system, await system.worker.sample()] as const)));

  const parkSeconds = new Map<SystemUnderTest, number>();
  await Promise.all(systems.both.map(async (system) => parkSeconds.set(system, (await parkTurns(context, system, capacity)).seconds)));
  // Both quiet at once: one worker still finishing its turns would load the machine in the other's window.
  await Promise.all(systems.both.map((system) => waitUntilIdle(system)));

  const before = new Map(await Promise.all(systems.both.map(async (system) => [system, await system.worker.sample()] as const)));
  context.log(`  capacity: ${capacity} parked per system; idle window ${idleSeconds} s`);
  await sleep(idleSeconds * 1000);
  const after = new Map(await Promise.all(systems.both.map(async (system) => [system, await system.worker.sample()] as const)));

  const side = async (system: SystemUnderTest): Promise<CapacitySide> => {
    const settings = system.worker.settings;
    // After the RSS and CPU readings above: a forced GC must not change them.
    const found = await system.worker.heaps(false);
    const collected = await system.worker.heaps(true);
    const cached = Math.min(capacity, settings.maxCachedWorkflows);
    const end = after.get(system)!;
    const metrics = await system.worker.metrics(['temporal_sticky_cache']);
    return {
      settings,
      parkSeconds: parkSeconds.get(system)!,
      baselineRssMB: baseline.get(system)!.rss / MiB,
      rssMB: end.rss / MiB,
      heapUsedMB: end.heapUsed / MiB,
      rssPerCachedTurnKB: cached > 0 ? (end.rss - baseline.get(system)!.rss) / 1024 / cached : Number.NaN,
      idleCpuSeconds: cpuSecondsBetween(before.get(system)!, end),
      metrics,
      heapsMB: found.heaps.map((heap) => {
        const after = collected.heaps.find((other) => other.thread === heap.thread);
        return {
          thread: heap.thread,
          used: heap.usedBytes / MiB,
          total: heap.totalBytes / MiB,
          usedAfterGc: (after?.usedBytes ?? Number.NaN) / MiB,
          totalAfterGc: (after?.totalBytes ?? Number.NaN) / MiB,
        };
      }),
      rssAfterGcMB: collected.rss / MiB,
    };
  };
  const turnpike = await side(systems.turnpike);
  const floor = await side(systems.floor);
  const instanceHeapKB = {
    turnpike: await workflowInstanceHeapKB(context.bundlePaths.turnpike, 'agentTurn'),
    floor: await workflowInstanceHeapKB(context.bundlePaths.floor, 'floorTurn'),
  };
  const awaiting = await context.client.workflow.count(`TaskQueue="${systems.turnpike.taskQueue}" AND AgentTurnStatus="awaiting-input"`);
  return {
    capacity,
    idleSeconds,
    turnpikeAwaitingInputPerVisibility: awaiting.count,
    turnpike,
    floor,
    instanceHeapKB,
    ratio: { rss: ratio(turnpike.rssMB, floor.rssMB), idleCpu: ratio(turnpike.idleCpuSeconds, floor.idleCpuSeconds) },
  };
}
