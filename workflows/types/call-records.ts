/**
 * What a turn records of its tool calls: each call's outcome, and every approval decision for the
 * audit trail. Pure types: nothing here runs.
 */
import type { Usage } from './model.js';
import type { ApprovalProgress, ApproverSet } from './approval-rules.js';

export type ToolCallOutcome = 'executed' | 'approved' | 'denied' | 'expired' | 'client' | 'error' | 'cancelled';

export interface ApprovalRecord {
  approvalId: string;
  approved: boolean;
  automatic: boolean;
  approver?: string;
  reason?: string;
  /** ISO 8601. */
  decidedAt: string;
}

export interface ToolCallRecord {
  toolCallId: string;
  toolName: string;
  input: unknown;
  outcome: ToolCallOutcome;
  output: unknown;
  isError: boolean;
  approval?: ApprovalRecord;
  /** An agent tool's call: the child turn's token usage (included in the turn's `usage`). */
  usage?: Usage;
  /**
   * `'provider'`: a hosted tool the provider ran itself within a model step (a
   * `ProviderToolPart`): never an activity, never parked, outcome `executed` (or `error`).
   */
  executedBy?: 'provider';
}

/**
 * One approval decision, for the audit trail: a person's, a policy's (`automatic`), or what
 * ended the wait without one (expired, superseded, cancelled).
 */
export interface DecisionRecord {
  approvalId: string;
  toolCallId: string;
  toolName: string;
  outcome: 'approved' | 'denied' | 'expired' | 'superseded' | 'cancelled';
  approved: boolean;
  automatic: boolean;
  approver?: string;
  approverGroups?: string[];
  reason?: string;
  /** ISO 8601. */
  decidedAt: string;
  /** The hash of the input the decision was shown. */
  inputHash: string;
  /** The approver's edit, when they changed the input. */
  editedInput?: unknown;
  /** A call with a quorum, escalation or delegation: every vote, step and delegation up to the decision. */
  progress?: ApprovalProgress;
  /**
   * Who could decide the call when it was settled: the tool's approvers and groups, grown by
   * escalation and delegation (absent when anyone could). The HTTP API answers such an approver's
   * late decision with 409, as it answers the deciders.
   */
  eligible?: ApproverSet;
}
