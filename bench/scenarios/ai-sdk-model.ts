/**
 * What turnpike's `ai-sdk` provider costs per step: the same turns through turnpike's native
 * `openai` provider and through an AI SDK language model registered on the same worker
 * (`@ai-sdk/openai`'s Chat Completions model, `models: { 'openai-chat': … }`), both against the
 * fake OpenAI server, on the same turnpike worker. Both stream (the default). The two are
 * interleaved rep by rep at 1, 3 and 10 model steps, one turn at a time, like the latency figure.
 *
 * Per-step overhead is the marginal cost of one more step (a tool step: one model call, its
 * policy check, one tool run), (median at 10 steps − median at 1) / 9, for each provider; the
 * figure is ai-sdk ÷ openai (issue #43's target: at most 1.1×).
 */
import type { BenchContext, Systems } from '../context.js';
import { AI_SDK_MODEL_NAME, FAKE_OPENAI_MODEL } from '../fake-openai-settings.js';
import { sampleTurnLatencies } from '../latency-samples.js';
import { ratio, type Summary } from '../stats.js';
import { TurnpikeSystem } from '../turnpike-system.js';

export interface AiSdkModelStep {
  steps: number;
  openai: Summary;
  aiSdk: Summary;
  /** ai-sdk / openai of the medians and of the p99s. */
  ratioMedian: number;
  ratioP99: number;
}

export interface AiSdkModelFigures {
  reps: number;
  warmup: number;
  /** The AI SDK package behind the `ai-sdk` turns and the model it asks the fake for. */
  model: string;
  bySteps: AiSdkModelStep[];
  /** Marginal ms per step for each provider, from the fewest to the most steps; ratio ai-sdk / openai. */
  perStep: { openai: number; aiSdk: number; ratio: number; fromSteps: [number, number] };
}

export async function measureAiSdkModel(context: BenchContext, systems: Systems): Promise<AiSdkModelFigures> {
  const { latencySteps, latencyReps, latencyWarmup } = context.options;
  const { worker, taskQueue } = systems.turnpike;
  const openai = new TurnpikeSystem(context.client, taskQueue, worker, 'turnpike-openai', { provider: 'openai', model: FAKE_OPENAI_MODEL });
  const aiSdk = new TurnpikeSystem(context.client, taskQueue, worker, 'turnpike-ai-sdk', { provider: 'ai-sdk', model: AI_SDK_MODEL_NAME });
  const summary = await sampleTurnLatencies(context, [openai, aiSdk], { steps: latencySteps, reps: latencyReps, warmup: latencyWarmup, label: 'ai-sdk-model' });
  const bySteps = latencySteps.map((steps): AiSdkModelStep => {
    const native = summary(openai.name, steps);
    const viaAiSdk = summary(aiSdk.name, steps);
    return { steps, openai: native, aiSdk: viaAiSdk, ratioMedian: ratio(viaAiSdk.median, native.median), ratioP99: ratio(viaAiSdk.p99, native.p99) };
  });
  const fewest = bySteps[0];
  const most = bySteps.at(-1)!;
  const span = most.steps - fewest.steps;
  const perStepOpenai = (most.openai.median - fewest.openai.median) / span;
  const perStepAiSdk = (most.aiSdk.median - fewest.aiSdk.median) / span;
  return {
    reps: latencyReps,
    warmup: latencyWarmup,
    model: `@ai-sdk/openai chat('${FAKE_OPENAI_MODEL}')`,
    bySteps,
    perStep: { openai: perStepOpenai, aiSdk: perStepAiSdk, ratio: ratio(perStepAiSdk, perStepOpenai), fromSteps: [fewest.steps, most.steps] },
  };
}
