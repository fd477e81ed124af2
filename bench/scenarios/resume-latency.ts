/**
 * Figure 2: resuming a parked turn while N turns are parked at once.
 *
 * Both systems park N turns; the client learns every approval id (one query per turn, in
 * start order), then resumes a random sample one at a time, alternating systems:
 *   - update round trip: `executeUpdate(approve)` from call to return (accepted and completed);
 *   - resume latency: from that return to the turn's `result()` resolving: the approved tool
 *     runs, the model is called again and the turn completes.
 * One at a time, so the figure is the latency a person's approval sees, not a queue.
 */
import { performance } from 'node:perf_hooks';
import type { BenchContext, Systems } from '../context.js';
import { seededShuffle } from '../pool.js';
import { ratio, summarize, type Summary } from '../stats.js';
import type { SystemUnderTest } from '../system.js';
import { measureValidatorCost, type ValidatorCost } from '../validator-cost.js';
import { approvalIds, parkTurns } from './park.js';

export interface ResumeSide {
  parkSeconds: number;
  updateRoundTrip: Summary;
  resume: Summary;
  /** Worker metrics over the resumes: sticky-cache hits and misses show whether turns were still cached. */
  metricsDelta: Record<string, number>;
}

export interface ResumeLatencyFigures {
  parked: number;
  sample: number;
  /** Fewest turns still parked while a resume was measured. */
  minParkedDuringSample: number;
  turnpike: ResumeSide;
  floor: ResumeSide;
  ratio: { resumeMedian: number; resumeP99: number; updateMedian: number; updateP99: number };
  /** turnpike's update validators, per message (the floor has none). */
  validators?: ValidatorCost;
}

function delta(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.keys(after).map((key) => [key, after[key] - (before[key] ?? 0)]));
}

export async function measureResumeLatency(context: BenchContext, systems: Systems): Promise<ResumeLatencyFigures> {
  const { parked, resumeSample } = context.options;
  // One warm-up turn each, so the first measured resume does not pay for JIT and first contexts.
  for (const system of systems.both) await system.finishTurn(await system.startTurn(3), 3);

  const parkedBy = new Map<SystemUnderTest, Awaited<ReturnType<typeof parkTurns>>>();
  await Promise.all(systems.both.map(async (system) => parkedBy.set(system, await parkTurns(context, system, parked))));
  const idsBy = new Map<SystemUnderTest, string[]>();
  for (const system of systems.both) idsBy.set(system, await approvalIds(system, parkedBy.get(system)!.handles));
  context.log(`  resume: approval ids of ${parked} parked turns per system known; resuming ${resumeSample} of each`);

  const order = seededShuffle(
    Array.from({ length: parked }, (_, index) => index),
    parked,
  ).slice(0, resumeSample);
  const updates = new Map<SystemUnderTest, number[]>(systems.both.map((system) => [system, []]));
  const resumes = new Map<SystemUnderTest, number[]>(systems.both.map((system) => [system, []]));
  const metricsBefore = new Map<SystemUnderTest, Record<string, number>>();
  for (const system of systems.both) metricsBefore.set(system, await system.worker.metrics());

  for (const [position, index] of order.entries()) {
    const sides = position % 2 === 0 ? systems.both : [...systems.both].reverse();
    for (const system of sides) {
      const handle = parkedBy.get(system)!.handles[index];
      const sent = performance.now();
      await system.approve(handle, idsBy.get(system)![index]);
      const accepted = performance.now();
      await system.finishTurn(handle, 2);
      const finished = performance.now();
      updates.get(system)!.push(accepted - sent);
      resumes.get(system)!.push(finished - accepted);
    }
  }

  const side = async (system: SystemUnderTest): Promise<ResumeSide> => ({
    parkSeconds: parkedBy.get(system)!.seconds,
    updateRoundTrip: summarize(updates.get(system)!),
    resume: summarize(resumes.get(system)!),
    metricsDelta: delta(metricsBefore.get(system)!, await system.worker.metrics()),
  });
  const turnpike = await side(systems.turnpike);
  const floor = await side(systems.floor);
  return {
    validators: measureValidatorCost(),
    parked,
    sample: resumeSample,
    minParkedDuringSample: parked - resumeSample + 1,
    turnpike,
    floor,
    ratio: {
      resumeMedian: ratio(turnpike.resume.median, floor.resume.median),
      resumeP99: ratio(turnpike.resume.p99, floor.resume.p99),
      updateMedian: ratio(turnpike.updateRoundTrip.median, floor.updateRoundTrip.median),
      updateP99: ratio(turnpike.updateRoundTrip.p99, floor.updateRoundTrip.p99),
    },
  };
}
