/**
 * Settling a model step: every tool call of the step gets exactly one result, in parallel. The
 * worker decided each call with the step (`activities/model-step.ts`): run it, decide it by
 * policy, park it for a person or for the client, or answer it with an error (unknown tool,
 * invalid input, repeated id). The results go back to the model in its call order, whatever
 * order they settled in.
 */
import * as wf from '@temporalio/workflow';
import type { TurnpikeActivities } from '../../activities/index.js';
import { mayStartChild, refuseAgentCall, runAgentCall } from '../agents/agent-tool-call.js';
import { closeChildShare, openChildShares } from '../agents/child-budgets.js';
import type { CallEntry, CallKind } from '../calls/call-ledger.js';
import { isHandoffCall, settleHandoff } from './handoffs.js';
import { isProviderApproval } from '../calls/provider-approvals.js';
import { MCP_APPROVAL_PATCH, settleProviderApproval } from './provider-approval.js';
import { inputHash } from '../messages/input-hash.js';
import { recordDecision } from '../context/park-telemetry.js';
import { awaitApproval, awaitClientResult, supersededSettlement } from './parking.js';
import { deniedMessage, errorSettlement, type Settlement } from '../calls/tool-results.js';
import type { TurnContext } from '../context/turn-context.js';
import { activityPlacement } from '../context/tenant-placement.js';
import type { ActivityCallOptions, ApprovalRecord, ToolCallDisposition, ToolCallPart, ToolResultPart, ToolSpec } from '../types/index.js';

/**
 * Settles every call of one step; resolves when each has exactly one result. `dispositions`
 * come with the step, one per call in order; a call of a tool the turn does not offer, or one
 * that repeats an earlier call's id, has none.
 */
export async function settleStep(turn: TurnContext, calls: ToolCallPart[], repeated: Set<string>, dispositions: Array<ToolCallDisposition | null>): Promise<ToolResultPart[]> {
  turn.openStep = calls;
  const byCall = new Map(
    calls.map((call, index) => [call, turn.specs.has(call.toolName) && !repeated.has(call.toolCallId) && !isHandoffCall(turn, call) ? (dispositions[index] ?? undefined) : undefined]),
  );
  // A budgeted turn's agent tool calls share what is left of its budget (child-budgets.ts).
  openChildShares(turn, calls.filter((call) => maySpendBudget(turn, call, byCall.get(call))).map((call) => call.toolCallId));
  await Promise.all(
    calls.map(async (call) => {
      const disposition = byCall.get(call);
      const kind: CallKind = disposition?.kind === 'client' ? 'client' : disposition ? 'server' : 'other';
      const entry = turn.ledger.add(call, kind, disposition && 'input' in disposition ? disposition.input : undefined);
      turn.publisher.publish({
        type: 'tool-call',
        step: turn.step,
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        input: disposition && 'input' in disposition ? disposition.input : call.input,
        ...(disposition?.kind === 'invalid' ? { invalid: disposition.error } : {}),
      });
      entry.settlement = await settleCall(turn, entry, disposition);
      closeChildShare(turn, call.toolCallId);
      turn.publisher.publishResult(turn.step, call, entry.settlement);
    }),
  );
  turn.openStep = undefined;
  // Call order, whatever order they settled in.
  turn.records.push(...calls.map((call) => turn.ledger.record(call.toolCallId)));
  return calls.map((call) => turn.ledger.resultPart(call.toolCallId));
}

/** Whether the call may start a child turn, and so waits for a share of the turn's budget. */
function maySpendBudget(turn: TurnContext, call: ToolCallPart, disposition: ToolCallDisposition | undefined): boolean {
  const spec = turn.specs.get(call.toolName);
  if (!spec || !disposition || disposition.kind === 'invalid' || disposition.kind === 'client') return false;
  if (disposition.kind === 'decided' && !disposition.approved) return false;
  return mayStartChild(turn, spec, call.toolName);
}

