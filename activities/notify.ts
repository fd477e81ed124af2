/**
 * Nudges: a webhook when a call parks for approval, when its approval is about to expire, when
 * a vote, an escalation step or a delegation changes it, and when it is decided. Sent by an activity, so a receiver that is down is retried with backoff by
 * Temporal (the turn does not wait for it, except before it ends). Each request carries:
 *
 * - a Slack-compatible body (`text`, plus a `turnpike` object with the details);
 * - `X-Turnpike-Delivery`: `<turn>/<approval>/<event>`, the same on every retry, so a receiver
 *   can drop a delivery it already has;
 * - with a secret, `X-Turnpike-Timestamp` and `X-Turnpike-Signature: sha256=<hex HMAC of
 *   "<timestamp>.<body>">`, so the receiver knows the request came from turnpike.
 */
import { createHmac } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import type { ApprovalNotification } from '../workflows/types/index.js';

export interface NotificationOptions {
  /** Where the notifications go (a Slack incoming webhook, or your own endpoint). */
  url: string;
  /** HMAC-SHA256 key for `X-Turnpike-Signature`. */
  secret?: string;
  /** How long before an approval expires the "expiring" nudge goes out. Default `1h`. */
  expiringBefore?: string;
}

/** `TURNPIKE_WEBHOOK_URL`, `TURNPIKE_WEBHOOK_SECRET`, `TURNPIKE_WEBHOOK_EXPIRING_BEFORE`; undefined without a URL. */
export function notificationOptionsFromEnvironment(env: NodeJS.ProcessEnv = process.env): NotificationOptions | undefined {
  if (!env.TURNPIKE_WEBHOOK_URL) return undefined;
  return {
    url: env.TURNPIKE_WEBHOOK_URL,
    ...(env.TURNPIKE_WEBHOOK_SECRET ? { secret: env.TURNPIKE_WEBHOOK_SECRET } : {}),
    ...(env.TURNPIKE_WEBHOOK_EXPIRING_BEFORE ? { expiringBefore: env.TURNPIKE_WEBHOOK_EXPIRING_BEFORE } : {}),
  };
}

/** The line a person reads in Slack. */
function summary(notification: ApprovalNotification): string {
  const { event, toolName, turnId } = notification;
  if (event === 'parked') return `Approval needed: ${toolName} in turn ${turnId}${notification.reason ? ` — ${notification.reason}` : ''}`;
  if (event === 'expiring') return `Approval expiring soon (${notification.expiresAt}): ${toolName} in turn ${turnId}`;
  if (event === 'voted') {
    const progress = notification.progress;
    const votes = progress ? ` — ${progress.votes.filter((vote) => vote.approved).length} of ${progress.quorum} approvals so far` : '';
    return `Approval vote: ${toolName} in turn ${turnId}${votes}`;
  }
  if (event === 'escalated' || event === 'delegated') {
    const to = [...(notification.added?.approvers ?? []), ...(notification.added?.approverGroups ?? []).map((group) => `group ${group}`)].join(', ');
    const why = notification.delegationReason ? ` — ${notification.delegationReason}` : '';
    return `Approval ${event} to ${to}: ${toolName} in turn ${turnId}${why}`;
  }
  return `Approval ${notification.outcome}: ${toolName} in turn ${turnId}${notification.approver ? ` by ${notification.approver}` : ''}`;
}

export function signNotification(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

export async function sendNotification(options: NotificationOptions, notification: ApprovalNotification, signal?: AbortSignal): Promise<void> {
  const body = JSON.stringify({ text: summary(notification), turnpike: notification });
  const timestamp = String(Math.floor(Date.now() / 1000));
  const response = await fetch(options.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-turnpike-delivery': `${notification.turnId}/${notification.approvalId}/${notification.event}${notification.sequence !== undefined ? `/${notification.sequence}` : ''}`,
      ...(options.secret ? { 'x-turnpike-timestamp': timestamp, 'x-turnpike-signature': signNotification(options.secret, timestamp, body) } : {}),
    },
    body,
    signal: signal ?? null,
  });
  if (response.ok) return;
  const message = `webhook answered ${response.status} for ${notification.event} of ${notification.approvalId}`;
  // 408, 429 and 5xx may pass; any other 4xx will not, however often it is retried.
  if (response.status >= 400 && response.status < 500 && response.status !== 408 && response.status !== 429) {
    throw ApplicationFailure.nonRetryable(message, 'WebhookRejected');
  }
  throw ApplicationFailure.retryable(message, 'WebhookUnavailable');
}
