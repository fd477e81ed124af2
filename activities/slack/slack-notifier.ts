/**
 * Approval messages in Slack, sent by the `notifyApprovers` activity: a `parked` nudge posts the
 * call's message in its channel (slack-options.ts) and reports where; every later nudge of the
 * same approval carries that message and updates it (chat.update) with the call as it is now.
 *
 * Slack's errors become the activity's: a rate limit, Slack's own failures, 5xx answers and
 * network errors are retried by Temporal (`SlackUnavailable`); a refusal that no retry changes
 * (`channel_not_found`, `invalid_auth`, `not_authed`, `not_in_channel`, …) is not (`SlackRejected`).
 */
import { ApplicationFailure } from '@temporalio/common';
import { importOptional } from '../../peers/optional-packages.js';
import type { ApprovalNotification, SlackMessageRef } from '../../workflows/types/index.js';
import { approvalMessage } from './approval-message.js';
import { channelFor, type SlackMessageOptions } from './slack-options.js';
import type { SlackChat } from './slack-web-client.js';

/** Slack's platform errors that a retry may pass. */
const RETRYABLE_SLACK_ERRORS = new Set(['ratelimited', 'rate_limited', 'internal_error', 'fatal_error', 'service_unavailable', 'request_timeout', 'team_added_to_org']);

/** How many posted messages a worker remembers, so a retried `parked` nudge does not post again. */
const REMEMBERED_POSTS = 1000;

export class SlackNotifier {
  private chat?: Promise<SlackChat>;
  private readonly unrouted = new Set<string>();
  /** The messages posted lately, by `<turn>/<approval>`, oldest first. */
  private readonly posted = new Map<string, SlackMessageRef>();

  constructor(
    private readonly options: SlackMessageOptions,
    private readonly log: { warn(message: string, meta?: Record<string, unknown>): void },
    /** Loads the module that imports `@slack/web-api` (a test may stand in for a missing package). */
    private readonly load: () => Promise<typeof import('./slack-web-client.js')> = () => import('./slack-web-client.js'),
  ) {}

  /**
   * Posts (on `parked`) or updates the call's message; the message posted, if any. A `parked`
   * nudge whose message was already posted (`earlier`: an earlier attempt's, or one this worker
   * remembers) is not posted again.
   */
  async deliver(notification: ApprovalNotification, earlier?: SlackMessageRef): Promise<SlackMessageRef | undefined> {
    const message = approvalMessage(notification);
    if (notification.event !== 'parked') {
      if (!notification.slackMessage) return undefined;
      await this.call('chat.update', notification, async (chat) => chat.update(notification.slackMessage!, message));
      return notification.slackMessage;
    }
    const channel = channelFor(this.options.channels, notification);
    if (!channel) {
      // Once per tool for the worker's life: every call of it would say the same.
      if (!this.unrouted.has(notification.toolName)) {
        this.unrouted.add(notification.toolName);
        this.log.warn('No Slack channel for this tool or its approver groups, and no default: its approvals get no Slack message', { toolName: notification.toolName });
      }
      return undefined;
    }
    const key = `${notification.turnId}/${notification.approvalId}`;
    const known = earlier ?? this.posted.get(key);
    if (known) return known;
    const posted = await this.call('chat.postMessage', notification, (chat) => chat.post(channel, message));
    this.posted.set(key, posted);
    if (this.posted.size > REMEMBERED_POSTS) this.posted.delete(this.posted.keys().next().value!);
    return posted;
  }

  private async call<T>(method: string, notification: ApprovalNotification, send: (chat: SlackChat) => Promise<T>): Promise<T> {
    this.chat ??= importOptional('Approval messages in Slack (the worker\'s `slack` option)', ['@slack/web-api'], this.load).then((module) =>
      module.slackChat(this.options.botToken, this.options.apiUrl),
    );
    let chat: SlackChat;
    try {
      chat = await this.chat;
    } catch (error) {
      this.chat = undefined;
      throw error;
    }
    try {
      return await send(chat);
    } catch (error) {
      throw slackFailure(error, `${method} for ${notification.event} of ${notification.approvalId}`);
    }
  }
}

/** A `@slack/web-api` error as the activity's failure: retryable unless Slack refused for good. */
export function slackFailure(error: unknown, what: string): ApplicationFailure {
  const { code, data, statusCode, retryAfter } = (error ?? {}) as { code?: string; data?: { error?: string }; statusCode?: number; retryAfter?: number };
  const cause = error instanceof Error ? error : undefined;
  if (code === 'slack_webapi_platform_error') {
    const slackError = data?.error ?? 'unknown_error';
    const retryable = RETRYABLE_SLACK_ERRORS.has(slackError);
    return ApplicationFailure.create({ message: `Slack answered ${slackError} to ${what}`, type: retryable ? 'SlackUnavailable' : 'SlackRejected', nonRetryable: !retryable, ...(cause ? { cause } : {}) });
  }
  if (code === 'slack_webapi_rate_limited_error') {
    return ApplicationFailure.create({
      message: `Slack rate-limited ${what} (retry after ${retryAfter ?? '?'} s)`,
      type: 'SlackUnavailable',
      ...(typeof retryAfter === 'number' && retryAfter > 0 ? { nextRetryDelay: `${retryAfter}s` } : {}),
      ...(cause ? { cause } : {}),
    });
  }
  if (code === 'slack_webapi_http_error' && typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500 && statusCode !== 408 && statusCode !== 429) {
    return ApplicationFailure.create({ message: `Slack answered HTTP ${statusCode} to ${what}`, type: 'SlackRejected', nonRetryable: true, ...(cause ? { cause } : {}) });
  }
  return ApplicationFailure.create({ message: `Slack could not be reached for ${what}: ${cause?.message ?? String(error)}`, type: 'SlackUnavailable', ...(cause ? { cause } : {}) });
}