async function settleCall(turn: TurnContext, entry: CallEntry, disposition: ToolCallDisposition | undefined): Promise<Settlement> {
  const { call } = entry;
  const spec = turn.specs.get(call.toolName);
  if (turn.superseded) return supersededSettlement(turn, entry);
  if (isHandoffCall(turn, call)) return settleHandoff(turn, call);
  // A provider's own approval request (OpenAI remote MCP) parks for a person; asked only for one.
  if (isProviderApproval(call) && wf.patched(MCP_APPROVAL_PATCH)) return settleProviderApproval(turn, entry);
  if (spec && !disposition) {
    return errorSettlement('error', `This call repeated an earlier tool call id, so it was not run. Use a new id for each call.`);
  }
  if (!spec || !disposition) {
    const available = [...turn.specs.keys()].join(', ') || '(none)';
    return errorSettlement('error', `Unknown tool "${call.toolName}". Available tools: ${available}.`);
  }
  // A sub-agent too deep or in a cycle is answered before anything parks or runs.
  const refused = spec.kind === 'agent' && disposition.kind !== 'invalid' ? refuseAgentCall(turn, spec, call, disposition.input) : undefined;
  if (refused) return refused;
  switch (disposition.kind) {
    case 'invalid':
      return errorSettlement('error', disposition.error);
    case 'execute':
      return runTool(turn, spec, call, disposition.input, 'executed');
    case 'decided':
      return decidedByPolicy(turn, spec, call, disposition);
    case 'needs-approval': {
      const outcome = await awaitApproval(turn, entry, spec, disposition.input, disposition.reason);
      if ('settlement' in outcome) return outcome.settlement;
      return { ...(await runTool(turn, spec, call, outcome.run.input, 'approved')), approval: outcome.run.approval };
    }
    case 'client':
      return awaitClientResult(turn, entry, spec, disposition.input);
  }
}

/** The approval policy decided the call: recorded as an automatic decision, then run or denied. */
async function decidedByPolicy(turn: TurnContext, spec: ToolSpec, call: ToolCallPart, disposition: Extract<ToolCallDisposition, { kind: 'decided' }>): Promise<Settlement> {
  const approval: ApprovalRecord = {
    approvalId: turn.newApprovalId(),
    approved: disposition.approved,
    automatic: true,
    ...(disposition.reason !== undefined ? { reason: disposition.reason } : {}),
    decidedAt: new Date().toISOString(),
  };
  recordDecision(call.toolName, disposition.approved ? 'approved' : 'denied', true);
  turn.decisions.push({
    approvalId: approval.approvalId,
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    outcome: disposition.approved ? 'approved' : 'denied',
    approved: disposition.approved,
    automatic: true,
    ...(disposition.reason !== undefined ? { reason: disposition.reason } : {}),
    decidedAt: approval.decidedAt,
    inputHash: inputHash(disposition.input),
  });
  if (!disposition.approved) return errorSettlement('denied', deniedMessage(call.toolName, disposition.reason), approval);
  return { ...(await runTool(turn, spec, call, disposition.input, 'approved')), approval };
}

async function runTool(turn: TurnContext, spec: ToolSpec, call: ToolCallPart, input: unknown, outcome: 'executed' | 'approved'): Promise<Settlement> {
  // A sub-agent runs as a child turn, not as an activity.
  if (spec.kind === 'agent') return runAgentCall(turn, spec, call, input, outcome);
  const request = { toolName: call.toolName, toolCallId: call.toolCallId, input, idempotencyKey: `${wf.workflowInfo().workflowId}/${call.toolCallId}` };
  // Its work may run elsewhere (a remote A2A task): a cancelled turn cancels it there (cancel-running-calls.ts).
  if (spec.cancellable) turn.cancellableCalls.set(call.toolCallId, { ...request, startedAtMs: Date.now() });
  try {
    const result = await toolActivity(spec)(request);
    turn.cancellableCalls.delete(call.toolCallId);
    return { outcome: result.isError ? 'error' : outcome, output: result.output, isError: result.isError, input };
  } catch (error) {
    // Cancelled, the call stays among the turn's cancellable calls until the turn cancels it.
    if (wf.isCancellation(error)) throw error;
    turn.cancellableCalls.delete(call.toolCallId);
    // The tool failed after its retries: the model sees why and may try something else.
    const cause = error instanceof wf.ActivityFailure && error.cause ? error.cause.message : String(error);
    return { ...errorSettlement('error', `Tool "${call.toolName}" failed: ${cause}`), input };
  } finally {
    // A question the call asked and nobody answered no longer waits once the call is over.
    turn.elicitations.endCall(call.toolCallId);
  }
}

/** The tool's own timeout and retries, or 60 s and 3 attempts. */
function toolActivity(spec: ToolSpec) {
  const options = spec.activityOptions;
  return wf.proxyActivities<TurnpikeActivities>({
    startToCloseTimeout: options?.startToCloseTimeout ?? '60s',
    ...(options?.heartbeatTimeout ? { heartbeatTimeout: options.heartbeatTimeout } : {}),
    retry: toRetryPolicy(options, 3),
    ...activityPlacement(),
  }).executeTool;
}

/** An activity's retry policy: its own, over `fallbackAttempts` attempts. */
export function toRetryPolicy(options: ActivityCallOptions | undefined, fallbackAttempts: number): wf.ActivityOptions['retry'] {
  return { maximumAttempts: fallbackAttempts, ...options?.retry } as wf.ActivityOptions['retry'];
}
