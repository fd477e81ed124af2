/**
 * Slack interactions as Slack builds and signs them, for the tests of POST /api/slack/interactions
 * on the strict fake of Slack's Web API (test/fake-provider/slack.ts): a button click of an
 * approval message, the submission of the Deny-with-reason modal, the signature, the request,
 * and what the clicker was told through the interaction's response URL.
 */
import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import { encodeApprovalRef, SLACK_DENY_REASON_VIEW, type SlackApprovalRef } from '../../activities/slack/approval-actions.js';
import { slackSignature } from '../../api/slack/signature.js';
import type { FakeSlack } from '../fake-provider/slack.js';

export const SLACK_SIGNING_SECRET = 'slack-signing-secret-for-tests';
export const SLACK_BOT_TOKEN = 'xoxb-turnpike-test';

let clicks = 0;

/** A `block_actions` interaction as Slack sends it for a button of an approval message. */
export function buttonClick(slack: FakeSlack, userId: string, actionId: string, ref: SlackApprovalRef) {
  return {
    type: 'block_actions',
    user: { id: userId, username: userId.toLowerCase(), team_id: 'T0001' },
    api_app_id: 'A0TURNPIKE',
    team: { id: 'T0001', domain: 'example' },
    container: { type: 'message', message_ts: '1700000000.000001', channel_id: 'C0FINANCE', is_ephemeral: false },
    channel: { id: 'C0FINANCE', name: 'finance-approvals' },
    trigger_id: slack.issueTrigger(),
    response_url: slack.issueResponseUrl(),
    actions: [{ type: 'button', action_id: actionId, block_id: 'decide', value: encodeApprovalRef(ref), action_ts: `${Date.now() / 1000}${++clicks}` }],
  };
}

/** The `view_submission` of the Deny-with-reason modal. */
export function reasonSubmission(slack: FakeSlack, userId: string, privateMetadata: string, reason: string) {
  const { callbackId, blockId, actionId } = SLACK_DENY_REASON_VIEW;
  return {
    type: 'view_submission',
    user: { id: userId, team_id: 'T0001' },
    api_app_id: 'A0TURNPIKE',
    trigger_id: slack.issueTrigger(),
    view: { id: `V0${++clicks}`, type: 'modal', callback_id: callbackId, private_metadata: privateMetadata, state: { values: { [blockId]: { [actionId]: { type: 'plain_text_input', value: reason } } } } },
  };
}

export interface Signed {
  body: string;
  headers: Record<string, string>;
}

/** Form-encoded and signed as Slack signs it; `secret` and `timestamp` to forge. */
export function signed(payload: unknown, { secret = SLACK_SIGNING_SECRET, timestamp = Math.floor(Date.now() / 1000) } = {}): Signed {
  const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  const ts = String(timestamp);
  return { body, headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-slack-request-timestamp': ts, 'x-slack-signature': slackSignature(secret, ts, body) } };
}

export async function postInteraction(server: FastifyInstance, request: Signed) {
  const response = await server.inject({ method: 'POST', url: '/api/slack/interactions', headers: request.headers, payload: request.body });
  return { status: response.statusCode, body: response.body };
}

/** What the clicker was told through the interaction's response URL, once it was told. */
export async function toldThrough(slack: FakeSlack, responseUrl: string): Promise<string> {
  await expect.poll(() => slack.responses.filter((response) => response.url === responseUrl).length, { timeout: 30_000 }).toBe(1);
  const { body } = slack.responses.find((response) => response.url === responseUrl)!;
  expect(body).toMatchObject({ response_type: 'ephemeral', replace_original: false });
  return body.text;
}
