/**
 * The Slack message of a parked call (activities/slack/approval-message.ts), the channel it goes
 * to (slack-options.ts) and how Slack's errors become the activity's (slack-notifier.ts): pure
 * functions, checked against Slack's limits and against `@slack/web-api`'s own errors from the
 * strict fake.
 */
import { WebClient } from '@slack/web-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeApprovalRef, SLACK_ACTIONS } from '../../activities/slack/approval-actions.js';
import { approvalMessage, SECTION_TEXT_LIMIT, type SlackBlock } from '../../activities/slack/approval-message.js';
import { channelFor, slackMessageOptionsFromEnvironment } from '../../activities/slack/slack-options.js';
import { SlackNotifier, slackFailure } from '../../activities/slack/slack-notifier.js';
import type { ApprovalNotification } from '../../workflows/types/index.js';
import { startFakeSlack, type FakeSlack } from '../fake-provider/slack.js';

const parked: ApprovalNotification = {
  event: 'parked',
  turnId: 'turn-1',
  approvalId: 'ap-1',
  toolCallId: 'call-1',
  toolName: 'issue_refund',
  input: { orderId: 'A-1', amount: 12_000 },
  inputHash: 'h'.repeat(64),
  reason: 'refunds over $10,000 need finance',
  requestedAt: '2026-11-28T10:00:00.000Z',
  expiresAt: '2026-11-29T10:00:00.000Z',
  approverGroups: ['finance'],
};

const texts = (blocks: SlackBlock[]) => blocks.filter((b) => b.type === 'section').map((b) => (b.text as { text: string }).text);
const actions = (blocks: SlackBlock[]) => blocks.find((b) => b.type === 'actions') as { elements: Array<{ action_id: string; value: string; style?: string }> } | undefined;

describe('the approval message', () => {
  it('shows the tool, input, reason and deadline, with three buttons carrying the call', () => {
    const { text, blocks } = approvalMessage(parked);
    const all = texts(blocks).join('\n');
    expect(all).toContain('`issue_refund`');
    expect(all).toContain('"amount": 12000');
    expect(all).toContain('refunds over $10,000 need finance');
    expect(all).toContain(`<!date^${Date.parse(parked.expiresAt) / 1000}^{date_short_pretty} at {time}|${parked.expiresAt}>`);
    expect(text).toContain('Approval needed: issue_refund');
    const buttons = actions(blocks)!.elements;
    expect(buttons.map((b) => [b.action_id, b.style])).toEqual([
      [SLACK_ACTIONS.approve, 'primary'],
      [SLACK_ACTIONS.deny, 'danger'],
      [SLACK_ACTIONS.denyWithReason, undefined],
    ]);
    for (const button of buttons) expect(decodeApprovalRef(button.value)).toEqual({ turnId: 'turn-1', approvalId: 'ap-1', inputHash: parked.inputHash });
  });

  it('keeps every section under 3,000 characters, escapes what a turn wrote and never splits an escape or a character', () => {
    const huge = { code: 'a ``` b', note: `${'<&>'.repeat(2000)}${'😀'.repeat(1000)}` };
    const { blocks } = approvalMessage({ ...parked, input: huge, reason: '<!channel> & '.repeat(400) });
    const emoji = approvalMessage({ ...parked, input: { a: `${'😀'.repeat(1500)}`, b: `x${'😀'.repeat(1500)}` } });
    for (const text of [...texts(blocks), ...texts(emoji.blocks)]) {
      expect(text.length).toBeLessThanOrEqual(SECTION_TEXT_LIMIT);
      expect(text).not.toContain('<!channel>');
      expect(text).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
      // Every `&` starts a whole escape.
      expect(text.replace(/&(amp|lt|gt);/g, '')).not.toContain('&');
    }
    const input = texts(blocks).find((t) => t.startsWith('*Input*'))!;
    expect(input.endsWith('…```')).toBe(true);
    expect(input.slice('*Input*\n```'.length, -3)).not.toContain('```');
  });

  it('shows the votes so far, the escalation steps and delegations, and keeps the buttons', () => {
    const { blocks } = approvalMessage({
      ...parked,
      event: 'voted',
      progress: {
        quorum: 2,
        denials: 1,
        votes: [{ approver: 'alice', approved: true, votedAt: '2026-11-28T10:05:00.000Z', inputHash: parked.inputHash }],
        escalation: [
          { after: '4h', dueAt: '2026-11-28T14:00:00.000Z', to: { approverGroups: ['finance-managers'] }, firedAt: '2026-11-28T14:00:00.000Z' },
          { after: '24h', dueAt: '2026-11-29T10:00:00.000Z', deny: 'no decision' },
        ],
        delegations: [{ from: 'alice', to: { approvers: ['bob'] }, reason: 'on leave', delegatedAt: '2026-11-28T10:06:00.000Z' }],
      },
    });
    const all = texts(blocks).join('\n');
    expect(all).toContain('*Votes:* 1 of 2 approvals: alice approved');
    expect(all).toMatch(/\*Escalation\* after 4h, <!date\^\d+\^[^>]+>: add group finance-managers :arrow_right: done/);
    expect(all).toContain('deny (no decision)');
    expect(all).toContain('*Delegated* by alice to bob: on leave');
    expect(actions(blocks)?.elements).toHaveLength(3);
  });

  it('ends as the call ended, with no buttons', () => {
    const decided = { ...parked, event: 'decided' as const, decidedAt: '2026-11-28T11:00:00.000Z' };
    const approved = approvalMessage({ ...decided, outcome: 'approved', approver: 'alice' });
    expect(actions(approved.blocks)).toBeUndefined();
    expect(texts(approved.blocks).join('\n')).toContain(`*Approved* by alice at <!date^${Date.parse(decided.decidedAt) / 1000}^`);
    expect(approved.text).toBe('Approved by alice: issue_refund in turn turn-1');
    const denied = approvalMessage({ ...decided, outcome: 'denied', approver: 'bob', decisionReason: 'duplicate' });
    expect(texts(denied.blocks).join('\n')).toMatch(/\*Denied\* by bob at <!date[^>]+>: duplicate/);
    const expired = approvalMessage({ ...decided, outcome: 'expired', decisionReason: 'no decision within 24h' });
    expect(texts(expired.blocks)[0]).toContain('*Expired:*');
    expect(actions(expired.blocks)).toBeUndefined();
  });
});

