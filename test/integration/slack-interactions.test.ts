/**
 * Decisions from Slack (POST /api/slack/interactions), on the real dev server with the strict fake
 * of Slack's Web API: a refund needs two people from finance, never the requester. Interactions
 * are built and signed as Slack builds them, each button's value from the real parked call. A
 * click votes as the mapped identity, two clicks run the call once and the audit names both; Deny
 * with reason opens the modal and its submission denies with the reason the model is then told.
 * Hostile interactions change nothing: a bad signature, an old timestamp, an unsigned or replayed
 * request, an unknown Slack user, one outside the group, the requester, a stale input hash, and
 * a click after the call was decided through the API; the clicker alone is told why.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SLACK_ACTIONS, SLACK_DENY_REASON_VIEW, type SlackApprovalRef } from '../../activities/slack/approval-actions.js';
import { buildApi, type Caller } from '../../api/index.js';
import { TurnpikeClient } from '../../client/index.js';
import type { TurnState } from '../../workflows/types/index.js';
import { startFakeSlack, type FakeSlack } from '../fake-provider/slack.js';
import { financeRefundTool } from '../support/refund-tool.js';
import { buttonClick as click, postInteraction, reasonSubmission as submission, signed, SLACK_BOT_TOKEN, SLACK_SIGNING_SECRET, toldThrough as told, type Signed } from '../support/slack-interactions.js';
import { use } from '../support/test-tools.js';
import { startTurnpike, waitForPending, waitForState, type TurnpikeHarness } from '../support/turnpike-harness.js';

const SIGNING_SECRET = SLACK_SIGNING_SECRET;
const BOT_TOKEN = SLACK_BOT_TOKEN;

const { tool: refund, runsOf } = financeRefundTool();

const bearers: Record<string, Caller> = {
  'Bearer bob-token': { identity: 'bob', groups: ['finance'] },
  'Bearer auditor-token': { identity: 'auditor', groups: ['auditors'] },
};

let turnpike: TurnpikeHarness;
let slack: FakeSlack;
/** Slack users mapped by id. */
let api: FastifyInstance;
/** Slack users mapped by email, through users.info. */
let byEmailApi: FastifyInstance;

beforeAll(async () => {
  [turnpike, slack] = await Promise.all([
    startTurnpike({ tools: [refund] }),
    startFakeSlack({
      token: BOT_TOKEN,
      channels: ['C0FINANCE'],
      users: [
        { id: 'U0ALICEMAIL', email: 'alice@example.com' },
        { id: 'U0OUTSIDER', email: 'someone@elsewhere.example' },
      ],
    }),
  ]);
  const options = () => ({
    client: new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue }),
    authenticate: async (authorization: string | undefined) => (authorization && Object.hasOwn(bearers, authorization) ? bearers[authorization] : undefined),
    access: { adminGroups: ['auditors'] },
  });
  api = await buildApi({
    ...options(),
    slack: {
      signingSecret: SIGNING_SECRET,
      botToken: BOT_TOKEN,
      apiUrl: slack.url,
      users: {
        U0ALICE: { subject: 'alice', groups: ['finance'] },
        U0CAROL: { subject: 'carol', groups: ['finance'] },
        U0DAVE: { subject: 'dave', groups: ['finance'] },
        U0RITA: { subject: 'rita', groups: ['finance'] },
        U0MALLORY: { subject: 'mallory', groups: ['sales'] },
      },
    },
  });
  byEmailApi = await buildApi({
    ...options(),
    slack: { signingSecret: SIGNING_SECRET, botToken: BOT_TOKEN, apiUrl: slack.url, users: { byEmail: { 'alice@example.com': { subject: 'alice', groups: ['finance'] } } } },
  });
}, 120_000);
afterAll(async () => {
  await api?.close();
  await byEmailApi?.close();
  await slack?.close();
  await turnpike?.stop();
});

const buttonClick = (userId: string, actionId: string, ref: SlackApprovalRef) => click(slack, userId, actionId, ref);
const reasonSubmission = (userId: string, privateMetadata: string, reason: string) => submission(slack, userId, privateMetadata, reason);
const post = (request: Signed, server = api) => postInteraction(server, request);
const toldThrough = (responseUrl: string) => told(slack, responseUrl);

async function parkRefund(amount: number) {
  const handle = await turnpike.startTurn({ text: use('refund_order', { order: 'A-1001', amount }), startedBy: 'rita' });
  const [pending] = await waitForPending(handle);
  const ref = { turnId: handle.workflowId, approvalId: pending.approvalId!, inputHash: pending.inputHash! };
  return { handle, pending, ref };
}

const votersOf = (state: TurnState) => state.pending[0]?.progress?.votes.map((vote) => vote.approver);

