/**
 * Figure 1: end-to-end latency of one turn (start → result) with 1, 3 and 10 model steps and
 * zero think time, turnpike vs the floor and, where measured, turnpike vs `@temporalio/ai-sdk`
 * (both through the fake OpenAI server), one turn at a time.
 *
 * The systems and step counts are interleaved rep by rep (and which system goes first
 * alternates), so that noise from a shared machine lands on every side alike (latency-samples.ts).
 */
import type { BenchContext, Systems } from '../context.js';
import { sampleTurnLatencies } from '../latency-samples.js';
import { ratio, type Summary } from '../stats.js';

export interface StepLatency {
  steps: number;
  turnpike: Summary;
  floor: Summary;
  /** turnpike / floor of the medians and of the p99s. */
  ratioMedian: number;
  ratioP99: number;
  /** turnpike (openai provider) and ai-sdk, both against the fake OpenAI server; ratios turnpike / ai-sdk. */
  aiSdk?: { turnpike: Summary; aiSdk: Summary; ratioMedian: number; ratioP99: number };
}

export interface PerStep {
  turnpike: number;
  floor: number;
  ratio: number;
  fromSteps: [number, number];
  /** The same marginal for turnpike (openai provider) and ai-sdk; ratio turnpike / ai-sdk. */
  aiSdk?: { turnpike: number; aiSdk: number; ratio: number };
}

export interface TurnLatencyFigures {
  reps: number;
  warmup: number;
  bySteps: StepLatency[];
  /**
   * Marginal cost of one more step (a tool step: 1 model call, 1 policy check, 1 tool run), ms:
   * (median at the most steps − median at 1 step) / (steps − 1).
   */
  perStep: PerStep;
}

export async function measureTurnLatency(context: BenchContext, systems: Systems): Promise<TurnLatencyFigures> {
  const { latencySteps, latencyReps, latencyWarmup } = context.options;
  const all = [...systems.both, ...(systems.aiSdk?.both ?? [])];
  const summary = await sampleTurnLatencies(context, all, { steps: latencySteps, reps: latencyReps, warmup: latencyWarmup, label: 'latency' });
  const bySteps = latencySteps.map((steps): StepLatency => {
    const turnpike = summary('turnpike', steps);
    const floor = summary('floor', steps);
    const row: StepLatency = { steps, turnpike, floor, ratioMedian: ratio(turnpike.median, floor.median), ratioP99: ratio(turnpike.p99, floor.p99) };
    if (systems.aiSdk) {
      const openai = summary(systems.aiSdk.turnpike.name, steps);
      const aiSdk = summary(systems.aiSdk.aiSdk.name, steps);
      row.aiSdk = { turnpike: openai, aiSdk, ratioMedian: ratio(openai.median, aiSdk.median), ratioP99: ratio(openai.p99, aiSdk.p99) };
    }
    return row;
  });
  const fewest = bySteps[0];
  const most = bySteps.at(-1)!;
  const span = most.steps - fewest.steps;
  const marginal = (pick: (row: StepLatency) => Summary | undefined) => (pick(most)!.median - pick(fewest)!.median) / span;
  const turnpikePerStep = marginal((row) => row.turnpike);
  const floorPerStep = marginal((row) => row.floor);
  const perStep: PerStep = { turnpike: turnpikePerStep, floor: floorPerStep, ratio: ratio(turnpikePerStep, floorPerStep), fromSteps: [fewest.steps, most.steps] };
  if (systems.aiSdk) {
    const openai = marginal((row) => row.aiSdk?.turnpike);
    const aiSdk = marginal((row) => row.aiSdk?.aiSdk);
    perStep.aiSdk = { turnpike: openai, aiSdk, ratio: ratio(openai, aiSdk) };
  }
  return { reps: latencyReps, warmup: latencyWarmup, bySteps, perStep };
}
