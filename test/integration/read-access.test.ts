/**
 * Reading rights through the HTTP API (api/read-access.ts), route by route. One turn and one
 * conversation, both started through the API by sam and parked on `finance_transfer` (decided by
 * the controller, or the finance group). Callers:
 * - sam, who started them;
 * - controller, a named approver of the parked call, and fiona, of the finance group;
 * - ada, of the admin group;
 * - mallory, who has no right to either.
 * A caller with no rights gets the same 404 as for a turn or conversation that does not exist.
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Caller } from '../../api/auth.js';
import { buildApi } from '../../api/server.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { testTools, use } from '../support/test-tools.js';
import { startTurnpike, waitForPending, type TurnpikeHarness } from '../support/turnpike-harness.js';

const CALLERS: Record<string, Caller> = {
  sam: { identity: 'sam', groups: [] },
  controller: { identity: 'controller', groups: [] },
  fiona: { identity: 'fiona', groups: ['finance'] },
  ada: { identity: 'ada', groups: ['turnpike-admins'] },
  mallory: { identity: 'mallory', groups: ['support'] },
};
const READERS = ['sam', 'controller', 'fiona', 'ada'];

let turnpike: TurnpikeHarness;
let client: TurnpikeClient;
let api: FastifyInstance;
let base: string;

beforeAll(async () => {
  turnpike = await startTurnpike({ tools: testTools });
  client = new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue });
  api = await buildApi({
    client,
    // As an identity provider would say: a bearer token per person, with their groups.
    authenticate: async (authorization) => CALLERS[/^Bearer (\w+)-token$/.exec(authorization ?? '')?.[1] ?? ''],
    access: { adminGroups: ['turnpike-admins'], admins: [] },
  });
  await api.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(api.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await api?.close();
  await turnpike?.stop();
});

async function as(who: string, method: string, url: string, body?: unknown) {
  const response = await api.inject({
    method: method as 'GET',
    url,
    headers: { authorization: `Bearer ${who}-token`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
  });
  return { status: response.statusCode, body: response.body ? response.json() : undefined };
}

/** The status an SSE route answers with (the stream is left at once). */
async function sseStatus(who: string, path: string): Promise<number> {
  const abort = new AbortController();
  const response = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${who}-token` }, signal: abort.signal });
  abort.abort();
  return response.status;
}

const transfer = use('finance_transfer', { account: 'acc-secret', amount: 990 });

describe('a parked turn started through the API', () => {
  let turnId: string;
  let toolCallId: string;
  let approvalId: string;

  beforeAll(async () => {
    turnId = `read-access-${randomUUID()}`;
    const started = await as('sam', 'POST', '/api/turns', { turnId, input: { model: { provider: 'scripted', model: 'demo' }, messages: [{ role: 'user', content: transfer }] } });
    expect(started.status).toBe(201);
    [{ toolCallId, approvalId }] = (await waitForPending(turnpike.client.workflow.getHandle(turnId))) as Array<{ toolCallId: string; approvalId: string }>;
  });

  it('is read by its starter, its approvers and an admin, and is a 404 for anyone else, as a turn that does not exist is', async () => {
    const missing = await as('sam', 'GET', `/api/turns/turn-${randomUUID()}`);
    expect(missing.status).toBe(404);
    const routes = [`/api/turns/${turnId}`, `/api/turns/${turnId}/calls/${toolCallId}/context`];
    for (const route of routes) {
      for (const who of READERS) expect((await as(who, 'GET', route)).status, `${who} GET ${route}`).toBe(200);
      const refused = await as('mallory', 'GET', route);
      expect(refused.status, `mallory GET ${route}`).toBe(404);
      expect(refused.body.error.type).toBe('NotFound');
      expect(JSON.stringify(refused.body)).not.toContain('acc-secret');
    }
    // The refusal says no more than a missing turn's does.
    expect((await as('mallory', 'GET', `/api/turns/${turnId}`)).body.error.message).toBe(`No turn ${JSON.stringify(turnId)} was found`);
    expect(missing.body.error.message).toMatch(/^No turn ".*" was found$/);
    expect((await as('sam', 'GET', `/api/turns/${turnId}`)).body.state.pending[0].input).toEqual({ account: 'acc-secret', amount: 990 });
  });

  it('gives stream tokens and its event stream only to its readers', async () => {
    for (const who of READERS) {
      const issued = await as(who, 'POST', `/api/turns/${turnId}/stream-token`);
      expect(issued.status, who).toBe(200);
      expect(await sseStatus(who, `/api/turns/${turnId}/events`), who).toBe(200);
    }
    expect((await as('mallory', 'POST', `/api/turns/${turnId}/stream-token`)).status).toBe(404);
    expect(await sseStatus('mallory', `/api/turns/${turnId}/events`)).toBe(404);
    // Not through a client tool's result either, nor by starting the same turn id again.
    expect((await as('mallory', 'POST', `/api/turns/${turnId}/tool-results/${toolCallId}`, { output: {} })).status).toBe(404);
    const again = await as('mallory', 'POST', '/api/turns', { turnId, input: { model: { provider: 'scripted', model: 'demo' }, messages: [{ role: 'user', content: 'hi' }] } });
    expect(again.status).toBe(404);
  });

  it('answers a decision from a caller who may not read the turn exactly as one for a turn that does not exist', async () => {
    const missingId = `turn-${randomUUID()}`;
    const missing = await as('mallory', 'POST', `/api/turns/${missingId}/approvals/${approvalId}`, { approved: true });
    expect(missing).toEqual({ status: 404, body: { error: { type: 'NotFound', message: `No turn ${JSON.stringify(missingId)} was found` } } });
    for (const decision of [{ approved: true }, { approved: false, reason: 'no' }, { approved: true, input: { account: 'acc-other', amount: 1 } }]) {
      const refused = await as('mallory', 'POST', `/api/turns/${turnId}/approvals/${approvalId}`, decision);
      // Not ApproverNotAllowed, which would confirm the turn and name its tool and approvers.
      expect(refused, JSON.stringify(decision)).toEqual({ status: 404, body: { error: { type: 'NotFound', message: `No turn ${JSON.stringify(turnId)} was found` } } });
    }
    // sam started the turn and reads it, but may not decide its call: the turn's own refusal.
    expect((await as('sam', 'POST', `/api/turns/${turnId}/approvals/${approvalId}`, { approved: true })).body.error.type).toBe('ApproverNotAllowed');
    expect((await as('sam', 'GET', `/api/turns/${turnId}`)).body.state.pending).toHaveLength(1);
  });

  it('lists a decision only to those who may read its turn', async () => {
    expect((await as('controller', 'POST', `/api/turns/${turnId}/approvals/${approvalId}`, { approved: true })).status).toBe(200);
    await turnpike.client.workflow.getHandle(turnId).result();
    const listed = async (who: string) =>
      ((await as(who, 'GET', '/api/decisions')).body.decisions as Array<{ turnWorkflowId: string }>).filter((decision) => decision.turnWorkflowId === turnId).length;
    // Once the audit trail shows it to its starter (visibility lags by moments) …
    for (let attempt = 0; attempt < 100 && (await listed('sam')) === 0; attempt++) await new Promise((resolve) => setTimeout(resolve, 100));
    // … it shows it to the starter, the approver who decided and an admin; fiona, who could
    // have decided, no longer reads the turn once it is decided; mallory never did.
    for (const who of ['sam', 'controller', 'ada']) expect(await listed(who), who).toBe(1);
    expect(await listed('fiona')).toBe(0);
    expect(await listed('mallory')).toBe(0);
    expect((await as('mallory', 'GET', '/api/decisions?format=jsonl')).body).toBeUndefined();
    expect((await as('fiona', 'GET', `/api/turns/${turnId}`)).status).toBe(404);
    expect((await as('sam', 'GET', `/api/turns/${turnId}`)).body.result.status).toBe('completed');
  });
});

describe('a conversation started through the API', () => {
  const conversationId = `conv-read-access-${randomUUID()}`;
  const path = `/api/conversations/${conversationId}`;

  let parked: { approvalId: string; toolCallId: string };

  beforeAll(async () => {
    expect((await as('sam', 'POST', `${path}/messages`, { text: transfer })).status).toBe(202);
    [parked] = (await waitForPending(turnpike.client.workflow.getHandle(`${conversationId}/turn-1`))) as Array<{ approvalId: string; toolCallId: string }>;
  });

  it('is read by its starter, the approvers of its parked call and an admin; anyone else gets 404 on every route', async () => {
    for (const who of READERS) {
      expect((await as(who, 'GET', `${path}/history`)).status, who).toBe(200);
      expect((await as(who, 'POST', `${path}/stream-token`)).status, who).toBe(200);
      expect(await sseStatus(who, `${path}/events`), who).toBe(200);
    }
    for (const [method, route] of [['GET', `${path}/history`], ['POST', `${path}/stream-token`]] as const) {
      const refused = await as('mallory', method, route);
      expect(refused.status, route).toBe(404);
      expect(refused.body.error.message).toBe(`No conversation ${JSON.stringify(conversationId)} was found`);
    }
    expect(await sseStatus('mallory', `${path}/events`)).toBe(404);
    expect((await as('mallory', 'POST', `${path}/messages`, { text: 'let me in' })).status).toBe(404);
    // A turn of the conversation is read as the conversation is.
    const turn = await as('sam', 'GET', `/api/turns/${encodeURIComponent(`${conversationId}/turn-1`)}`);
    expect(turn.status).toBe(200);
    expect(turn.body.state.pending[0].input).toEqual({ account: 'acc-secret', amount: 990 });
    expect((await as('mallory', 'GET', `/api/turns/${encodeURIComponent(`${conversationId}/turn-1`)}`)).status).toBe(404);
  });

  it('/api/chat streams nothing of it to a caller who may not read it, even with an unknown approval id', async () => {
    // A response to its parked approval is answered as for a conversation that does not exist.
    const decided = await as('mallory', 'POST', '/api/chat', {
      id: conversationId,
      messages: [{ id: 'm-0', role: 'assistant', parts: [{ type: 'tool-finance_transfer', toolCallId: parked.toolCallId, state: 'approval-responded', input: {}, approval: { id: parked.approvalId, approved: true } }] }],
    });
    expect(decided).toEqual({ status: 404, body: { error: { type: 'NotFound', message: `No conversation ${JSON.stringify(conversationId)} was found` } } });
    const body = {
      id: conversationId,
      messages: [{ id: 'm-1', role: 'assistant', parts: [{ type: 'tool-finance_transfer', toolCallId: 'x', state: 'approval-responded', input: {}, approval: { id: 'apr_unknown', approved: true } }] }],
    };
    const refused = await as('mallory', 'POST', '/api/chat', body);
    expect(refused.status).toBe(404);
    expect(JSON.stringify(refused.body)).not.toContain('acc-secret');
    // Its starter gets the stream.
    const response = await fetch(`${base}/api/chat`, { method: 'POST', headers: { authorization: 'Bearer sam-token', 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('acc-secret');
  });

  it('lists its client-tool call to its readers only', async () => {
    const withClientTool = `conv-read-access-client-${randomUUID()}`;
    expect((await as('sam', 'POST', `/api/conversations/${withClientTool}/messages`, { text: use('pick_colour', { options: ['red', 'green'] }) })).status).toBe(202);
    const [pending] = await waitForPending(turnpike.client.workflow.getHandle(`${withClientTool}/turn-1`));
    const listed = async (who: string) =>
      ((await as(who, 'GET', `/api/approvals?conversation=${withClientTool}`)).body.calls as Array<{ toolCallId: string }>).map((call) => call.toolCallId);
    for (let attempt = 0; attempt < 100 && (await listed('sam')).length === 0; attempt++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await listed('sam')).toEqual([pending.toolCallId]);
    expect(await listed('ada')).toEqual([pending.toolCallId]);
    expect(await listed('mallory')).toEqual([]);
    expect(await listed('controller')).toEqual([]);
  });
});
