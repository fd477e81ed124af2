/**
 * The worker's one module that loads `@slack/web-api` (an optional peer): slack-notifier.ts imports
 * it on first use through `importOptional`, so a worker without Slack never needs the package. (The
 * API's interactions route has its own client, api/slack/slack-web-api.ts: it retries a little,
 * because a person waits on it; this one leaves retries to Temporal.)
 */
import { WebClient } from '@slack/web-api';
import type { SlackMessageRef } from '../../workflows/types/index.js';
import type { SlackApprovalMessage } from './approval-message.js';

export interface SlackChat {
  post(channel: string, message: SlackApprovalMessage): Promise<SlackMessageRef>;
  update(ref: SlackMessageRef, message: SlackApprovalMessage): Promise<void>;
}

/**
 * A client that tries each call once: Temporal retries the activity (with its backoff), so a
 * rate limit or an outage is reported at once instead of retried inside the activity's timeout.
 */
export function slackChat(botToken: string, apiUrl: string | undefined): SlackChat {
  const client = new WebClient(botToken, {
    ...(apiUrl ? { slackApiUrl: apiUrl } : {}),
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
    timeout: 20_000,
  });
  return {
    async post(channel, message) {
      const result = await client.chat.postMessage({ channel, text: message.text, blocks: message.blocks as never, unfurl_links: false, unfurl_media: false });
      // Slack answers with the channel's id, which chat.update needs, even for a channel named by its name.
      return { channel: result.channel ?? channel, ts: result.ts! };
    },
    async update(ref, message) {
      await client.chat.update({ channel: ref.channel, ts: ref.ts, text: message.text, blocks: message.blocks as never });
    },
  };
}
