/** `npm run api`'s Slack settings from the environment (api/slack/slack-environment.ts). */
import { describe, expect, it } from 'vitest';
import { slackInteractionOptionsFromEnvironment } from '../../api/index.js';

const secrets = { SLACK_SIGNING_SECRET: 'secret', SLACK_BOT_TOKEN: 'xoxb-1' };

describe('slackInteractionOptionsFromEnvironment', () => {
  it('is off without a signing secret and a bot token, and refuses one without the other', () => {
    expect(slackInteractionOptionsFromEnvironment({})).toBeUndefined();
    expect(() => slackInteractionOptionsFromEnvironment({ SLACK_SIGNING_SECRET: 'secret' })).toThrow(/both/);
    expect(() => slackInteractionOptionsFromEnvironment({ SLACK_BOT_TOKEN: 'xoxb-1' })).toThrow(/both/);
  });

  it('reads the users by Slack id or by email, exactly one of them', () => {
    expect(slackInteractionOptionsFromEnvironment({ ...secrets, TURNPIKE_SLACK_USERS: '{"U1":{"subject":"alice","groups":["finance"]}}', SLACK_API_URL: 'http://127.0.0.1:1/api/' })).toEqual({
      signingSecret: 'secret',
      botToken: 'xoxb-1',
      users: { U1: { subject: 'alice', groups: ['finance'] } },
      apiUrl: 'http://127.0.0.1:1/api/',
    });
    expect(slackInteractionOptionsFromEnvironment({ ...secrets, TURNPIKE_SLACK_USERS_BY_EMAIL: '{"a@example.com":{"subject":"alice"}}' })?.users).toEqual({ byEmail: { 'a@example.com': { subject: 'alice' } } });
    expect(slackInteractionOptionsFromEnvironment({ ...secrets, TURNPIKE_SLACK_USERS: '{"U2":{"subject":"gus","tenant":"globex"}}' })?.users).toEqual({ U2: { subject: 'gus', tenant: 'globex' } });
    expect(() => slackInteractionOptionsFromEnvironment(secrets)).toThrow(/TURNPIKE_SLACK_USERS/);
    expect(() => slackInteractionOptionsFromEnvironment({ ...secrets, TURNPIKE_SLACK_USERS: '{}', TURNPIKE_SLACK_USERS_BY_EMAIL: '{}' })).toThrow(/not both/);
  });

  it('refuses a table that is not JSON, names no subject, or a tenant that is not a name', () => {
    expect(() => slackInteractionOptionsFromEnvironment({ ...secrets, TURNPIKE_SLACK_USERS: 'U1:alice' })).toThrow(/is JSON/);
    expect(() => slackInteractionOptionsFromEnvironment({ ...secrets, TURNPIKE_SLACK_USERS: '{"U1":{"groups":["finance"]}}' })).toThrow(/subject/);
    expect(() => slackInteractionOptionsFromEnvironment({ ...secrets, TURNPIKE_SLACK_USERS: '{"U1":{"subject":"alice","groups":"finance"}}' })).toThrow(/subject/);
    expect(() => slackInteractionOptionsFromEnvironment({ ...secrets, TURNPIKE_SLACK_USERS: '{"U1":{"subject":"alice","tenant":7}}' })).toThrow(/"tenant": "<tenant>"/);
  });
});
