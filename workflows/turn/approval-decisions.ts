/**
 * Approvals decided by more than one person: the progress a call with a quorum or escalation
 * parks with, each vote as the turn applies it, and delegation to a named person or group. A
 * vote that does not decide the call is recorded and published (memo, listings); one that
 * reaches the quorum or the denials wakes the call as a decision does (parking.ts).
 *
 * Ships behind `0.4.0-approval-quorum` (asked as a call of a tool with a quorum, an excluded
 * requester or several denials parks) and `0.4.0-approval-delegation` (asked as a delegation is
 * accepted): a turn whose tools ask for neither, and whose approvers never delegate, sends
 * exactly the commands it sent before.
 */
import * as wf from '@temporalio/workflow';
import type { CheckedDecision } from '../calls/call-ledger.js';
import { addRights, newProgress, recordVote } from '../calls/approval-votes.js';
import { escalationSteps } from './approval-escalation.js';
import { publishApprovalProgress } from './approval-progress-event.js';
import type { CallEntry } from '../calls/call-ledger.js';
import type { TurnContext } from '../context/turn-context.js';
import type { ApprovalRuleSpec, ApproveToolCallResult, DelegateApprovalInput, DelegateApprovalResult, PendingToolCall, ToolSpec } from '../types/index.js';

/** The memo key under which the client records who started a turn (`STARTED_BY_MEMO_KEY`). */
const STARTED_BY_MEMO_KEY = 'turnpikeStartedBy';

/** The turn's requester: who started it, as its start recorded (`startedBy`). */
export function requester(): string | undefined {
  const startedBy = wf.workflowInfo().memo?.[STARTED_BY_MEMO_KEY];
  return typeof startedBy === 'string' ? startedBy : undefined;
}

/** Whether a rule asks for votes beyond one person's decision. */
function asksForVotes(rule: ApprovalRuleSpec | undefined): rule is ApprovalRuleSpec {
  return rule !== undefined && ((rule.quorum ?? 1) > 1 || (rule.denials ?? 1) > 1 || rule.excludeRequester === true);
}

/**
 * Gives a call about to park the progress its tool's rule asks for (votes, escalation), or
 * leaves it as before: asked once per parking call, only for a tool with such a rule.
 */
export function startProgress(spec: ToolSpec, view: PendingToolCall): void {
  const rule = spec.rule;
  const votes = asksForVotes(rule) && wf.patched('0.4.0-approval-quorum');
  const escalation = rule?.escalate !== undefined && rule.escalate.length > 0 && wf.patched('0.4.0-approval-escalation');
  if (!votes && !escalation) return;
  view.progress = newProgress(votes ? rule! : {}, requester());
  if (escalation) view.progress.escalation = escalationSteps(view, rule!.escalate!);
}

/** Applies an accepted (or checked) decision: a vote when the call has progress, else the decision itself. */
export function decide(turn: TurnContext, checked: CheckedDecision, decidedAt: string): ApproveToolCallResult {
  const view = checked.entry.parked?.view;
  if (!view?.progress) return turn.ledger.applyDecision(checked, decidedAt);
  const tally = recordVote(checked, decidedAt);
  turn.publisher.publishSoon();
  const votes = { approvals: tally.approvals, quorum: tally.quorum, decided: tally.decision !== undefined };
  if (tally.decision) return { ...turn.ledger.applyDecision({ entry: checked.entry, request: tally.decision }, decidedAt), votes };
  publishApprovalProgress(turn, view, 'vote');
  // Under `0.4.0-slack-messages` (asked as the call parked): the call's message shows the votes so far.
  turn.nudges.sendVote(turn.nudgeContext(), view);
  return { approvalId: checked.request.approvalId, toolCallId: checked.entry.call.toolCallId, approved: checked.request.approved, decidedAt, votes };
}

/** Applies an accepted delegation: recorded on the call, its delegates may decide it, and they are nudged. */
export function delegate(turn: TurnContext, { entry, request }: { entry: CallEntry; request: DelegateApprovalInput }, delegatedAt: string): DelegateApprovalResult {
  const parked = entry.parked!;
  const result = { approvalId: request.approvalId, toolCallId: entry.call.toolCallId, delegatedAt };
  if (!wf.patched('0.4.0-approval-delegation')) return result;
  const { view } = parked;
  const to = { ...(request.to.approvers ? { approvers: request.to.approvers } : {}), ...(request.to.approverGroups ? { approverGroups: request.to.approverGroups } : {}) };
  view.progress ??= newProgress({}, undefined);
  view.progress.delegations = [...(view.progress.delegations ?? []), { from: request.approver!, to, reason: request.reason, delegatedAt }];
  addRights(parked, to);
  turn.publisher.publishSoon();
  publishApprovalProgress(turn, view, 'delegation');
  turn.nudges.send(turn.nudgeContext(), view, 'delegated', undefined, { added: to, delegationReason: request.reason, sequence: view.progress.delegations.length - 1 });
  return result;
}