describe('the channel of a call', () => {
  const channels = { default: 'C-all', byTool: { issue_refund: 'C-refunds' }, byGroup: { legal: 'C-legal', finance: 'C-finance' } };
  it('is the tool\'s, else the first approver group\'s that has one, else the default, else none', () => {
    expect(channelFor(channels, { toolName: 'issue_refund', approverGroups: ['finance'] })).toBe('C-refunds');
    expect(channelFor(channels, { toolName: 'pay_vendor', approverGroups: ['ops', 'finance', 'legal'] })).toBe('C-finance');
    expect(channelFor(channels, { toolName: 'pay_vendor' })).toBe('C-all');
    expect(channelFor({ byTool: { toString: 'C-x' } }, { toolName: 'constructor' })).toBeUndefined();
  });
  it('comes from SLACK_BOT_TOKEN and TURNPIKE_SLACK_CHANNEL together', () => {
    expect(slackMessageOptionsFromEnvironment({ SLACK_BOT_TOKEN: 'xoxb-1' })).toBeUndefined();
    expect(slackMessageOptionsFromEnvironment({ SLACK_BOT_TOKEN: 'xoxb-1', TURNPIKE_SLACK_CHANNEL: 'C1', TURNPIKE_SLACK_API_URL: 'http://fake/api/' })).toEqual({
      botToken: 'xoxb-1',
      channels: { default: 'C1' },
      apiUrl: 'http://fake/api/',
    });
    expect(slackMessageOptionsFromEnvironment({ SLACK_BOT_TOKEN: 'xoxb-1', TURNPIKE_SLACK_CHANNEL: 'C1', SLACK_API_URL: 'http://other/api/' })?.apiUrl).toBe('http://other/api/');
  });
});

describe("Slack's errors", () => {
  let slack: FakeSlack;
  beforeAll(async () => {
    slack = await startFakeSlack({ token: 'xoxb-test', channels: ['C1'], users: [] });
  });
  afterAll(() => slack.close());
  const web = (token: string) => new WebClient(token, { slackApiUrl: slack.url, retryConfig: { retries: 0 }, rejectRateLimitedCalls: true });
  const failureOf = async (call: Promise<unknown>) => slackFailure(await call.then(() => undefined, (error: unknown) => error), 'a test');

  it('a refusal no retry changes is not retried; a rate limit or Slack\'s own failure is', async () => {
    for (const [call, error] of [
      [web('xoxb-test').chat.postMessage({ channel: 'C-gone', text: 'x' }), 'channel_not_found'],
      [web('xoxb-wrong').chat.postMessage({ channel: 'C1', text: 'x' }), 'invalid_auth'],
    ] as const) {
      const failure = await failureOf(call);
      expect([failure.type, failure.nonRetryable, failure.message.includes(error)]).toEqual(['SlackRejected', true, true]);
    }
    slack.failNext('chat.postMessage', 'ratelimited');
    const limited = await failureOf(web('xoxb-test').chat.postMessage({ channel: 'C1', text: 'x' }));
    expect([limited.type, limited.nonRetryable, limited.nextRetryDelay]).toEqual(['SlackUnavailable', false, '1s']);
    slack.failNext('chat.update', 'internal_error');
    const internal = await failureOf(web('xoxb-test').chat.update({ channel: 'C1', ts: '1.2', text: 'x' }));
    expect([internal.type, internal.nonRetryable]).toEqual(['SlackUnavailable', false]);
  });
});

describe('the notifier', () => {
  it('posts nothing for a call no channel is chosen for, and says so once per tool', async () => {
    const warnings: string[] = [];
    const notifier = new SlackNotifier({ botToken: 'xoxb-1', channels: { byTool: { deploy: 'C1' } } }, { warn: (message) => warnings.push(message) }, () => {
      throw new Error('no message: the client is never needed');
    });
    expect(await notifier.deliver(parked)).toBeUndefined();
    expect(await notifier.deliver({ ...parked, approvalId: 'ap-2' })).toBeUndefined();
    expect(await notifier.deliver({ ...parked, event: 'decided', outcome: 'approved' })).toBeUndefined();
    expect(warnings).toHaveLength(1);
  });

  it('fails for good, naming the package and its install command, when @slack/web-api is not installed', async () => {
    const missing = Object.assign(new Error("Cannot find package '@slack/web-api' imported from /app/node_modules/turnpike/dist/activities/slack/slack-notifier.js"), { code: 'ERR_MODULE_NOT_FOUND' });
    const notifier = new SlackNotifier({ botToken: 'xoxb-1', channels: { default: 'C1' } }, { warn: () => undefined }, () => Promise.reject(missing));
    await expect(notifier.deliver(parked)).rejects.toMatchObject({ type: 'MissingPackage', nonRetryable: true, message: expect.stringContaining('npm install @slack/web-api@^8.2.0') });
  });
});
