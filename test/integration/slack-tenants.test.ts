/**
 * Decisions from Slack bound to tenants, on the real dev server with the strict fake of Slack's
 * Web API: a Slack user whose identity is bound to a tenant (by `TURNPIKE_API_TENANTS`, or by the
 * mapping's own `tenant`) decides that tenant's calls only. On another tenant's call, its Approve,
 * Deny and the Deny-with-reason modal are refused as from someone who may not decide (as the
 * decision route answers 404), before and after the call is settled, and nothing is decided.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SLACK_ACTIONS, SLACK_DENY_REASON_VIEW, type SlackApprovalRef } from '../../activities/slack/approval-actions.js';
import { buildApi, parseTenantMap } from '../../api/index.js';
import { TurnpikeClient } from '../../client/index.js';
import type { TurnState } from '../../workflows/types/index.js';
import { startFakeSlack, type FakeSlack } from '../fake-provider/slack.js';
import { noteStarted } from '../support/history-recorder.js';
import { financeRefundTool } from '../support/refund-tool.js';
import { buttonClick, postInteraction, reasonSubmission, signed, SLACK_BOT_TOKEN, SLACK_SIGNING_SECRET, toldThrough } from '../support/slack-interactions.js';
import { use } from '../support/test-tools.js';
import { startTurnpike, waitForPending, waitForState, type TurnpikeHarness } from '../support/turnpike-harness.js';

const { tool: refund, runsOf } = financeRefundTool();

let turnpike: TurnpikeHarness;
let slack: FakeSlack;
let client: TurnpikeClient;
let api: FastifyInstance;

beforeAll(async () => {
  [turnpike, slack] = await Promise.all([startTurnpike({ tools: [refund] }), startFakeSlack({ token: SLACK_BOT_TOKEN, channels: ['C0FINANCE'], users: [] })]);
  client = new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue });
  api = await buildApi({
    client,
    authenticate: async () => undefined,
    // Ann is bound to acme by the operator's table; Gus and Gia by their mapping.
    tenants: parseTenantMap('ann:acme'),
    slack: {
      signingSecret: SLACK_SIGNING_SECRET,
      botToken: SLACK_BOT_TOKEN,
      apiUrl: slack.url,
      users: {
        U0ANN: { subject: 'ann', groups: ['finance'] },
        U0AMOS: { subject: 'amos', groups: ['finance'], tenant: 'acme' },
        U0GUS: { subject: 'gus', groups: ['finance'], tenant: 'globex' },
        U0GIA: { subject: 'gia', groups: ['finance'], tenant: 'globex' },
      },
    },
  });
}, 120_000);
afterAll(async () => {
  await api?.close();
  await slack?.close();
  await turnpike?.stop();
});

async function parkRefund(tenant: string, amount: number) {
  const turnId = `slack-${tenant}-${randomUUID()}`;
  const handle = await client.startTurn({ model: { provider: 'scripted', model: 'demo' }, messages: [{ role: 'user', content: use('refund_order', { order: 'A-2001', amount }) }] }, { turnId, tenant, startedBy: 'rita' });
  noteStarted(handle);
  const [pending] = await waitForPending(handle);
  const ref: SlackApprovalRef = { turnId, approvalId: pending.approvalId!, inputHash: pending.inputHash! };
  return { handle, ref };
}

const votersOf = (state: TurnState) => state.pending[0]?.progress?.votes.map((vote) => vote.approver);

/** Clicks a button and returns what the clicker was told. */
async function refusedClick(userId: string, action: string, ref: SlackApprovalRef): Promise<string> {
  const click = buttonClick(slack, userId, action, ref);
  expect((await postInteraction(api, signed(click))).status).toBe(200);
  return toldThrough(slack, click.response_url);
}

describe('decisions from Slack by a user bound to a tenant', () => {
  it("are refused on another tenant's call, parked or settled, as from someone who may not decide; nothing is decided", async () => {
    const { handle, ref } = await parkRefund('globex', 21_000);

    // Ann (acme by the table) and Amos (acme by the mapping) are in finance, but the call is globex's.
    expect(await refusedClick('U0ANN', SLACK_ACTIONS.approve, ref)).toMatch(/may not decide/);
    expect(await refusedClick('U0AMOS', SLACK_ACTIONS.deny, ref)).toMatch(/may not decide/);
    const submitted = await postInteraction(api, signed(reasonSubmission(slack, 'U0ANN', buttonClick(slack, 'U0ANN', SLACK_ACTIONS.denyWithReason, ref).actions[0].value, 'not ours')));
    expect(JSON.parse(submitted.body)).toEqual({ response_action: 'errors', errors: { [SLACK_DENY_REASON_VIEW.blockId]: expect.stringMatching(/may not decide/) } });
    const untouched = await waitForState(handle, () => true);
    expect(untouched.status).toBe('awaiting-input');
    expect(untouched.pending[0].progress!.votes).toEqual([]);

    // Globex's own approvers decide it.
    expect((await postInteraction(api, signed(buttonClick(slack, 'U0GUS', SLACK_ACTIONS.approve, ref)))).status).toBe(200);
    await waitForState(handle, (state) => votersOf(state)?.length === 1);
    expect((await postInteraction(api, signed(buttonClick(slack, 'U0GIA', SLACK_ACTIONS.approve, ref)))).status).toBe(200);
    const result = await handle.result();
    expect(result.toolCalls).toMatchObject([{ outcome: 'approved', approval: { approver: 'gia' } }]);

    // Settled: an eligible approver of another tenant is not even told it was decided.
    expect(await refusedClick('U0ANN', SLACK_ACTIONS.deny, ref)).toMatch(/may not decide/);
    const after = await waitForState(handle, () => true);
    expect(after.decisions!.map((decision) => decision.progress!.votes.map((vote) => vote.approver))).toEqual([['gus', 'gia']]);
    expect(runsOf(handle.workflowId)).toHaveLength(1);
  });

  it("decide their own tenant's calls", async () => {
    const { handle, ref } = await parkRefund('acme', 22_000);
    for (const user of ['U0ANN', 'U0AMOS']) expect((await postInteraction(api, signed(buttonClick(slack, user, SLACK_ACTIONS.approve, ref)))).status).toBe(200);
    const result = await handle.result();
    expect(result.toolCalls).toMatchObject([{ outcome: 'approved' }]);
    const state = await waitForState(handle, () => true);
    expect(state.decisions![0].progress!.votes.map((vote) => vote.approver).sort()).toEqual(['amos', 'ann']);
    expect(await refusedClick('U0GUS', SLACK_ACTIONS.approve, ref)).toMatch(/may not decide/);
  });
});
