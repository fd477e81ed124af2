/**
 * The chunks `/api/chat` writes: the subset of the AI SDK's `UIMessageChunk` that
 * `UiMessageChunkMapper` (ui-message-chunks.ts) makes of turn events, and what turnpike's own
 * data parts hold (`data-budget`, `data-approval-progress`).
 */
import type { ApprovalProgress, BudgetApprovalInput, DecisionRecord, ToolServersWait, TurnBudget } from '../workflows/types/index.js';
import type { OutputChunk } from './ui-output-part.js';

/** What the `data-budget` part holds: the request, the client's response to it, then the decision. */
export type BudgetPartData =
  | { state: 'requested'; approvalId: string; toolCallId: string; input: BudgetApprovalInput; inputHash: string; reason?: string; expiresAt: string }
  /** Set by the client (not streamed): extend (by `extendBy`, default the request's) or stop. */
  | { state: 'responded'; approvalId: string; toolCallId: string; input: BudgetApprovalInput; inputHash: string; response: { approved: boolean; extendBy?: TurnBudget; reason?: string } }
  | {
      state: 'decided';
      approvalId: string;
      toolCallId: string;
      input: BudgetApprovalInput;
      outcome: DecisionRecord['outcome'];
      /** What the limits grew by, when approved. */
      extendBy?: TurnBudget;
      approver?: string;
      reason?: string;
      decidedAt: string;
    };

/** What the `data-approval-progress` part holds: a parked call's votes, escalation and delegations so far. */
export interface ApprovalProgressPartData {
  approvalId: string;
  toolCallId: string;
  change: 'vote' | 'delegation' | 'escalation';
  progress: ApprovalProgress;
}

/** The chunks this mapper writes (a subset of the AI SDK's `UIMessageChunk`). */
export type UiMessageChunk =
  | { type: 'start'; messageId: string }
  | { type: 'start-step' }
  | { type: 'finish-step' }
  | { type: 'reset-step' }
  | { type: 'text-start' | 'text-end' | 'reasoning-start' | 'reasoning-end'; id: string }
  | { type: 'text-delta' | 'reasoning-delta'; id: string; delta: string }
  | { type: 'tool-input-start'; toolCallId: string; toolName: string }
  | { type: 'tool-input-delta'; toolCallId: string; inputTextDelta: string }
  | { type: 'tool-input-available'; toolCallId: string; toolName: string; input: unknown; providerExecuted?: boolean }
  | { type: 'tool-input-error'; toolCallId: string; toolName: string; input: unknown; errorText: string }
  | { type: 'tool-approval-request'; approvalId: string; toolCallId: string; reason?: string }
  | { type: 'tool-output-available'; toolCallId: string; output: unknown; providerExecuted?: boolean }
  | { type: 'source-url'; sourceId: string; url: string; title?: string }
  | { type: 'source-document'; sourceId: string; mediaType: string; title: string; filename?: string }
  | { type: 'tool-output-denied'; toolCallId: string }
  | { type: 'tool-output-error'; toolCallId: string; errorText: string; providerExecuted?: boolean }
  | { type: 'data-tools-left-out'; data: { servers: Array<{ server: string; reason: string }> } }
  | { type: 'data-servers-unavailable'; id: string; data: ToolServersWait }
  | { type: 'data-approval-progress'; id: string; data: ApprovalProgressPartData }
  | { type: 'data-budget'; id: string; data: BudgetPartData }
  | OutputChunk
  | { type: 'finish'; finishReason: 'stop' | 'length' | 'content-filter' | 'tool-calls' | 'error' | 'other' }
  | { type: 'error'; errorText: string };
