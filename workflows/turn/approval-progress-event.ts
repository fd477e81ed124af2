/**
 * The `approval-progress` event: a parked call's approval moved without being decided (a vote
 * short of the quorum or the denials, a delegation, an escalation step that added approvers).
 * Readers of the turn's stream (SSE, `useChat` as a `data-approval-progress` part) see each one;
 * the decision itself is the call's `tool-result`.
 *
 * Only appends to the turn's in-memory stream: no command of its own.
 */
import type { TurnContext } from '../context/turn-context.js';
import type { PendingToolCall } from '../types/index.js';
import type { TurnEvent } from '../types/turn-events.js';

export type ApprovalProgressChange = Extract<TurnEvent, { type: 'approval-progress' }>['change'];

/** Publishes the call's progress as it is now; nothing for a call without progress. */
export function publishApprovalProgress(turn: TurnContext, view: PendingToolCall, change: ApprovalProgressChange): void {
  if (!view.progress || view.approvalId === undefined) return;
  turn.publisher.publish({
    type: 'approval-progress',
    step: turn.step,
    approvalId: view.approvalId,
    toolCallId: view.toolCallId,
    toolName: view.toolName,
    change,
    // A copy: later votes must not change an event already published.
    progress: JSON.parse(JSON.stringify(view.progress)) as typeof view.progress,
  });
}
