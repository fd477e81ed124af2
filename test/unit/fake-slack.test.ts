/**
 * The strict fake of Slack's Web API (test/fake-provider/slack.ts) as `@slack/web-api`'s own
 * `WebClient` sees it: a message posted and updated, a user's email, a modal opened once per
 * trigger, and Slack's error strings for a missing or wrong token, an unknown channel, message or
 * user, and an expired trigger.
 */
import { WebClient } from '@slack/web-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeSlack, type FakeSlack } from '../fake-provider/slack.js';

let slack: FakeSlack;
beforeAll(async () => {
  slack = await startFakeSlack({ token: 'xoxb-test', channels: ['C1'], users: [{ id: 'U1', email: 'alice@example.com' }] });
});
afterAll(() => slack.close());

const client = (token?: string) => new WebClient(token, { slackApiUrl: slack.url, retryConfig: { retries: 0 } });

describe('the fake Slack Web API', () => {
  it('posts, updates, reads a user and opens a modal once per trigger', async () => {
    const web = client('xoxb-test');
    const posted = await web.chat.postMessage({ channel: 'C1', text: 'parked', blocks: [{ type: 'section', text: { type: 'mrkdwn', text: 'parked' } }] });
    expect(posted.ts).toBeTruthy();
    await web.chat.update({ channel: 'C1', ts: posted.ts!, text: 'approved' });
    expect(slack.messages.find((m) => m.ts === posted.ts)?.text).toBe('approved');
    expect((await web.users.info({ user: 'U1' })).user?.profile?.email).toBe('alice@example.com');
    const trigger = slack.issueTrigger();
    await web.views.open({ trigger_id: trigger, view: { type: 'modal', title: { type: 'plain_text', text: 'Deny' }, blocks: [] } });
    await expect(web.views.open({ trigger_id: trigger, view: { type: 'modal', title: { type: 'plain_text', text: 'Deny' }, blocks: [] } })).rejects.toMatchObject({ data: { error: 'expired_trigger_id' } });
    expect(slack.calls.map((c) => c.method)).toEqual(['chat.postMessage', 'chat.update', 'users.info', 'views.open']);
  });

  it("answers Slack's error strings", async () => {
    await expect(client().chat.postMessage({ channel: 'C1', text: 'x' })).rejects.toMatchObject({ data: { error: 'not_authed' } });
    await expect(client('xoxb-wrong').chat.postMessage({ channel: 'C1', text: 'x' })).rejects.toMatchObject({ data: { error: 'invalid_auth' } });
    const web = client('xoxb-test');
    await expect(web.chat.postMessage({ channel: 'C9', text: 'x' })).rejects.toMatchObject({ data: { error: 'channel_not_found' } });
    await expect(web.chat.update({ channel: 'C1', ts: '1.2', text: 'x' })).rejects.toMatchObject({ data: { error: 'message_not_found' } });
    await expect(web.users.info({ user: 'U9' })).rejects.toMatchObject({ data: { error: 'user_not_found' } });
  });
});
