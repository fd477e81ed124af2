/**
 * A turn's parked calls and the messages that decide them: the pending call, the webhook nudge
 * about it, what an approver is shown, and the decision or client result that settles it.
 * Pure types: nothing here runs.
 */
import type { JsonSchema } from './messages.js';
import type { DecisionRecord, ToolCallOutcome } from './call-records.js';
import type { ApprovalProgress, ApproverSet } from './approval-rules.js';

export interface PendingToolCall {
  /**
   * `elicitation`: an MCP server asked the user for input while the call ran; answer it with `submitToolResult`.
   * `budget`: the turn reached a limit of its budget; approve to extend it by `input.extendBy`, deny to stop the turn.
   */
  kind: 'approval' | 'client-tool' | 'elicitation' | 'budget';
  approvalId?: string;
  /** For an elicitation: its id (a retried call's new question gets a new one, same toolCallId). */
  elicitationId?: string;
  /** For an elicitation: the server's question. */
  message?: string;
  /** For an elicitation: the JSON Schema (flat object) the accepted answer's `content` must fit. */
  requestedSchema?: JsonSchema;
  toolCallId: string;
  toolName: string;
  input: unknown;
  /** SHA-256 of the input's canonical JSON: a decision applies to exactly this input. */
  inputHash: string;
  /** ISO 8601. */
  requestedAt: string;
  /** ISO 8601. */
  expiresAt: string;
  /** Why the policy asked for a person, when it said. */
  reason?: string;
  /** Who may decide this approval, when the tool restricts it: listings show each approver what they may decide. */
  approvers?: string[];
  approverGroups?: string[];
  /** A tool with a quorum or escalation, or a delegated call: its votes, escalation steps and delegations. */
  progress?: ApprovalProgress;
}

/** What a webhook nudge says about an approval (see activities/notify.ts). */
export interface ApprovalNotification {
  /**
   * `escalated`: a step added approvers (`added`); `delegated`: an approver handed the call to `added`;
   * `voted`: a vote under a quorum that decided nothing yet (`progress` shows the votes so far).
   */
  event: 'parked' | 'expiring' | 'decided' | 'escalated' | 'delegated' | 'voted';
  turnId: string;
  conversationId?: string;
  /** A sub-agent's call: the turn whose agent tool call started this turn. */
  parentTurnId?: string;
  approvalId: string;
  toolCallId: string;
  toolName: string;
  input: unknown;
  inputHash: string;
  /** Why the policy asked for a person. */
  reason?: string;
  /** ISO 8601. */
  requestedAt: string;
  /** ISO 8601. */
  expiresAt: string;
  /** With `decided`. */
  outcome?: DecisionRecord['outcome'];
  approver?: string;
  decidedAt?: string;
  /** With `decided`: the decision's reason (a denial's, an escalation step's, an expiry's). */
  decisionReason?: string;
  /** Who may decide the call when it is restricted: its channel in Slack is chosen by these groups. */
  approverGroups?: string[];
  /** With `escalated` and `delegated`: who was added to those who may decide. */
  added?: ApproverSet;
  /** With `escalated` and `delegated`: which step or delegation of the call (from 0), so each has its own delivery id. */
  sequence?: number;
  /** With `delegated`: why. */
  delegationReason?: string;
  /** The call's votes, escalation and delegations so far, when it has any. */
  progress?: ApprovalProgress;
  /** After `parked`: the Slack message the worker posted for the call, which later nudges update. */
  slackMessage?: SlackMessageRef;
}

/** A message in Slack: its channel's id and its timestamp (`ts`), which `chat.update` names. */
export interface SlackMessageRef {
  channel: string;
  ts: string;
}

/** What a `notifyApprovers` activity reports: on `parked`, the Slack message it posted, if any. */
export interface NotifyApproversResult {
  slack?: SlackMessageRef;
}

/** `callContext` query: what an approver needs to decide a parked call. */
export interface CallContextRequest {
  toolCallId: string;
}

export interface CallContext {
  toolCallId: string;
  toolName: string;
  /** The user message that started the turn. */
  userMessage: string;
  /** What the model wrote in the step that made this call, before or around it. */
  assistantText: string;
  /** Results of the turn's earlier tool calls, in order. */
  earlierResults: Array<{ toolCallId: string; toolName: string; outcome: ToolCallOutcome; output: unknown; isError: boolean }>;
  /** The tool's input JSON Schema, for an edit-before-approve form (the turn validates the edit again). */
  inputSchema: JsonSchema;
}

export interface ApproveToolCallInput {
  approvalId: string;
  approved: boolean;
  reason?: string;
  approver?: string;
  /** The approver's groups, checked against the tool's `approverGroups` (the HTTP API fills them from the caller's token). */
  approverGroups?: string[];
  /** An approver's edit of the input; validated against the tool's schema again. */
  input?: unknown;
  /** When given, must equal the pending call's `inputHash`: binds the decision to what was shown. */
  inputHash?: string;
}

export interface ApproveToolCallResult {
  approvalId: string;
  toolCallId: string;
  approved: boolean;
  decidedAt: string;
  /** With a quorum: the approvals so far and whether this vote decided the call. */
  votes?: { approvals: number; quorum: number; decided: boolean };
}

export interface SubmitToolResultInput {
  toolCallId: string;
  output: unknown;
  isError?: boolean;
}

export interface SubmitToolResultResult {
  toolCallId: string;
  acceptedAt: string;
}
