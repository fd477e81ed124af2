/**
 * The worker's Slack settings for approval messages: the bot token, the channel of each call (by
 * tool, by approver group, or the default), and, for tests, where Slack's Web API is.
 */
import type { ApprovalNotification } from '../../workflows/types/index.js';

/** Where each call's approval message goes: by tool, then by approver group, then the default. */
export interface SlackChannels {
  /** Where a call goes when neither its tool nor its approver groups name a channel. */
  default?: string;
  /** A channel per tool name: first choice. */
  byTool?: Record<string, string>;
  /** A channel per approver group: the first of the call's `approverGroups` found here. */
  byGroup?: Record<string, string>;
}

/** A worker's approval messages in Slack (`TurnpikePluginOptions.slack`; docs/tools-and-approvals.md). */
export interface SlackMessageOptions {
  /** The bot token (`xoxb-…`) of a Slack app with the `chat:write` scope, invited to the channels. */
  botToken: string;
  /** Channel ids (`C0123…`) or names (`#approvals`). A call no channel is chosen for gets no message. */
  channels: SlackChannels;
  /** Slack's Web API, ending in `/api/` (default `https://slack.com/api/`): only to point at a fake. */
  apiUrl?: string;
}

/**
 * `SLACK_BOT_TOKEN` and `TURNPIKE_SLACK_CHANNEL` (the default channel; `TURNPIKE_SLACK_API_URL`,
 * else `SLACK_API_URL` as the HTTP API reads it, only to point at a fake): undefined unless both
 * the token and the channel are set.
 */
export function slackMessageOptionsFromEnvironment(env: NodeJS.ProcessEnv = process.env): SlackMessageOptions | undefined {
  if (!env.SLACK_BOT_TOKEN || !env.TURNPIKE_SLACK_CHANNEL) return undefined;
  return {
    botToken: env.SLACK_BOT_TOKEN,
    channels: { default: env.TURNPIKE_SLACK_CHANNEL },
    ...(env.TURNPIKE_SLACK_API_URL || env.SLACK_API_URL ? { apiUrl: (env.TURNPIKE_SLACK_API_URL || env.SLACK_API_URL)! } : {}),
  };
}

/** The channel of a call's message: by its tool, then by the first of its approver groups that has one, then the default. */
export function channelFor(channels: SlackChannels, notification: Pick<ApprovalNotification, 'toolName' | 'approverGroups'>): string | undefined {
  const byTool = channels.byTool && Object.hasOwn(channels.byTool, notification.toolName) ? channels.byTool[notification.toolName] : undefined;
  if (byTool) return byTool;
  for (const group of notification.approverGroups ?? []) {
    if (channels.byGroup && Object.hasOwn(channels.byGroup, group) && channels.byGroup[group]) return channels.byGroup[group];
  }
  return channels.default || undefined;
}

/** Refuses settings that cannot work, as the worker starts rather than at the first parked call. */
export function checkedSlackMessageOptions(options: SlackMessageOptions, where: string): SlackMessageOptions {
  if (typeof options.botToken !== 'string' || options.botToken.length === 0) throw new TypeError(`${where}: slack.botToken is required`);
  if (!options.channels || typeof options.channels !== 'object') throw new TypeError(`${where}: slack.channels is required ({ default?, byTool?, byGroup? })`);
  return options;
}
