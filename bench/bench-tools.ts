/**
 * The two tools the benchmark's turns call. Both do nothing but count their runs (tool-runs.ts), on purpose: the benchmark measures
 * turnpike's orchestration, so any time spent inside a tool would only dilute the comparison
 * with the floor, whose activities are just as empty.
 */
import { z } from 'zod';
import { defineTool } from '../activities/tools.js';
import { countToolRun } from './tool-runs.js';

export const BENCH_TOOL = 'bench_tool';
export const BENCH_APPROVAL_TOOL = 'bench_approval';

/** A server tool that runs at once. */
export const benchTool = defineTool({
  name: BENCH_TOOL,
  description: 'Benchmark tool: returns its input at once',
  inputSchema: z.object({ i: z.number() }),
  execute: ({ i }) => {
    countToolRun(BENCH_TOOL);
    return { i };
  },
});

/** An approval-gated server tool: every call parks until `approveToolCall`. */
export const benchApprovalTool = defineTool({
  name: BENCH_APPROVAL_TOOL,
  description: 'Benchmark tool that needs a person to approve each call',
  inputSchema: z.object({ i: z.number() }),
  approval: true,
  execute: ({ i }) => {
    countToolRun(BENCH_APPROVAL_TOOL);
    return { i };
  },
});

export const benchTools = [benchTool, benchApprovalTool];

/**
 * The scripted model's prompt for a turn of `steps` model calls: `steps - 1` sequential tool
 * steps (one `bench_tool` call each), then the text answer. `steps = 1` is a plain answer.
 */
export function scriptedPrompt(steps: number): string {
  if (steps <= 1) return 'hello';
  return Array.from({ length: steps - 1 }, (_, index) => `use ${BENCH_TOOL} with {"i":${index + 1}}`).join(' then ');
}

/** A turn that parks at its first step on one approval, then answers: 2 model calls, 1 tool run. */
export const PARKED_PROMPT = `use ${BENCH_APPROVAL_TOOL} with {"i":1}`;
