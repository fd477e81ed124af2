/**
 * Approval messages in Slack, worker side, on the real dev server against the strict fake of
 * Slack's Web API driven by `@slack/web-api`'s own WebClient: a parked call posts one message in
 * the channel of its tool, of its approver group or the default, with buttons that carry the
 * call's reference; a decision, a quorum vote, an escalation step and an expiry update that same
 * message (the final states without buttons); a rate limit is retried and still posts once.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineTool } from '../../activities/tools.js';
import { decodeApprovalRef, SLACK_ACTIONS } from '../../activities/slack/approval-actions.js';
import { TurnpikeClient } from '../../client/index.js';
import { startFakeSlack, type FakeSlack, type FakeSlackMessage } from '../fake-provider/slack.js';
import { buildApi } from '../../api/index.js';
import { slackSignature } from '../../api/slack/signature.js';
import { serveApi } from '../support/api-server.js';
import { use } from '../support/test-tools.js';
import { startTurnpike, waitForPending, type TurnpikeHarness } from '../support/turnpike-harness.js';

const TOKEN = 'xoxb-turnpike-test';
const execute = async () => ({ ok: true });
const tool = (name: string, approval: Parameters<typeof defineTool>[0]['approval'], approverGroups?: string[]) =>
  defineTool({ name, description: `${name}, with a person's approval.`, inputSchema: z.object({ id: z.string() }), approval, ...(approverGroups ? { approverGroups } : {}), execute });
const tools = [
  tool('deploy', true, ['ops']), // its tool's channel, though ops has one too
  tool('issue_refund', true, ['support', 'finance']), // the first of its groups that has a channel
  tool('rename_ticket', true), // the default channel
  tool('pay_vendor', { quorum: 2, approverGroups: ['finance'], escalate: [{ after: '3s', to: { approvers: ['mgr'] } }] }),
];

let slack: FakeSlack;
let turnpike: TurnpikeHarness;
let client: TurnpikeClient;
/** The webhook next to Slack: the deliveries it got (with its answer), and how many it refuses next. */
const webhook: { deliveries: Array<{ id: string; status: number }>; refuseNext: number; server?: http.Server } = { deliveries: [], refuseNext: 0 };

beforeAll(async () => {
  slack = await startFakeSlack({ token: TOKEN, channels: ['C-DEPLOYS', 'C-FINANCE', 'C-OPS', 'C-ALL'], users: [] });
  webhook.server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const status = webhook.refuseNext > 0 ? 503 : 200;
      if (webhook.refuseNext > 0) webhook.refuseNext--;
      webhook.deliveries.push({ id: String(request.headers['x-turnpike-delivery']), status });
      response.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => webhook.server!.listen(0, '127.0.0.1', resolve));
  turnpike = await startTurnpike({
    tools,
    notifications: { url: `http://127.0.0.1:${(webhook.server.address() as AddressInfo).port}/hook` },
    slack: { botToken: TOKEN, apiUrl: slack.url, channels: { default: 'C-ALL', byTool: { deploy: 'C-DEPLOYS' }, byGroup: { ops: 'C-OPS', finance: 'C-FINANCE' } } },
  });
  client = new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue });
}, 120_000);
afterAll(async () => {
  await turnpike?.stop();
  await slack?.close();
  await new Promise((resolve) => webhook.server?.close(resolve));
});

interface Shown {
  message: FakeSlackMessage;
  sections: string;
  buttons: Array<{ action_id: string; value: string }>;
}

function show(message: FakeSlackMessage): Shown {
  const blocks = (message.blocks ?? []) as Array<{ type: string; text?: { text: string }; elements?: Array<{ action_id: string; value: string }> }>;
  return {
    message,
    sections: blocks.flatMap((block) => (block.type === 'section' ? [block.text!.text] : [])).join('\n'),
    buttons: blocks.find((block) => block.type === 'actions')?.elements ?? [],
  };
}

const posts = () => slack.calls.filter((call) => call.method === 'chat.postMessage');
/** The posts of an approval's message (found by the reference its buttons carried). */
const postsOf = (approvalId: string) => posts().filter((call) => JSON.stringify(call.args.blocks ?? '').includes(approvalId));

/** Waits for the one message of an approval, as it is now (the fake keeps its messages in the order it posted them). */
async function messageOf(approvalId: string): Promise<FakeSlackMessage> {
  await expect.poll(() => postsOf(approvalId).length, { timeout: 30_000 }).toBe(1);
  return slack.messages[posts().indexOf(postsOf(approvalId)[0])];
}

/** Polls the message with this ts until `predicate` holds on what it shows. */
async function waitForShown(ts: string, predicate: (shown: Shown) => boolean): Promise<Shown> {
  let last: Shown | undefined;
  await expect
    .poll(
      () => {
        last = show(slack.messages.find((message) => message.ts === ts)!);
        return predicate(last);
      },
      { timeout: 30_000 },
    )
    .toBe(true);
  return last!;
}

