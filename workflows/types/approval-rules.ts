/**
 * Approvals the way organizations decide: a quorum of distinct approvers, escalation when nobody
 * decides, and delegation to a named person or group. The rule as a tool's spec carries it, and
 * the progress of one parked call as `turnState`, listings, the memo and nudges show it.
 * Pure types: nothing here runs.
 */

/** Who may decide, or is added to those who may: named approvers and members of groups. */
export interface ApproverSet {
  approvers?: string[];
  approverGroups?: string[];
}

/**
 * One step of an escalation, measured from the moment the call parked: add approvers (`to`) and
 * nudge them, or deny the call with a reason (`deny`), which the model is told.
 */
export type EscalationStep = { after: string; to: ApproverSet; deny?: undefined } | { after: string; deny: string; to?: undefined };

/** What a tool's approval asks beyond one person's decision (data only; see `defineTool`'s `approval`). */
export interface ApprovalRuleSpec {
  /** How many distinct approvers must approve the same input (default 1). */
  quorum?: number;
  /** The person who started the turn (its `startedBy`) may not vote on its calls. */
  excludeRequester?: boolean;
  /** How many denials deny the call (default 1: one denial denies). */
  denials?: number;
  /** Steps in order of `after`; each fires at most once, on a durable timer. */
  escalate?: EscalationStep[];
}

/** One approver's vote on a parked call. */
export interface ApprovalVote {
  /** Absent only where a vote needs no name (a quorum of 1 without exclusions). */
  approver?: string;
  approverGroups?: string[];
  approved: boolean;
  reason?: string;
  /** ISO 8601. */
  votedAt: string;
  /** The hash of the input the vote was shown. */
  inputHash: string;
  /** The voter's edit of the input: it restarted the votes, and counts as their approval of the edit. */
  editedInput?: unknown;
}

/** An escalation step of a parked call: when it is due and, once it fired, when. */
export interface EscalationState {
  after: string;
  /** ISO 8601: the call's `requestedAt` plus `after`. */
  dueAt: string;
  to?: ApproverSet;
  deny?: string;
  /** ISO 8601, once the step fired. */
  firedAt?: string;
}

/** An approver handed the call to a named person or group. */
export interface ApprovalDelegation {
  from: string;
  to: ApproverSet;
  reason: string;
  /** ISO 8601. */
  delegatedAt: string;
}

/**
 * How far a parked call's approval has come: the votes on its current input, the steps of its
 * escalation, and its delegations. On `PendingToolCall.progress` (turnState, listings, memo), and
 * on the call's `DecisionRecord` once it is decided.
 */
export interface ApprovalProgress {
  /** Distinct approvals the call needs. */
  quorum: number;
  /** Denials that deny it. */
  denials: number;
  /** Votes on the current input, in order (an edit restarts them). */
  votes: ApprovalVote[];
  /** The turn's `startedBy`, when the rule excludes the requester from voting. */
  excludedRequester?: string;
  escalation?: EscalationState[];
  delegations?: ApprovalDelegation[];
}

/** `delegateApproval`: an approver hands a parked call to a named person or group. */
export interface DelegateApprovalInput {
  approvalId: string;
  /** Who delegates (the HTTP API fills it from the caller); must be allowed to decide the call. */
  approver?: string;
  approverGroups?: string[];
  to: ApproverSet;
  reason: string;
}

export interface DelegateApprovalResult {
  approvalId: string;
  toolCallId: string;
  delegatedAt: string;
}
