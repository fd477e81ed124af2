/**
 * Escalation of a parked approval nobody decides: each step of the tool's `escalate` waits on a
 * durable timer from the moment the call parked, then adds approvers and nudges them, or denies
 * the call with its reason. Votes already cast still count. A step fires at most once: it is a
 * timer in the turn's history, so a worker that replays the turn sees it fired and does not fire
 * it again. Nothing polls.
 *
 * Started only for a call whose progress lists escalation steps (`0.4.0-approval-escalation`,
 * asked in approval-decisions.ts).
 */
import * as wf from '@temporalio/workflow';
import { msToNumber } from '@temporalio/common';
import { addRights } from '../calls/approval-votes.js';
import { publishApprovalProgress } from './approval-progress-event.js';
import type { CallEntry } from '../calls/call-ledger.js';
import type { TurnContext } from '../context/turn-context.js';
import type { EscalationStep, PendingToolCall } from '../types/index.js';

/** The steps of a call as its progress shows them, each due `after` its `requestedAt`. */
export function escalationSteps(view: PendingToolCall, steps: readonly EscalationStep[]): NonNullable<NonNullable<PendingToolCall['progress']>['escalation']> {
  const start = Date.parse(view.requestedAt);
  return steps.map((step) => ({
    after: step.after,
    dueAt: new Date(start + msToNumber(step.after)).toISOString(),
    ...(step.to ? { to: step.to } : {}),
    ...(step.deny !== undefined ? { deny: step.deny } : {}),
  }));
}

/**
 * Runs a parked call's escalation until it is decided, expires or its steps run out. Not awaited:
 * the call's park waits for its resolution, which a `deny` step gives.
 */
export function escalate(turn: TurnContext, entry: CallEntry): void {
  void runSteps(turn, entry).catch((error: unknown) => {
    // Cancelling the turn cancels the step's timer; the park reports the cancellation.
    if (!wf.isCancellation(error)) throw error;
  });
}

async function runSteps(turn: TurnContext, entry: CallEntry): Promise<void> {
  const over = () => entry.resolution !== undefined || entry.settledReason !== undefined || !entry.parked;
  const steps = entry.parked?.view.progress?.escalation ?? [];
  for (const [sequence, step] of steps.entries()) {
    const wait = Date.parse(step.dueAt) - Date.now();
    if (wait > 0 && (await Promise.race([wf.condition(over).then(() => true), wf.sleep(wait).then(() => false)]))) return;
    if (over()) return;
    const parked = entry.parked!;
    step.firedAt = new Date().toISOString();
    if (step.deny !== undefined) {
      const request = { approvalId: parked.view.approvalId!, approved: false, reason: step.deny };
      turn.ledger.applyDecision({ entry, request }, step.firedAt);
      entry.resolution = { kind: 'decision', request, decidedAt: step.firedAt, automatic: true };
      return;
    }
    addRights(parked, step.to!);
    turn.publisher.publishSoon();
    publishApprovalProgress(turn, parked.view, 'escalation');
    turn.nudges.send(turn.nudgeContext(), parked.view, 'escalated', undefined, { added: step.to!, sequence });
  }
}
