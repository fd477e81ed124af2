/**
 * Figure 1: end-to-end latency of one turn (start → result) with 1, 3 and 10 model steps and
 * zero think time, turnpike vs the floor and, where measured, turnpike vs `@temporalio/ai-sdk`
 * (both through the fake OpenAI server), one turn at a time.
 *
 * The systems and step counts are interleaved rep by rep (and which system goes first
 * alternates), so that noise from a shared machine lands on every side alike.
 */
import { performance } from 'node:perf_hooks';
import type { BenchContext, Systems } from '../context.js';
import { ratio, summarize, type Summary } from '../stats.js';
import type { SystemUnderTest } from '../system.js';

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

async function timeTurn(system: SystemUnderTest, steps: number): Promise<number> {
  const started = performance.now();
  const handle = await system.startTurn(steps);
  await system.finishTurn(handle, steps);
  return performance.now() - started;
}

export async function measureTurnLatency(context: BenchContext, systems: Systems): Promise<TurnLatencyFigures> {
  const { latencySteps, latencyReps, latencyWarmup } = context.options;
  const samples = new Map<string, number[]>();
  const all = [...systems.both, ...(systems.aiSdk?.both ?? [])];
  for (let rep = -latencyWarmup; rep < latencyReps; rep++) {
    const order = rep % 2 === 0 ? all : [...all].reverse();
    for (const steps of latencySteps) {
      for (const system of order) {
        const ms = await timeTurn(system, steps);
        if (rep < 0) continue; // warm-up: JIT, first workflow contexts, connection pools
        const key = `${system.name}/${steps}`;
        samples.set(key, [...(samples.get(key) ?? []), ms]);
      }
    }
    if (rep >= 0 && (rep + 1) % 10 === 0) context.log(`  latency: ${rep + 1}/${latencyReps} reps`);
  }
  const summary = (name: string, steps: number) => summarize(samples.get(`${name}/${steps}`) ?? []);
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
