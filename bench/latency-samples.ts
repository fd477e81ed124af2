/**
 * Start → result of one turn per (system, step count), interleaved rep by rep (and which system
 * goes first alternates), so that noise from a shared machine lands on every side alike. Shared by
 * the latency figure and the ai-sdk provider's figure.
 */
import { performance } from 'node:perf_hooks';
import type { BenchContext } from './context.js';
import { summarize, type Summary } from './stats.js';
import type { SystemUnderTest } from './system.js';

async function timeTurn(system: SystemUnderTest, steps: number): Promise<number> {
  const started = performance.now();
  const handle = await system.startTurn(steps);
  await system.finishTurn(handle, steps);
  return performance.now() - started;
}

/** Times `reps` turns of each system at each step count, after `warmup` reps that are not kept; `summary(name, steps)` reads them. */
export async function sampleTurnLatencies(
  context: BenchContext,
  systems: SystemUnderTest[],
  { steps: stepCounts, reps, warmup, label }: { steps: number[]; reps: number; warmup: number; label: string },
): Promise<(name: string, steps: number) => Summary> {
  const samples = new Map<string, number[]>();
  for (let rep = -warmup; rep < reps; rep++) {
    const order = rep % 2 === 0 ? systems : [...systems].reverse();
    for (const steps of stepCounts) {
      for (const system of order) {
        const ms = await timeTurn(system, steps);
        if (rep < 0) continue; // warm-up: JIT, first workflow contexts, connection pools
        const key = `${system.name}/${steps}`;
        samples.set(key, [...(samples.get(key) ?? []), ms]);
      }
    }
    if (rep >= 0 && (rep + 1) % 10 === 0) context.log(`  ${label}: ${rep + 1}/${reps} reps`);
  }
  return (name, steps) => summarize(samples.get(`${name}/${steps}`) ?? []);
}
