/**
 * Webhook nudges to approvers: a call parked, about to expire, or decided. Each is a
 * `notifyApprovers` activity the turn does not wait for; it waits for all of them before it
 * ends, so none is lost. The worker says whether it sends them, with the turn's tools.
 */
import * as wf from '@temporalio/workflow';
import type { TurnpikeActivities } from '../../activities/index.js';
import type { ApprovalNotification, DecisionRecord, PendingToolCall } from '../types/index.js';

/** A receiver that is down is retried with backoff for about a quarter of an hour. */
const { notifyApprovers } = wf.proxyActivities<TurnpikeActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m', maximumAttempts: 20, nonRetryableErrorTypes: ['WebhookRejected'] },
});

export class ApprovalNudges {
  /** Set when the worker sends nudges; read once, with the turn's tools. */
  settings?: { expiringBeforeMs: number };
  private readonly inFlight: Array<Promise<void>> = [];

  /** How long before a parked approval expires its "expiring" nudge goes; 0 without nudges. */
  expiringBeforeMs(view: PendingToolCall): number {
    return this.settings && view.approvalId ? this.settings.expiringBeforeMs : 0;
  }

  /** Sends a nudge about an approval without waiting for it. */
  send(
    turn: { turnId: string; conversationId?: string; parentTurnId?: string },
    view: PendingToolCall,
    event: ApprovalNotification['event'],
    decision?: DecisionRecord,
    extra?: Pick<ApprovalNotification, 'added' | 'delegationReason' | 'sequence'>,
  ): void {
    if (!this.settings || !view.approvalId) return;
    const notification: ApprovalNotification = {
      event,
      ...turn,
      approvalId: view.approvalId,
      toolCallId: view.toolCallId,
      toolName: view.toolName,
      input: view.input,
      inputHash: view.inputHash,
      ...(view.reason !== undefined ? { reason: view.reason } : {}),
      requestedAt: view.requestedAt,
      expiresAt: view.expiresAt,
      ...(decision ? { outcome: decision.outcome, decidedAt: decision.decidedAt, ...(decision.approver ? { approver: decision.approver } : {}) } : {}),
      ...extra,
      ...(view.progress ? { progress: view.progress } : {}),
    };
    this.inFlight.push(
      notifyApprovers(notification).catch((error: unknown) => {
        wf.log.warn('An approval nudge could not be delivered', { event, approvalId: view.approvalId, error: String(error) });
      }),
    );
  }

  /** Resolves when every nudge sent so far was delivered or given up on. */
  async drain(): Promise<void> {
    await Promise.all(this.inFlight);
  }
}