const updatesOf = (ts: string) => slack.calls.filter((call) => call.method === 'chat.update' && call.args.ts === ts);

describe('Slack approval messages', () => {
  it('posts one message per parked call in the channel of its tool, its group or the default, with buttons that carry the call', async () => {
    const cases = [
      ['deploy', 'C-DEPLOYS'],
      ['issue_refund', 'C-FINANCE'],
      ['rename_ticket', 'C-ALL'],
    ] as const;
    for (const [toolName, channel] of cases) {
      const handle = await turnpike.startTurn({ text: use(toolName, { id: `${toolName}-1` }) });
      const [pending] = await waitForPending(handle);
      const message = await messageOf(pending.approvalId!);
      expect(message.channel).toBe(channel);
      const shown = show(message);
      expect(shown.sections).toContain(`\`${toolName}\``);
      expect(shown.sections).toContain(`"id": "${toolName}-1"`);
      expect(message.text).toContain(`Approval needed: ${toolName}`);
      expect(shown.buttons.map((button) => button.action_id)).toEqual([SLACK_ACTIONS.approve, SLACK_ACTIONS.deny, SLACK_ACTIONS.denyWithReason]);
      for (const button of shown.buttons) expect(decodeApprovalRef(button.value)).toEqual({ turnId: handle.workflowId, approvalId: pending.approvalId, inputHash: pending.inputHash });

      // Decided elsewhere (here, the client as the API sends it): the same message shows who, and no buttons.
      const approver = toolName === 'deploy' ? 'olga' : 'alice';
      const groups = toolName === 'deploy' ? ['ops'] : ['finance'];
      if (toolName === 'rename_ticket') {
        await client.approveToolCall(handle.workflowId, { approvalId: pending.approvalId!, approved: false, approver, reason: 'wrong ticket' });
      } else {
        await client.approveToolCall(handle.workflowId, { approvalId: pending.approvalId!, approved: true, approver, approverGroups: groups });
      }
      await handle.result();
      const ended = await waitForShown(message.ts, (s) => s.buttons.length === 0);
      if (toolName === 'rename_ticket') {
        expect(ended.sections).toMatch(/\*Denied\* by alice at <!date\^\d+\^[^>]+>: wrong ticket/);
        expect(ended.message.text).toBe(`Denied by alice: rename_ticket in turn ${handle.workflowId}: wrong ticket`);
      } else {
        expect(ended.sections).toMatch(new RegExp(`\\*Approved\\* by ${approver} at <!date\\^\\d+\\^`));
      }
      expect(postsOf(pending.approvalId!)).toHaveLength(1);
      expect(updatesOf(message.ts)).toHaveLength(1);
    }
  });

  it('shows the votes so far and an escalation step on the same message, keeping the buttons until the quorum decides', async () => {
    const handle = await turnpike.startTurn({ text: use('pay_vendor', { id: 'acme' }) });
    const [pending] = await waitForPending(handle);
    const { ts } = await messageOf(pending.approvalId!);
    await client.approveToolCall(handle.workflowId, { approvalId: pending.approvalId!, approved: true, approver: 'alice', approverGroups: ['finance'] });
    const voted = await waitForShown(ts, (s) => s.sections.includes('*Votes:* 1 of 2 approvals: alice approved'));
    expect(voted.buttons).toHaveLength(3);
    const escalated = await waitForShown(ts, (s) => /\*Escalation\* after 3s, <!date[^>]+>: add mgr :arrow_right: done/.test(s.sections));
    expect(escalated.buttons).toHaveLength(3);
    expect(escalated.sections).toContain('alice approved');

    await client.approveToolCall(handle.workflowId, { approvalId: pending.approvalId!, approved: true, approver: 'mgr' });
    await handle.result();
    const ended = await waitForShown(ts, (s) => s.buttons.length === 0);
    expect(ended.sections).toContain('*Votes:* 2 of 2 approvals: alice approved, mgr approved');
    expect(ended.sections).toMatch(/\*Approved\* by mgr at /);
    expect(postsOf(pending.approvalId!)).toHaveLength(1);
    // voted, escalated, decided: each an update of the one message, in order (the last one ends it).
    expect(updatesOf(ts).map((call) => (call.args.blocks as unknown[]).some((b) => (b as { type: string }).type === 'actions'))).toEqual([true, true, false]);
  });

  it('shows Expired, without buttons, when nobody decides in time', async () => {
    const handle = await turnpike.startTurn({ text: use('rename_ticket', { id: 'late' }), approvalTimeout: '2s' });
    const [pending] = await waitForPending(handle);
    const { ts } = await messageOf(pending.approvalId!);
    await handle.result();
    const ended = await waitForShown(ts, (s) => s.buttons.length === 0);
    expect(ended.sections).toContain(':hourglass: *Expired:* `rename_ticket`');
    expect(ended.sections).toContain('no decision within 2s');
  });

  it('retries a rate-limited post and still posts the message once', async () => {
    slack.failNext('chat.postMessage', 'ratelimited');
    const handle = await turnpike.startTurn({ text: use('rename_ticket', { id: 'busy' }) });
    const [pending] = await waitForPending(handle);
    await messageOf(pending.approvalId!);
    expect(postsOf(pending.approvalId!)).toHaveLength(1);
    // The parked nudge's activity: refused once, then done on its second attempt.
    const attempts = async () => {
      const events = (await handle.fetchHistory()).events ?? [];
      const scheduled = new Set(events.filter((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'notifyApprovers').map((event) => String(event.eventId)));
      return events.filter((event) => scheduled.has(String(event.activityTaskStartedEventAttributes?.scheduledEventId))).map((event) => event.activityTaskStartedEventAttributes!.attempt);
    };
    await expect.poll(attempts, { timeout: 30_000 }).toEqual([2]);
    await client.approveToolCall(handle.workflowId, { approvalId: pending.approvalId!, approved: true, approver: 'alice' });
    await handle.result();
  });

  it('does not post again when the webhook next to it is down: the retry sends the webhook again, and only updates reach Slack', async () => {
    webhook.refuseNext = 1;
    const handle = await turnpike.startTurn({ text: use('rename_ticket', { id: 'hooked' }) });
    const [pending] = await waitForPending(handle);
    const delivery = `${handle.workflowId}/${pending.approvalId}/parked`;
    await expect.poll(() => webhook.deliveries.filter((d) => d.id === delivery).map((d) => d.status), { timeout: 30_000 }).toEqual([503, 200]);
    const { ts } = await messageOf(pending.approvalId!);
    expect(postsOf(pending.approvalId!)).toHaveLength(1);
    await client.approveToolCall(handle.workflowId, { approvalId: pending.approvalId!, approved: true, approver: 'alice' });
    await handle.result();
    await waitForShown(ts, (s) => s.buttons.length === 0);
    expect(postsOf(pending.approvalId!)).toHaveLength(1);
  });

  it('shows a denial sent as the dashboard sends it (the HTTP API), under the approver the API audited', async () => {
    const served = await serveApi(turnpike);
    try {
      const handle = await turnpike.startTurn({ text: use('rename_ticket', { id: 'from-dashboard' }) });
      const [pending] = await waitForPending(handle);
      const { ts } = await messageOf(pending.approvalId!);
      const response = await fetch(`${served.base}/api/turns/${handle.workflowId}/approvals/${pending.approvalId}`, {
        method: 'POST',
        headers: { authorization: 'Bearer alice-token', 'content-type': 'application/json' },
        body: JSON.stringify({ approved: false, reason: 'not <this> one', inputHash: pending.inputHash }),
      });
      expect(response.status).toBe(200);
      await handle.result();
      const ended = await waitForShown(ts, (s) => s.buttons.length === 0);
      expect(ended.sections).toMatch(/\*Denied\* by alice at <!date\^\d+\^[^>]+>: not &lt;this&gt; one/);
    } finally {
      await served.api.close();
    }
  });

  it('ends the message under the mapped identity when its own Approve button is clicked in Slack (the API side, signed as Slack signs)', async () => {
    const secret = 'slack-signing-secret';
    const api = await buildApi({
      client,
      authenticate: async () => undefined,
      slack: { signingSecret: secret, botToken: TOKEN, apiUrl: slack.url, users: { U0ALICE: { subject: 'alice', groups: ['finance'] } } },
    });
    try {
      const handle = await turnpike.startTurn({ text: use('issue_refund', { id: 'clicked' }) });
      const [pending] = await waitForPending(handle);
      const message = await messageOf(pending.approvalId!);
      const approve = show(message).buttons.find((button) => button.action_id === SLACK_ACTIONS.approve)!;
      const payload = {
        type: 'block_actions',
        user: { id: 'U0ALICE', team_id: 'T0001' },
        team: { id: 'T0001' },
        container: { type: 'message', message_ts: message.ts, channel_id: message.channel },
        channel: { id: message.channel },
        trigger_id: slack.issueTrigger(),
        response_url: slack.issueResponseUrl(),
        actions: [{ type: 'button', action_id: approve.action_id, block_id: 'turnpike.approval', value: approve.value, action_ts: `${Date.now() / 1000}` }],
      };
      const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
      const timestamp = String(Math.floor(Date.now() / 1000));
      const response = await api.inject({
        method: 'POST',
        url: '/api/slack/interactions',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-slack-request-timestamp': timestamp, 'x-slack-signature': slackSignature(secret, timestamp, body) },
        payload: body,
      });
      expect(response.statusCode).toBe(200);
      const result = await handle.result();
      expect(result.decisions).toMatchObject([{ outcome: 'approved', approver: 'alice' }]);
      const ended = await waitForShown(message.ts, (s) => s.buttons.length === 0);
      expect(ended.sections).toMatch(/\*Approved\* by alice at /);
      expect(postsOf(pending.approvalId!)).toHaveLength(1);
    } finally {
      await api.close();
    }
  });
});