describe('decisions from Slack', () => {
  it('votes as the mapped Slack user; a second click by another runs the call once, and the audit names both', async () => {
    const { handle, ref } = await parkRefund(12_000);

    expect(await post(signed(buttonClick('U0ALICE', SLACK_ACTIONS.approve, ref)))).toEqual({ status: 200, body: '' });
    const parked = await waitForState(handle, (state) => votersOf(state)?.length === 1);
    expect(parked.status).toBe('awaiting-input');
    expect(parked.pending[0].progress!.votes).toEqual([{ approver: 'alice', approverGroups: ['finance'], approved: true, votedAt: expect.any(String), inputHash: ref.inputHash }]);

    // Alice again: AlreadyVoted, told to her alone; the requester: excluded. Neither changes a thing.
    const again = buttonClick('U0ALICE', SLACK_ACTIONS.approve, ref);
    expect((await post(signed(again))).status).toBe(200);
    expect(await toldThrough(again.response_url)).toMatch(/already voted/);
    const requester = buttonClick('U0RITA', SLACK_ACTIONS.approve, ref);
    expect((await post(signed(requester))).status).toBe(200);
    expect(await toldThrough(requester.response_url)).toMatch(/You asked for this call/);
    expect(votersOf(await waitForState(handle, () => true))).toEqual(['alice']);
    expect(runsOf(handle.workflowId)).toHaveLength(0);

    expect((await post(signed(buttonClick('U0CAROL', SLACK_ACTIONS.approve, ref)))).status).toBe(200);
    const result = await handle.result();
    expect(result.toolCalls).toMatchObject([{ outcome: 'approved', approval: { approver: 'carol', automatic: false } }]);
    expect(runsOf(handle.workflowId)).toEqual([{ key: expect.any(String), input: { order: 'A-1001', amount: 12_000 } }]);
    const audit = await api.inject({ url: '/api/decisions?tool=refund_order', headers: { authorization: 'Bearer auditor-token' } });
    const audited = (audit.json() as { decisions: Array<{ turnWorkflowId: string; approver: string; outcome: string; progress?: { votes: Array<{ approver: string; approverGroups: string[] }> } }> }).decisions.filter((d) => d.turnWorkflowId === handle.workflowId);
    expect(audited).toHaveLength(1);
    expect(audited[0]).toMatchObject({ outcome: 'approved', approver: 'carol' });
    expect(audited[0].progress!.votes.map(({ approver, approverGroups }) => ({ approver, approverGroups }))).toEqual([
      { approver: 'alice', approverGroups: ['finance'] },
      { approver: 'carol', approverGroups: ['finance'] },
    ]);
  });

  it('opens the reason modal on Deny with reason, and its submission denies with the reason the model is told', async () => {
    const { handle, ref } = await parkRefund(13_000);
    const click = buttonClick('U0DAVE', SLACK_ACTIONS.denyWithReason, ref);
    expect((await post(signed(click))).status).toBe(200);
    await expect.poll(() => slack.calls.filter((call) => call.method === 'views.open' && call.args.trigger_id === click.trigger_id).length, { timeout: 30_000 }).toBe(1);
    const { view } = slack.calls.find((call) => call.args.trigger_id === click.trigger_id)!.args as { view: { callback_id: string; private_metadata: string; blocks: Array<{ block_id: string; element: { action_id: string } }> } };
    expect(view).toMatchObject({ callback_id: SLACK_DENY_REASON_VIEW.callbackId, private_metadata: click.actions[0].value });
    expect(view.blocks.map((block) => [block.block_id, block.element.action_id])).toEqual([[SLACK_DENY_REASON_VIEW.blockId, SLACK_DENY_REASON_VIEW.actionId]]);

    // Someone outside finance submits the same modal: refused in the modal, nothing changes.
    const outsider = await post(signed(reasonSubmission('U0MALLORY', view.private_metadata, 'not mine to approve')));
    expect(outsider.status).toBe(200);
    expect(JSON.parse(outsider.body)).toEqual({ response_action: 'errors', errors: { [SLACK_DENY_REASON_VIEW.blockId]: expect.stringMatching(/may not decide/) } });
    const still = await waitForState(handle, () => true);
    expect(still.status).toBe('awaiting-input');
    expect(still.pending[0].progress!.votes).toEqual([]);

    const submitted = await post(signed(reasonSubmission('U0DAVE', view.private_metadata, 'the order was never shipped')));
    expect(submitted).toEqual({ status: 200, body: '' });
    const result = await handle.result();
    expect(result.toolCalls).toMatchObject([{ outcome: 'denied', approval: { approver: 'dave', reason: 'the order was never shipped' } }]);
    expect(JSON.stringify(result.toolCalls[0].output)).toContain('the order was never shipped');
    expect(runsOf(handle.workflowId)).toHaveLength(0);
  });

  it('changes nothing for a bad signature, an old timestamp, an unsigned or replayed request, an unknown user, one outside the group, a stale input, or a click after the call was decided', async () => {
    const { handle, ref } = await parkRefund(14_000);

    const forged = await post(signed(buttonClick('U0ALICE', SLACK_ACTIONS.approve, ref), { secret: 'not-the-signing-secret' }));
    const old = await post(signed(buttonClick('U0ALICE', SLACK_ACTIONS.approve, ref), { timestamp: Math.floor(Date.now() / 1000) - 301 }));
    const unsigned = await api.inject({ method: 'POST', url: '/api/slack/interactions', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: signed(buttonClick('U0ALICE', SLACK_ACTIONS.approve, ref)).body });
    expect([forged.status, old.status, unsigned.statusCode]).toEqual([401, 401, 401]);
    expect(JSON.parse(forged.body)).toMatchObject({ error: { type: 'Unauthorized', message: expect.stringContaining('bad-signature') } });
    expect(JSON.parse(old.body)).toMatchObject({ error: { message: expect.stringContaining('old-timestamp') } });
    // The route's form parser is its own: every other route still refuses a form.
    const form = await api.inject({ method: 'POST', url: '/api/turns', headers: { authorization: 'Bearer bob-token', 'content-type': 'application/x-www-form-urlencoded' }, payload: 'text=hello' });
    expect(form.statusCode).toBe(415);

    // Denials sent by strangers: an unknown Slack user, one outside finance, and a stale input hash.
    const stranger = buttonClick('U0NOBODY', SLACK_ACTIONS.deny, ref);
    const outsider = buttonClick('U0MALLORY', SLACK_ACTIONS.deny, ref);
    const stale = buttonClick('U0DAVE', SLACK_ACTIONS.deny, { ...ref, inputHash: 'sha256:an-input-nobody-sees-now' });
    for (const click of [stranger, outsider, stale]) expect((await post(signed(click))).status).toBe(200);
    expect(await toldThrough(stranger.response_url)).toMatch(/may not decide/);
    expect(await toldThrough(outsider.response_url)).toMatch(/may not decide/);
    expect(await toldThrough(stale.response_url)).toMatch(/input changed/);
    // Alice's forged and stale approvals recorded no vote either.
    const untouched = await waitForState(handle, () => true);
    expect(untouched.status).toBe('awaiting-input');
    expect(untouched.pending[0].progress!.votes).toEqual([]);

    // A real click, then the very same request again: the replay is refused.
    const alice = signed(buttonClick('U0ALICE', SLACK_ACTIONS.approve, ref));
    expect((await post(alice)).status).toBe(200);
    await waitForState(handle, (state) => votersOf(state)?.length === 1);
    expect(await post(alice)).toMatchObject({ status: 401, body: expect.stringContaining('replayed') });

    // Bob decides through the HTTP API; a later click on the old message changes nothing.
    const viaApi = await api.inject({
      method: 'POST',
      url: `/api/turns/${encodeURIComponent(ref.turnId)}/approvals/${ref.approvalId}`,
      headers: { authorization: 'Bearer bob-token', 'content-type': 'application/json' },
      payload: JSON.stringify({ approved: true, inputHash: ref.inputHash }),
    });
    expect(viaApi.statusCode).toBe(200);
    const result = await handle.result();
    expect(result.toolCalls).toMatchObject([{ outcome: 'approved', approval: { approver: 'bob' } }]);
    const late = buttonClick('U0CAROL', SLACK_ACTIONS.deny, ref);
    expect((await post(signed(late))).status).toBe(200);
    expect(await toldThrough(late.response_url)).toMatch(/no longer waits/);
    const after = await waitForState(handle, () => true);
    expect(after.decisions).toHaveLength(1);
    expect(after.decisions![0]).toMatchObject({ outcome: 'approved', approver: 'bob' });
    expect(after.decisions![0].progress!.votes.map((vote) => vote.approver)).toEqual(['alice', 'bob']);
    expect(runsOf(handle.workflowId)).toHaveLength(1);
  });

  it("maps a Slack user by the email users.info gives, asks Slack once for a while, and refuses an email the mapping does not name", async () => {
    const { handle, ref } = await parkRefund(15_000);
    const infoCalls = (user: string) => slack.calls.filter((call) => call.method === 'users.info' && call.args.user === user).length;

    expect((await post(signed(buttonClick('U0ALICEMAIL', SLACK_ACTIONS.approve, ref)), byEmailApi)).status).toBe(200);
    await waitForState(handle, (state) => votersOf(state)?.length === 1);
    expect(votersOf(await waitForState(handle, () => true))).toEqual(['alice']);
    const again = buttonClick('U0ALICEMAIL', SLACK_ACTIONS.approve, ref);
    expect((await post(signed(again), byEmailApi)).status).toBe(200);
    expect(await toldThrough(again.response_url)).toMatch(/already voted/);
    expect(infoCalls('U0ALICEMAIL')).toBe(1);

    const outsider = buttonClick('U0OUTSIDER', SLACK_ACTIONS.deny, ref);
    const unknown = buttonClick('U0NOSUCHUSER', SLACK_ACTIONS.deny, ref);
    for (const click of [outsider, unknown]) expect((await post(signed(click), byEmailApi)).status).toBe(200);
    expect(await toldThrough(outsider.response_url)).toMatch(/may not decide/);
    expect(await toldThrough(unknown.response_url)).toMatch(/may not decide/);
    const state = await waitForState(handle, () => true);
    expect(state.status).toBe('awaiting-input');
    expect(votersOf(state)).toEqual(['alice']);
    await handle.cancel();
  });
});
