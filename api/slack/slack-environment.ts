/**
 * Slack for `npm run api`: `SLACK_SIGNING_SECRET` and `SLACK_BOT_TOKEN` turn it on; who each
 * Slack user is comes from `TURNPIKE_SLACK_USERS` (JSON, Slack user id → `{ subject, groups,
 * tenant }`) or `TURNPIKE_SLACK_USERS_BY_EMAIL` (JSON, email → `{ subject, groups, tenant }`,
 * through `users.info`); `groups` and `tenant` are optional;
 * `SLACK_API_URL` points at another Web API (tests, proxies).
 */
import type { SlackInteractionOptions } from './interactions-route.js';
import type { SlackIdentity } from './slack-users.js';

/** The Slack options `npm run api` reads (above); undefined when neither secret nor token is set. */
export function slackInteractionOptionsFromEnvironment(env: NodeJS.ProcessEnv = process.env): SlackInteractionOptions | undefined {
  const { SLACK_SIGNING_SECRET: signingSecret, SLACK_BOT_TOKEN: botToken } = env;
  if (!signingSecret && !botToken) return undefined;
  if (!signingSecret || !botToken) throw new Error('Set both SLACK_SIGNING_SECRET and SLACK_BOT_TOKEN to take decisions from Slack');
  const byId = table(env, 'TURNPIKE_SLACK_USERS');
  const byEmail = table(env, 'TURNPIKE_SLACK_USERS_BY_EMAIL');
  if (byId && byEmail) throw new Error('Set TURNPIKE_SLACK_USERS or TURNPIKE_SLACK_USERS_BY_EMAIL, not both');
  if (!byId && !byEmail) throw new Error('Slack decisions need to know who each Slack user is: set TURNPIKE_SLACK_USERS or TURNPIKE_SLACK_USERS_BY_EMAIL');
  return { signingSecret, botToken, users: byId ?? { byEmail: byEmail! }, ...(env.SLACK_API_URL ? { apiUrl: env.SLACK_API_URL } : {}) };
}

function table(env: NodeJS.ProcessEnv, name: string): Record<string, SlackIdentity> | undefined {
  const value = env[name];
  if (!value) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new Error(`${name} is JSON: {"<key>": {"subject": "alice", "groups": ["finance"]}}`);
  }
  const valid =
    typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) &&
    Object.values(parsed).every(
      (entry: { subject?: unknown; groups?: unknown; tenant?: unknown }) =>
        typeof entry?.subject === 'string' &&
        (entry.groups === undefined || (Array.isArray(entry.groups) && entry.groups.every((group) => typeof group === 'string'))) &&
        (entry.tenant === undefined || (typeof entry.tenant === 'string' && entry.tenant.length > 0)),
    );
  if (!valid) throw new Error(`${name} maps each key to {"subject": "<identity>", "groups": ["<group>", ...], "tenant": "<tenant>"} (groups and tenant optional)`);
  return parsed as Record<string, SlackIdentity>;
}
