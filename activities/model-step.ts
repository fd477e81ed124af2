/**
 * The `callModel` activity of a turn: one model step, with the two things a turn needs from its
 * worker around it. The first step describes the turn's tools (the worker's own and its MCP
 * servers'), and every step decides what happens to its tool calls (`prepare-tool-calls.ts`:
 * validated input, approval policy). Both used to be local activities of their own. A local
 * activity's result can be recorded in one workflow task and reach the workflow code only in the
 * next (Core does so when a query is answered while the result is pending); on replay it reaches
 * the code a task earlier, and a decision or reader poll accepted in between then no longer lines
 * up. Turns therefore run no local activity: what they did rides on the model step, whose result
 * history records once, with the step.
 */
import type { Context } from '@temporalio/activity';
import { cutOffStatus } from '../workflows/turn/cut-off-step.js';
import { withHandoffTools } from '../workflows/agents/handoff-tools.js';
import { modelToolsOf, toolSetHash } from '../workflows/turn/tool-set.js';
import type { DescribedTools, HandoffTarget, ModelStepInput, ModelStepRequest, ModelStepResult, ModelToolSpec, ToolCallDisposition, ToolCallPart } from '../workflows/types/index.js';
import { reportUnavailable } from './mcp/mcp-unavailable.js';
import type { PrepareToolCallsInput } from './prepare-tool-calls.js';
import { resolveModelStep, type ModelStepCaches } from './transcript-source.js';

/** The worker's tools, as a model step describes and prepares them. */
export interface StepTools {
  describe(names: string[] | undefined): Promise<DescribedTools>;
  prepare(calls: PrepareToolCallsInput['calls']): Promise<ToolCallDisposition[]>;
}

export async function runModelStep(
  request: ModelStepRequest,
  tools: StepTools,
  caches: ModelStepCaches,
  context: Context,
  call: (input: ModelStepInput) => Promise<ModelStepResult>,
): Promise<ModelStepResult> {
  const { describeTools, ...step } = request;
  const described = describeTools ? withHandoffs(await describe(tools, describeTools.names, request, context), describeTools.handoffs) : undefined;
  if (described) {
    // Sent inline and by hash, so the worker keeps them for the steps that send the hash alone.
    step.tools = modelToolsOf(described.specs);
    step.toolsHash = toolSetHash(step.tools);
  }
  let offered: ModelToolSpec[] = [];
  const result = await resolveModelStep(step, caches, context, (input) => {
    offered = input.tools;
    return call(input);
  });
  const dispositions = await prepareCalls(result, offered, tools);
  return { ...result, ...(described ? { described } : {}), ...(dispositions ? { dispositions } : {}) };
}

/**
 * The turn's tools. When MCP servers it needs cannot list theirs, the turn is told which before
 * the attempt fails (mcp/mcp-unavailable.ts): Temporal keeps retried attempts out of its history.
 */
async function describe(tools: StepTools, names: string[] | undefined, request: ModelStepRequest, context: Context): Promise<DescribedTools> {
  try {
    return await tools.describe(names);
  } catch (error) {
    await reportUnavailable(context, request.stream?.step, error);
    throw error;
  }
}

/** The worker's tools and the turn's handoff tools (workflows/agents/handoff-tools.ts), which the turn settles itself. */
function withHandoffs(described: DescribedTools, handoffs: HandoffTarget[] | undefined): DescribedTools {
  return handoffs && handoffs.length > 0 ? { ...described, specs: withHandoffTools(described.specs, handoffs) } : described;
}

/** One disposition per tool call of the step, null for a tool it did not offer; none when no call is of an offered tool, or the step was cut off (its calls never run). */
async function prepareCalls(result: ModelStepResult, offered: ModelToolSpec[], tools: StepTools): Promise<Array<ToolCallDisposition | null> | undefined> {
  const calls = result.message.content.filter((part): part is ToolCallPart => part.type === 'tool-call');
  if (calls.length === 0 || cutOffStatus(result.finishReason)) return undefined;
  const names = new Set(offered.map((tool) => tool.name));
  const known = calls.filter((call) => names.has(call.toolName));
  if (known.length === 0) return undefined;
  const decided = await tools.prepare(known.map(({ toolCallId, toolName, input }) => ({ toolCallId, toolName, input })));
  let next = 0;
  return calls.map((call) => (names.has(call.toolName) ? decided[next++] : null));
}
