/**
 * Decides, before anything runs, what happens to each tool call of a model step: the
 * model's input is validated against the tool's zod schema first, and only a valid input
 * reaches the approval policy. Runs in the model step's activity, right after the model
 * answered (model-step.ts), so a policy may do I/O and its verdict is recorded in history,
 * with the step, for replay.
 */
import { z } from 'zod';
import type { ToolRegistry } from './tool-registry.js';
import { approvalPolicyOf } from './approval-rules.js';
import type { ApprovalVerdict } from './tools.js';
import type { ToolCallDisposition } from '../workflows/types/index.js';

export interface PrepareToolCallsInput {
  calls: Array<{ toolCallId: string; toolName: string; input: unknown }>;
}

function describeIssues(error: z.ZodError): string {
  return z.prettifyError(error);
}

function normalizeVerdict(verdict: ApprovalVerdict): { decision: string; reason?: string } {
  return typeof verdict === 'string' ? { decision: verdict } : verdict;
}

async function prepareOne(registry: ToolRegistry, call: PrepareToolCallsInput['calls'][number]): Promise<ToolCallDisposition> {
  const tool = registry.get(call.toolName);
  if (!tool) return { kind: 'invalid', error: `Unknown tool "${call.toolName}".` };
  if (typeof call.input === 'string') {
    // Providers keep arguments that were not valid JSON as raw text.
    return { kind: 'invalid', error: `Invalid input for tool "${call.toolName}": the arguments are not valid JSON: ${call.input.slice(0, 500)}` };
  }
  const parsed = tool.inputSchema.safeParse(call.input);
  if (!parsed.success) {
    return { kind: 'invalid', error: `Invalid input for tool "${call.toolName}":\n${describeIssues(parsed.error)}` };
  }
  const input = parsed.data;
  if (tool.kind === 'client') return { kind: 'client', input };
  const policy = approvalPolicyOf(tool.approval);
  if (policy === undefined) return { kind: 'execute', input };
  if (policy === true) return { kind: 'needs-approval', input };
  let verdict: { decision: string; reason?: string };
  try {
    verdict = normalizeVerdict(await policy(input, { toolCallId: call.toolCallId }));
  } catch (error) {
    // A failing policy must never let the call through: it becomes an error result.
    return { kind: 'invalid', error: `The approval policy of "${call.toolName}" failed: ${error instanceof Error ? error.message : String(error)}` };
  }
  switch (verdict.decision) {
    case 'approved':
      return { kind: 'decided', input, approved: true, reason: verdict.reason };
    case 'denied':
      return { kind: 'decided', input, approved: false, reason: verdict.reason };
    case 'user-approval':
      return { kind: 'needs-approval', input, reason: verdict.reason };
    default:
      return { kind: 'invalid', error: `The approval policy of "${call.toolName}" returned ${JSON.stringify(verdict.decision)}; expected approved, denied or user-approval.` };
  }
}

export async function prepareToolCalls(registry: ToolRegistry, { calls }: PrepareToolCallsInput): Promise<ToolCallDisposition[]> {
  return Promise.all(calls.map((call) => prepareOne(registry, call)));
}
