/**
 * What a user of `@temporalio/ai-sdk` writes for the benchmark's turn: AI SDK `generateText`
 * inside the workflow with the plugin's `temporalProvider` (each model call is the plugin's
 * `invokeModel` activity), the two benchmark tools as AI SDK `tool()`s whose `execute` runs an
 * activity, and `stopWhen` by step count. Bundled with `AiSdkPlugin` (its Web-API polyfills)
 * and run by its own worker on its own task queue.
 */
import { temporalProvider } from '@temporalio/ai-sdk/workflow';
import { proxyActivities } from '@temporalio/workflow';
import { generateText, stepCountIs, tool } from 'ai';
import { z } from 'zod';
import type { AiSdkActivities } from './ai-sdk-activities.js';
import type { AiSdkTurnInput, AiSdkTurnResult } from './ai-sdk-definitions.js';

// The same timeout as turnpike's and the floor's tool activities.
const { benchTool, benchApproval } = proxyActivities<AiSdkActivities>({ startToCloseTimeout: '60s' });

// The same names, descriptions and input schemas as bench-tools.ts.
const tools = {
  bench_tool: tool({
    description: 'Benchmark tool: returns its input at once',
    inputSchema: z.object({ i: z.number() }),
    execute: (input) => benchTool(input),
  }),
  bench_approval: tool({
    description: 'Benchmark tool that needs a person to approve each call',
    inputSchema: z.object({ i: z.number() }),
    needsApproval: true,
    execute: (input) => benchApproval(input),
  }),
};

export async function aiSdkTurn({ model, messages, maxSteps = 10 }: AiSdkTurnInput): Promise<AiSdkTurnResult> {
  const result = await generateText({
    model: temporalProvider.languageModel(model),
    messages,
    tools,
    stopWhen: stepCountIs(maxSteps),
  });
  return {
    steps: result.steps.length,
    toolResults: result.steps.reduce((sum, step) => sum + step.toolResults.length, 0),
    finishReason: result.finishReason,
    text: result.text,
  };
}
