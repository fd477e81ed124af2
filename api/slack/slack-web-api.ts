/**
 * The Slack Web API client of the interactions route: `@slack/web-api`'s `WebClient` (an optional
 * peer, loaded when `buildApi` is given `slack`), with the bot token, and few retries: what it
 * does for a click must be done while the person waits.
 */
import { importOptional } from '../../peers/optional-packages.js';
import type { SlackUsersApi } from './slack-users.js';

/** The methods the interactions route calls. */
export interface SlackWebApi extends SlackUsersApi {
  views: { open(args: { trigger_id: string; view: Record<string, unknown> }): Promise<unknown> };
}

export async function openSlack(botToken: string, apiUrl?: string): Promise<SlackWebApi> {
  if (!botToken) throw new Error('Slack interactions need the bot token (SLACK_BOT_TOKEN) for users.info and views.open');
  const { WebClient } = await importOptional('Slack interactions (buildApi `slack`)', ['@slack/web-api'], () => import('@slack/web-api'));
  return new WebClient(botToken, { ...(apiUrl ? { slackApiUrl: apiUrl } : {}), retryConfig: { retries: 2, maxTimeout: 1_000 } }) as unknown as SlackWebApi;
}
