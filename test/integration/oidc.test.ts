/**
 * The HTTP API with tokens from an identity provider: a local JWKS server and real signed
 * JWTs. Good tokens name the approver (and groups) that decisions carry; expired, wrong
 * audience, wrong issuer, unknown key, `alg: none` and tampered tokens are refused with 401.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApi } from '../../api/index.js';
import { TurnpikeClient, TurnpikeRejectedError } from '../../client/index.js';
import { startIdentityProvider, type IdentityProvider } from '../support/identity-provider.js';
import { executionsOf, testTools, use } from '../support/test-tools.js';
import { startTurnpike, waitForPending, type TurnpikeHarness } from '../support/turnpike-harness.js';

let turnpike: TurnpikeHarness;
let idp: IdentityProvider;
let api: FastifyInstance;
let client: TurnpikeClient;

beforeAll(async () => {
  [turnpike, idp] = await Promise.all([startTurnpike({ tools: testTools }), startIdentityProvider()]);
  client = new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue });
  api = await buildApi({
    client,
    oidc: { jwksUrl: idp.jwksUrl, issuer: idp.issuer, audience: idp.audience },
    // Auditors read every turn's decisions (api/read-access.ts).
    access: { adminGroups: ['auditors'] },
  });
});
afterAll(async () => {
  await api?.close();
  await idp?.close();
  await turnpike?.stop();
});

async function me(token: string) {
  const response = await api.inject({ url: '/api/me', headers: { authorization: `Bearer ${token}` } });
  return { status: response.statusCode, body: response.json() };
}

describe('tokens from an identity provider', () => {
  it('accepts a signed token and takes the approver identity and groups from its claims', async () => {
    const token = await idp.sign({ sub: 'u-1', email: 'alice', groups: ['finance', 'ops'] });
    expect(await me(token)).toEqual({ status: 200, body: { identity: 'alice', groups: ['finance', 'ops'] } });
    expect(await me(await idp.sign({ sub: 'u-2' }))).toEqual({ status: 200, body: { identity: 'u-2', groups: [] } });
  });

  it.each([
    ['expired', () => idp.sign({ sub: 'u-1', email: 'alice' }, { expiresIn: Math.floor(Date.now() / 1000) - 120 })],
    ['for another audience', () => idp.sign({ sub: 'u-1', email: 'alice' }, { audience: 'someone-else' })],
    ['from another issuer', () => idp.sign({ sub: 'u-1', email: 'alice' }, { issuer: 'https://evil.example/' })],
    ['signed by a key the provider does not publish', () => idp.signWithUnknownKey({ sub: 'u-1', email: 'alice' })],
    ['unsigned (alg: none)', async () => idp.unsigned({ sub: 'u-1', email: 'alice' })],
    ['with a tampered payload', async () => {
      const [header, , signature] = (await idp.sign({ sub: 'u-1', email: 'mallory' })).split('.');
      const forged = Buffer.from(JSON.stringify({ sub: 'u-1', email: 'alice', iss: idp.issuer, aud: idp.audience, exp: 4_000_000_000 })).toString('base64url');
      return `${header}.${forged}.${signature}`;
    }],
    ['that is not a JWT at all', async () => 'not-a-token'],
  ])('refuses a token %s with 401', async (_kind, token) => {
    const response = await me(await token());
    expect(response.status).toBe(401);
    expect(response.body).toMatchObject({ error: { type: 'Unauthorized' } });
  });

  it('decides in the token\'s name: an allowed approver\'s approval runs the tool; anyone else, who may not read the turn, gets 404', async () => {
    const handle = await turnpike.startTurn({ text: use('guarded_action', { target: 'prod', count: 1 }) });
    const [pending] = await waitForPending(handle);
    const decide = async (email: string) =>
      api.inject({
        method: 'POST',
        url: `/api/turns/${encodeURIComponent(handle.workflowId)}/approvals/${pending.approvalId}`,
        headers: { authorization: `Bearer ${await idp.sign({ sub: email, email })}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ approved: true }),
      });
    const refused = await decide('mallory');
    expect(refused.statusCode).toBe(404);
    expect(refused.json()).toEqual({ error: { type: 'NotFound', message: `No turn ${JSON.stringify(handle.workflowId)} was found` } });
    const accepted = await decide('bob');
    expect(accepted.statusCode).toBe(200);
    const result = await handle.result();
    expect(result.toolCalls).toMatchObject([{ outcome: 'approved', approval: { approver: 'bob' } }]);
    expect(executionsOf(handle.workflowId)).toHaveLength(1);
  });

  it('lists to each approver what they may decide, with counts per tool, and filters by tool and age', async () => {
    const finance = await turnpike.startTurn({ text: use('finance_transfer', { account: 'ops-float', amount: 1200 }) });
    const guarded = await turnpike.startTurn({ text: use('guarded_action', { target: 'listing', count: 1 }) });
    const [financeCall] = await waitForPending(finance);
    await waitForPending(guarded);
    const listing = async (email: string, groups: string[], query = '') => {
      const token = await idp.sign({ sub: email, email, groups });
      const response = await api.inject({ url: `/api/approvals${query}`, headers: { authorization: `Bearer ${token}` } });
      return response.json() as { counts: Record<string, number>; calls: Array<{ turnWorkflowId: string; toolName: string; approverGroups?: string[] }> };
    };
    const mine = <Call extends { turnWorkflowId: string }>(calls: Call[]) => calls.filter((call) => [finance.workflowId, guarded.workflowId].includes(call.turnWorkflowId));
    // Visibility catches up with the parks within moments.
    await expect.poll(async () => mine((await listing('dana', ['finance'])).calls).length, { timeout: 10_000 }).toBe(1);

    const member = await listing('dana', ['finance']);
    expect(mine(member.calls)).toMatchObject([{ toolName: 'finance_transfer', approverGroups: ['finance'] }]);
    expect(member.counts.finance_transfer).toBeGreaterThanOrEqual(1);
    expect(member.counts.guarded_action).toBeUndefined();
    expect(mine((await listing('bob', [])).calls).map((call) => call.toolName)).toEqual(['guarded_action']);
    expect(mine((await listing('controller', [])).calls).map((call) => call.toolName)).toEqual(['finance_transfer']);
    expect(mine((await listing('dana', ['finance'], '?tool=guarded_action')).calls)).toEqual([]);
    expect(mine((await listing('dana', ['finance'], '?minAgeSeconds=3600')).calls)).toEqual([]);

    // Outside the group: the API answers as for a turn that does not exist (eve may not read it),
    // and the workflow's caller check refuses a decision sent around the API.
    const decideAs = async (email: string, groups: string[]) =>
      api.inject({
        method: 'POST',
        url: `/api/turns/${encodeURIComponent(finance.workflowId)}/approvals/${financeCall.approvalId}`,
        headers: { authorization: `Bearer ${await idp.sign({ sub: email, email, groups })}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ approved: true }),
      });
    expect((await decideAs('eve', ['ops'])).json()).toEqual({ error: { type: 'NotFound', message: `No turn ${JSON.stringify(finance.workflowId)} was found` } });
    await expect(client.approveToolCall(finance.workflowId, { approvalId: financeCall.approvalId!, approved: true, approver: 'eve', approverGroups: ['ops'] })).rejects.toMatchObject({
      constructor: TurnpikeRejectedError,
      type: 'ApproverNotAllowed',
    });
    expect((await decideAs('dana', ['finance'])).statusCode).toBe(200);
    expect((await finance.result()).toolCalls).toMatchObject([{ outcome: 'approved', approval: { approver: 'dana' } }]);
    expect(executionsOf(finance.workflowId)).toHaveLength(1);
    await guarded.cancel();
  });

  it('gives an approver the context to decide: the request, what the model wrote, earlier results and the input schema', async () => {
    const handle = await turnpike.startTurn({ text: `look up order 1001 then ${use('finance_transfer', { account: 'refunds', amount: 499 })}` });
    const [pending] = await waitForPending(handle);
    const token = await idp.sign({ sub: 'dana', email: 'dana', groups: ['finance'] });
    const response = await api.inject({
      url: `/api/turns/${encodeURIComponent(handle.workflowId)}/calls/${pending.toolCallId}/context`,
      headers: { authorization: `Bearer ${token}` },
    });
    expect(response.statusCode).toBe(200);
    const context = response.json();
    expect(context).toMatchObject({
      toolCallId: pending.toolCallId,
      toolName: 'finance_transfer',
      userMessage: expect.stringContaining('look up order 1001'),
      earlierResults: [{ toolName: 'lookup_order', outcome: 'executed', output: { orderId: '1001', found: true } }],
      inputSchema: { type: 'object', properties: { account: { type: 'string' }, amount: { type: 'number' } } },
    });
    const unknown = await api.inject({ url: `/api/turns/${encodeURIComponent(handle.workflowId)}/calls/call_nope/context`, headers: { authorization: `Bearer ${token}` } });
    expect(unknown.statusCode).toBe(404);
    await handle.cancel();
  });

  it('keeps an audit trail of every decision — a person\'s, a policy\'s, an expiry — listed, filtered and exported as JSON lines', async () => {
    const automatic = await turnpike.startTurn({ text: 'refund $50 on order 1001' });
    const denied = await turnpike.startTurn({ text: use('guarded_action', { target: 'audit', count: 2 }) });
    const expired = await turnpike.startTurn({ text: use('guarded_action', { target: 'audit-expiry', count: 1 }), approvalTimeout: '1s' });
    const [toDeny] = await waitForPending(denied);
    const bob = await idp.sign({ sub: 'bob', email: 'bob' });
    const denial = await api.inject({
      method: 'POST',
      url: `/api/turns/${encodeURIComponent(denied.workflowId)}/approvals/${toDeny.approvalId}`,
      headers: { authorization: `Bearer ${bob}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ approved: false, reason: 'not in production' }),
    });
    expect(denial.statusCode).toBe(200);
    await Promise.all([automatic.result(), denied.result(), expired.result()]);

    const ours = new Set([automatic.workflowId, denied.workflowId, expired.workflowId]);
    const auditor = await idp.sign({ sub: 'audrey', email: 'audrey', groups: ['auditors'] });
    const list = async (query: string, token = auditor) => {
      const response = await api.inject({ url: `/api/decisions${query}`, headers: { authorization: `Bearer ${token}` } });
      expect(response.statusCode).toBe(200);
      return response;
    };
    const { decisions } = (await list('?limit=1000')).json() as { decisions: Array<Record<string, unknown>> };
    const byTurn = new Map(decisions.filter((decision) => ours.has(decision.turnWorkflowId as string)).map((decision) => [decision.turnWorkflowId, decision]));
    expect(byTurn.get(automatic.workflowId)).toMatchObject({ toolName: 'issue_refund', outcome: 'approved', automatic: true, reason: expect.stringContaining('automatic limit') });
    expect(byTurn.get(denied.workflowId)).toMatchObject({ toolName: 'guarded_action', outcome: 'denied', automatic: false, approver: 'bob', reason: 'not in production', inputHash: toDeny.inputHash });
    expect(byTurn.get(expired.workflowId)).toMatchObject({ toolName: 'guarded_action', outcome: 'expired', automatic: true });
    // bob, no auditor, lists the decision he made, and not those of turns he may not read.
    const bobsView = ((await list('?limit=1000', bob)).json() as { decisions: Array<{ turnWorkflowId: string }> }).decisions.filter((decision) => ours.has(decision.turnWorkflowId));
    expect(bobsView.map((decision) => decision.turnWorkflowId)).toEqual([denied.workflowId]);

    const bobs = (await list('?approver=bob&tool=guarded_action')).json() as { decisions: Array<{ approver?: string; toolName: string }> };
    expect(bobs.decisions.length).toBeGreaterThan(0);
    expect(bobs.decisions.every((decision) => decision.approver === 'bob' && decision.toolName === 'guarded_action')).toBe(true);

    const exported = await list('?format=jsonl&tool=issue_refund');
    expect(exported.headers['content-type']).toContain('application/x-ndjson');
    const lines = exported.body.trim().split('\n').map((line) => JSON.parse(line) as { toolName: string; turnWorkflowId: string });
    expect(lines.every((line) => line.toolName === 'issue_refund')).toBe(true);
    expect(lines.map((line) => line.turnWorkflowId)).toContain(automatic.workflowId);
  });
});
