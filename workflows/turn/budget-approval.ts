/**
 * A budget approval, parked and read back: the part shared by the turn's own budget
 * (`budget-gate.ts`) and its tenant's (`tenant-budget-gate.ts`). It is decided, listed and audited
 * like a tool approval (`kind: 'budget'`, tool name `turnpike_budget`, a `budget-<n>` id that is
 * never a call of the model); what an approval extends is the caller's business.
 */
import { msToNumber } from '@temporalio/common';
import * as wf from '@temporalio/workflow';
import { BUDGET_APPROVAL_SCHEMA } from '../budgets/budget-spend.js';
import type { CallEntry } from '../calls/call-ledger.js';
import { DEFAULT_PARK_TIMEOUT, type TurnContext } from '../context/turn-context.js';
import { inputHash } from '../messages/input-hash.js';
import { park, personsDecision } from './parking.js';
import type { BudgetApprovalInput, PendingToolCall, ToolCallPart, ToolSpec } from '../types/index.js';

/** The tool name budget approvals show under; never offered to the model. */
export const BUDGET_TOOL_NAME = 'turnpike_budget';

/** What a budget approval's edited input is checked against (`approveToolCall` with `input`). */
export const BUDGET_SPEC: ToolSpec = {
  name: BUDGET_TOOL_NAME,
  description: "Extend the turn's budget by `extendBy`, or deny to stop the turn.",
  inputSchema: BUDGET_APPROVAL_SCHEMA,
  kind: 'server',
  approval: 'always',
};

/**
 * How a budget approval ended: superseded by a newer message, stopped (denied, or no decision
 * within `approvalTimeout`), or approved with the `extendBy` to apply (the approver's edit, which
 * was checked against `BUDGET_APPROVAL_SCHEMA` when it arrived, or the one asked for).
 */
export type BudgetApprovalOutcome = { outcome: 'superseded' } | { outcome: 'stopped' } | { outcome: 'approved'; extendBy: BudgetApprovalInput['extendBy'] };

/**
 * Parks a budget approval for `input`, shown with `reason`, waits for its decision, records it,
 * and hands the outcome to `then` in the same tick. A cancellation while it waits is recorded
 * and rethrown.
 *
 * `then` is called, not awaited after: code that runs after the decision in another microtask
 * could send its commands in another order than the recorded histories (replay sets
 * `0.2.0-budgets` and `0.5.0-tenant-budgets`), where the turn's ending followed the decision at
 * once.
 */
export async function askBudgetApproval<R>(turn: TurnContext, input: BudgetApprovalInput, reason: string, then: (decided: BudgetApprovalOutcome) => R | Promise<R>): Promise<R> {
  const call: ToolCallPart = { type: 'tool-call', toolCallId: nextBudgetId(turn), toolName: BUDGET_TOOL_NAME, input };
  const entry = turn.ledger.add(call, 'other');
  const timeout = turn.input.approvalTimeout ?? DEFAULT_PARK_TIMEOUT;
  const view = budgetView(turn, call, input, timeout, reason);
  turn.nudges.send(turn.nudgeContext(), view, 'parked');
  const { kind: _kind, approvers: _approvers, approverGroups: _groups, ...shown } = view;
  turn.publisher.publish({ type: 'budget-requested', step: turn.step, ...shown, approvalId: view.approvalId!, input });
  let arrived: boolean;
  try {
    arrived = await park(turn, entry, view, BUDGET_SPEC, timeout);
  } catch (error) {
    if (wf.isCancellation(error)) budgetApprovalCancelled(turn, entry, view);
    throw error;
  }
  const decision = { approvalId: view.approvalId!, toolCallId: call.toolCallId, toolName: BUDGET_TOOL_NAME, inputHash: view.inputHash, decidedAt: new Date().toISOString() };
  const resolution = entry.resolution;
  if (resolution?.kind === 'superseded') {
    turn.ledger.settle(entry, 'superseded');
    turn.noteDecision(view, { ...decision, outcome: 'superseded', approved: false, automatic: true });
    return then({ outcome: 'superseded' });
  }
  if (!arrived || resolution?.kind !== 'decision') {
    turn.ledger.settle(entry, 'expired');
    turn.noteDecision(view, { ...decision, outcome: 'expired', approved: false, automatic: true, reason: `no decision within ${timeout}` });
    return then({ outcome: 'stopped' });
  }
  const { request, decidedAt } = resolution;
  turn.noteDecision(view, personsDecision(decision, request, decidedAt));
  if (!request.approved) return then({ outcome: 'stopped' });
  const extendBy = request.input !== undefined ? (request.input as Pick<BudgetApprovalInput, 'extendBy'>).extendBy : input.extendBy;
  return then({ outcome: 'approved', extendBy });
}

/** `budget-<n>`, the first such id the turn has not used. */
function nextBudgetId(turn: TurnContext): string {
  let n = turn.decisions.filter((decision) => decision.toolName === BUDGET_TOOL_NAME).length + 1;
  while (turn.ledger.get(`budget-${n}`)) n++;
  return `budget-${n}`;
}

/** What the budget approval shows in `turnState`, the memo, listings and nudges. */
function budgetView(turn: TurnContext, call: ToolCallPart, input: BudgetApprovalInput, timeout: string, reason: string): PendingToolCall {
  const now = Date.now();
  return {
    kind: 'budget',
    approvalId: turn.newApprovalId(),
    toolCallId: call.toolCallId,
    toolName: BUDGET_TOOL_NAME,
    input,
    inputHash: inputHash(input),
    requestedAt: new Date(now).toISOString(),
    expiresAt: new Date(now + msToNumber(timeout)).toISOString(),
    reason,
  };
}

/** A cancellation while the budget approval waited: recorded, and no longer pending. */
function budgetApprovalCancelled(turn: TurnContext, entry: CallEntry, view: PendingToolCall): void {
  if (!entry.resolution) {
    const { approvalId, toolCallId, toolName, inputHash: shownHash } = view;
    turn.noteDecision(view, { approvalId: approvalId!, toolCallId, toolName, outcome: 'cancelled', approved: false, automatic: true, decidedAt: new Date().toISOString(), inputHash: shownHash });
  }
  turn.ledger.settle(entry, 'cancelled');
  turn.ledger.unpark(entry);
}
