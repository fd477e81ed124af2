/**
 * Parking many turns at once: the setup shared by the resume and capacity figures.
 */
import { performance } from 'node:perf_hooks';
import type { WorkflowHandle } from '@temporalio/client';
import type { BenchContext } from '../context.js';
import { runPool, sleep, waitFor } from '../pool.js';
import type { SystemUnderTest } from '../system.js';
import { cpuSecondsBetween } from '../worker-handle.js';

/** Concurrent starters while parking: enough to keep the worker busy, few enough not to time out. */
const PARK_CONCURRENCY = 50;

export interface ParkedTurns {
  handles: WorkflowHandle[];
  /** Seconds from the first start to the last turn parked. */
  seconds: number;
}

/**
 * Starts `count` turns that each park on an approval, and resolves when the worker has run
 * every turn up to its park point (its first `callModel` activity, which decides the
 * call's approval, completed `count` times) and has gone quiet. No queries: a query would pull turns the worker evicted back
 * into its cache, and the capacity figure is about what the cache holds on its own.
 */
export async function parkTurns(
  context: BenchContext,
  system: SystemUnderTest,
  count: number,
  start: () => Promise<WorkflowHandle> = () => system.startParkedTurn(),
): Promise<ParkedTurns> {
  const started = performance.now();
  const before = (await system.worker.sample()).activities.callModel ?? 0;
  const handles = await runPool(count, PARK_CONCURRENCY, start);
  await waitFor(
    `${count} ${system.name} turns to park`,
    async () => {
      const done = ((await system.worker.sample()).activities.callModel ?? 0) - before;
      return done >= count ? done : undefined;
    },
    Math.max(120_000, count * 100),
    500,
  );
  await waitUntilIdle(system);
  const seconds = (performance.now() - started) / 1000;
  context.log(`  ${system.name}: ${count} turns parked in ${seconds.toFixed(1)} s`);
  return { handles, seconds };
}

/**
 * Waits until the worker uses under 5% of a core over a 1 s window: every workflow task of
 * the parking turns has completed, so a following measurement sees only the parked state.
 */
export async function waitUntilIdle(system: SystemUnderTest, timeoutMs = 60_000): Promise<void> {
  await waitFor(
    `${system.name} worker to go idle`,
    async () => {
      const before = await system.worker.sample();
      await sleep(1_000);
      const after = await system.worker.sample();
      return cpuSecondsBetween(before, after) / ((after.at - before.at) / 1000) < 0.05 ? true : undefined;
    },
    timeoutMs,
    0,
  );
}

/** The approval ids of parked turns, learned the way a dashboard would: one query per turn. */
export async function approvalIds(system: SystemUnderTest, handles: WorkflowHandle[]): Promise<string[]> {
  return runPool(handles.length, 20, (index) =>
    waitFor(`${system.name} turn ${handles[index].workflowId} to park`, () => system.approvalIdOf(handles[index]), 60_000, 200),
  );
}
