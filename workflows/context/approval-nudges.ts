/**
 * Nudges to approvers (a webhook, a Slack message): a call parked, about to expire, voted on,
 * escalated, delegated or decided. Each is a `notifyApprovers` activity the turn does not wait
 * for; it waits for all of them before it ends, so none is lost. The worker says whether it
 * sends them, with the turn's tools.
 *
 * `0.4.0-slack-messages` (asked as a call's `parked` nudge is sent): the later nudges of that
 * approval go one after another, each once the one before it is done, and carry the Slack message
 * the `parked` one posted, so each update lands on it in order; a vote that decides nothing sends
 * a `voted` nudge. Before, every nudge went at once and votes sent none.
 */
import * as wf from '@temporalio/workflow';
import type { TurnpikeActivities } from '../../activities/index.js';
import type { ApprovalNotification, DecisionRecord, PendingToolCall, SlackMessageRef } from '../types/index.js';
import { activityPlacement } from './tenant-placement.js';

export const SLACK_MESSAGES_PATCH = '0.4.0-slack-messages';

/**
 * A receiver that is down is retried with backoff for about a quarter of an hour. Queued as the
 * turn is (its priority, context/tenant-placement.ts), so made per call, inside the workflow.
 */
function notifyApprovers(notification: ApprovalNotification): ReturnType<TurnpikeActivities['notifyApprovers']> {
  return wf.proxyActivities<TurnpikeActivities>({
    startToCloseTimeout: '30s',
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m', maximumAttempts: 20, nonRetryableErrorTypes: ['WebhookRejected'] },
    ...activityPlacement(),
  }).notifyApprovers(notification);
}

export class ApprovalNudges {
  /** Set when the worker sends nudges; read once, with the turn's tools. */
  settings?: { expiringBeforeMs: number };
  private readonly inFlight: Array<Promise<void>> = [];
  /** By approval, under `0.4.0-slack-messages`: the last nudge sent, resolving to the Slack message `parked` posted. */
  private readonly chains = new Map<string, Promise<SlackMessageRef | undefined>>();
  /** By approval: the `voted` nudges sent, so each has its own delivery id. */
  private readonly votes = new Map<string, number>();

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
      ...(decision?.reason !== undefined ? { decisionReason: decision.reason } : {}),
      ...(view.approverGroups ? { approverGroups: [...view.approverGroups] } : {}),
      ...extra,
      // A copy: a nudge that goes after the one before it shows the call as it was when it was sent.
      ...(view.progress ? { progress: JSON.parse(JSON.stringify(view.progress)) as typeof view.progress } : {}),
    };
    const approvalId = view.approvalId;
    const warn = (error: unknown) => {
      wf.log.warn('An approval nudge could not be delivered', { event, approvalId, error: String(error) });
    };
    const chain = this.chains.get(approvalId);
    if (event === 'parked' && wf.patched(SLACK_MESSAGES_PATCH)) {
      const posted = notifyApprovers(notification).then(
        (result) => result?.slack,
        (error: unknown) => {
          warn(error);
          return undefined;
        },
      );
      this.chains.set(approvalId, posted);
      this.inFlight.push(posted.then(() => undefined));
      return;
    }
    if (!chain) {
      this.inFlight.push(notifyApprovers(notification).then(() => undefined, warn));
      return;
    }
    // After the nudge before it, with the message it posted: Slack's updates land in order.
    const next = chain.then(async (slackMessage) => {
      try {
        await notifyApprovers(slackMessage ? { ...notification, slackMessage } : notification);
      } catch (error) {
        warn(error);
      }
      return slackMessage;
    });
    this.chains.set(approvalId, next);
    this.inFlight.push(next.then(() => undefined));
  }

  /**
   * A vote that decided nothing: a `voted` nudge, so the call's message shows the votes so far.
   * Only for a call whose `parked` nudge went under `0.4.0-slack-messages`.
   */
  sendVote(turn: { turnId: string; conversationId?: string; parentTurnId?: string }, view: PendingToolCall): void {
    if (!view.approvalId || !this.chains.has(view.approvalId)) return;
    const sequence = this.votes.get(view.approvalId) ?? 0;
    this.votes.set(view.approvalId, sequence + 1);
    this.send(turn, view, 'voted', undefined, { sequence });
  }

  /** Resolves when every nudge sent so far was delivered or given up on. */
  async drain(): Promise<void> {
    await Promise.all(this.inFlight);
  }
}
