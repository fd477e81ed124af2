/**
 * Votes on a parked approval whose tool asks for more than one person (a quorum, the requester
 * excluded, several denials to deny), and who may decide a call whose approvers grew by
 * escalation or delegation. Pure functions of the ledger's entry: the turn applies them in its
 * update handlers and publishes the result (workflows/turn/approval-decisions.ts).
 *
 * Deterministic, no I/O: time comes in as arguments.
 */
import type { CallEntry, CheckedDecision } from './call-ledger.js';
import { inputHash } from '../messages/input-hash.js';
import type { RejectionType } from '../messages/rejection-types.js';
import { rejection } from '../messages/rejection.js';
import type { ApprovalProgress, ApprovalRuleSpec, ApproverSet, ApproveToolCallInput, PendingToolCall, ToolSpec } from '../types/index.js';

function reject(type: RejectionType, message: string): never {
  throw rejection(type, message);
}

/** The progress a call with this rule starts with: no votes yet. */
export function newProgress(rule: ApprovalRuleSpec, requester: string | undefined): ApprovalProgress {
  return {
    quorum: rule.quorum ?? 1,
    denials: rule.denials ?? 1,
    votes: [],
    ...(rule.excludeRequester && requester !== undefined ? { excludedRequester: requester } : {}),
  };
}

/**
 * Who may decide a parked call: anyone when its tool names neither approvers nor groups (an
 * escalation or a delegation then only nudges); otherwise those the call lists now, which start
 * as the tool's and grow with each escalation step and delegation.
 */
export function decisionRights(parked: { view: PendingToolCall; spec: ToolSpec }): ApproverSet {
  const { spec, view } = parked;
  if (!spec.approvers && !spec.approverGroups) return {};
  const approvers = union(spec.approvers, view.approvers);
  const approverGroups = union(spec.approverGroups, view.approverGroups);
  return { ...(approvers ? { approvers } : {}), ...(approverGroups ? { approverGroups } : {}) };
}

function union(have: readonly string[] | undefined, more: readonly string[] | undefined): string[] | undefined {
  if (!have && !more) return undefined;
  return [...new Set([...(have ?? []), ...(more ?? [])])];
}

/** Adds approvers to those who may decide a restricted call (a new list each time: the tool's spec shares the first). */
export function addRights(parked: { view: PendingToolCall; spec: ToolSpec }, added: ApproverSet): void {
  if (!parked.spec.approvers && !parked.spec.approverGroups) return;
  const { view, spec } = parked;
  if (added.approvers?.length) view.approvers = union(union(spec.approvers, view.approvers), added.approvers);
  if (added.approverGroups?.length) view.approverGroups = union(union(spec.approverGroups, view.approverGroups), added.approverGroups);
}

/** The checks a vote passes on a call with progress, after those of any decision (`checkDecision`). */
export function checkVote(progress: ApprovalProgress, request: ApproveToolCallInput): void {
  if (request.approver === undefined && (progress.quorum > 1 || progress.denials > 1 || progress.excludedRequester !== undefined)) {
    reject('ApproverNotAllowed', `A vote on a call that needs ${progress.quorum} approvers must name its approver`);
  }
  if (request.approver === undefined) return;
  if (progress.excludedRequester !== undefined && request.approver === progress.excludedRequester) {
    reject('RequesterMayNotDecide', `The approver (${request.approver.length} characters) started this turn, and this tool excludes the requester from its approvals`);
  }
  if (progress.votes.some((vote) => vote.approver === request.approver)) {
    reject('AlreadyVoted', `The approver (${request.approver.length} characters) already voted on this input of approval ${request.approvalId}`);
  }
}

/** The tally of a vote: whether it decided the call, and with which decision. */
export interface VoteOutcome {
  approvals: number;
  quorum: number;
  /** The decision the call wakes with, when this vote reached the quorum or the denials. */
  decision?: ApproveToolCallInput;
}

/**
 * Records a checked vote. An edit replaces the call's input and restarts the votes (the editor's
 * vote approves the edit); the call is approved once `quorum` distinct approvers approved its
 * current input, denied once `denials` of them denied it.
 */
export function recordVote({ entry, request }: CheckedDecision, votedAt: string): VoteOutcome {
  const view = (entry as CallEntry & { parked: NonNullable<CallEntry['parked']> }).parked.view;
  const progress = view.progress!;
  if (request.input !== undefined) {
    view.input = request.input;
    view.inputHash = inputHash(request.input);
    progress.votes = [];
  }
  progress.votes = [
    ...progress.votes,
    {
      ...(request.approver !== undefined ? { approver: request.approver } : {}),
      ...(request.approverGroups !== undefined ? { approverGroups: request.approverGroups } : {}),
      approved: request.approved,
      ...(request.reason !== undefined ? { reason: request.reason } : {}),
      votedAt,
      inputHash: view.inputHash,
      ...(request.input !== undefined ? { editedInput: request.input } : {}),
    },
  ];
  const approvals = progress.votes.filter((vote) => vote.approved).length;
  const denials = progress.votes.length - approvals;
  const tally = { approvals, quorum: progress.quorum };
  if (denials >= progress.denials) return { ...tally, decision: { ...request, approved: false } };
  if (approvals < progress.quorum) return tally;
  // The edit this round of votes approved, if any, is what runs.
  const edit = progress.votes.find((vote) => vote.editedInput !== undefined);
  const { input: _input, ...rest } = request;
  return { ...tally, decision: { ...rest, ...(edit ? { input: edit.editedInput } : {}) } };
}
