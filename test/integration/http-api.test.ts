/**
 * The HTTP API on a real dev server: authentication, request validation, status codes, the
 * approver taken from the bearer token, and signed decision tokens.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTokenMap } from '../../api/auth.js';
import { buildApi } from '../../api/server.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { MAX_STORED_PART_BYTES } from '../../workflows/turn/binary-parts.js';
import { useFakeProviders } from '../support/fake-providers.js';
import { executionsOf, testTools, use } from '../support/test-tools.js';
import { startTurnpike, waitForPending, type TurnpikeHarness } from '../support/turnpike-harness.js';

const TOKENS = 'alice-token:alice,bob-token:bob,mallory-token:mallory';

let turnpike: TurnpikeHarness;
let api: FastifyInstance;
let signedApi: FastifyInstance;

beforeAll(async () => {
  turnpike = await startTurnpike({ tools: testTools });
  const client = new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue });
  api = await buildApi({ client, tokens: parseTokenMap(TOKENS) });
  signedApi = await buildApi({ client, tokens: parseTokenMap(TOKENS), decisionSecret: 'test-secret-for-signing' });
});
afterAll(async () => {
  await api?.close();
  await signedApi?.close();
  await turnpike?.stop();
});

interface Call {
  method?: 'GET' | 'POST';
  url: string;
  token?: string | null;
  body?: unknown;
  server?: FastifyInstance;
}

/** One real HTTP request through fastify's router, validation and handlers (inject skips only the socket). */
async function call({ method = 'GET', url, token = 'alice-token', body, server = api }: Call) {
  const response = await server.inject({
    method,
    url,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { payload: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- assertions read response bodies freely
  return { status: response.statusCode, body: response.json() as Record<string, any> };
}

function turnPath(turnId: string): string {
  return `/api/turns/${encodeURIComponent(turnId)}`;
}

async function parkedTurn(text = use('guarded_action', { target: 'http-api', count: 1 }), startedBy = 'alice') {
  const handle = await turnpike.startTurn({ text, startedBy });
  const [pending] = await waitForPending(handle);
  return { handle, pending };
}

describe('HTTP API', () => {
  it('refuses requests without a known bearer token', async () => {
    expect((await call({ url: '/api/approvals', token: null })).status).toBe(401);
    expect((await call({ url: '/api/approvals', token: 'nope' })).body.error.type).toBe('Unauthorized');
  });

  it('starts a turn idempotently by id and reports its state and result', async () => {
    const turnId = `http-${randomUUID()}`;
    const input = { model: { provider: 'scripted', model: 'demo' }, messages: [{ role: 'user', content: use('record_action', { action: 'http' }) }] };
    const first = await call({ method: 'POST', url: '/api/turns', body: { turnId, input } });
    const again = await call({ method: 'POST', url: '/api/turns', body: { turnId, input } });
    expect(first).toEqual({ status: 201, body: { turnId } });
    expect(again).toEqual({ status: 201, body: { turnId } });
    await turnpike.client.workflow.getHandle(turnId).result();
    const { status, body } = await call({ url: turnPath(turnId) });
    expect(status).toBe(200);
    expect(body).toMatchObject({ turnId, state: { status: 'completed' }, result: { status: 'completed', toolCalls: [{ outcome: 'executed' }] } });
    expect(executionsOf(turnId)).toHaveLength(1);
  });

  it('starts a turn whose inline image is as large as a turn allows, beyond fastify\'s default 1 MiB body', async () => {
    const turnId = `http-image-${randomUUID()}`;
    const image = { type: 'image', source: { type: 'base64', mediaType: 'image/png', data: 'A'.repeat(1_200_000) } };
    const input = { model: { provider: 'scripted', model: 'demo' }, messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, image] }] };
    expect(await call({ method: 'POST', url: '/api/turns', body: { turnId, input } })).toEqual({ status: 201, body: { turnId } });
    expect(await turnpike.client.workflow.getHandle(turnId).result()).toMatchObject({ status: 'completed' });
  });

  it('answers malformed bodies with 400 and unknown turns with 404', async () => {
    expect((await call({ method: 'POST', url: '/api/turns', body: { turnId: 'x', input: { model: { provider: 'gemini', model: 'x' }, messages: [] } } })).status).toBe(400);
    expect((await call({ method: 'POST', url: '/api/turns', body: '{not json' })).status).toBe(400);
    expect((await call({ url: turnPath(`missing-${randomUUID()}`) })).status).toBe(404);
    expect((await call({ method: 'POST', url: `${turnPath(`missing-${randomUUID()}`)}/approvals/apr_x`, body: { approved: true } })).status).toBe(404);
  });

  it('lists a parked approval and decides it as the token\'s identity, never the body\'s', async () => {
    const { handle, pending } = await parkedTurn();
    const listed = await call({ url: '/api/approvals' });
    expect(listed.body.approver).toBe('alice');
    expect(listed.body.calls).toContainEqual(expect.objectContaining({ turnWorkflowId: handle.workflowId, approvalId: pending.approvalId, toolName: 'guarded_action', inputHash: pending.inputHash }));

    const spoofed = await call({ method: 'POST', url: `${turnPath(handle.workflowId)}/approvals/${pending.approvalId}`, body: { approved: true, approver: 'bob' } });
    expect(spoofed.status).toBe(400);

    const decided = await call({ method: 'POST', url: `${turnPath(handle.workflowId)}/approvals/${pending.approvalId}`, body: { approved: true, reason: 'ok by me', inputHash: pending.inputHash } });
    expect(decided).toMatchObject({ status: 200, body: { approvalId: pending.approvalId, approved: true } });
    const result = await handle.result();
    expect(result.toolCalls[0].approval).toMatchObject({ approver: 'alice', reason: 'ok by me', automatic: false });

    const twice = await call({ method: 'POST', url: `${turnPath(handle.workflowId)}/approvals/${pending.approvalId}`, body: { approved: false } });
    // After the turn ended, as before it: the approval was decided.
    expect(twice).toMatchObject({ status: 409, body: { error: { type: 'ApprovalAlreadyDecided', message: `Approval ${pending.approvalId} was already decided` } } });
    expect(executionsOf(handle.workflowId)).toHaveLength(1);
  });

  it('answers a rejected decision with 409 and the workflow\'s message, and an unknown approval with 404', async () => {
    // mallory started the turn, so she may read it; guarded_action's approvers are alice and bob.
    const { handle, pending } = await parkedTurn(undefined, 'mallory');
    const notAllowed = await call({ method: 'POST', url: `${turnPath(handle.workflowId)}/approvals/${pending.approvalId}`, token: 'mallory-token', body: { approved: true } });
    expect(notAllowed).toMatchObject({ status: 409, body: { error: { type: 'ApproverNotAllowed', message: expect.stringMatching(/^The approver \(7 characters\) may not decide "guarded_action"/) } } });
    const badEdit = await call({ method: 'POST', url: `${turnPath(handle.workflowId)}/approvals/${pending.approvalId}`, body: { approved: true, input: { target: 'x', count: 0 } } });
    expect(badEdit).toMatchObject({ status: 409, body: { error: { type: 'InvalidEditedInput' } } });
    const unknown = await call({ method: 'POST', url: `${turnPath(handle.workflowId)}/approvals/apr_unknown`, body: { approved: true } });
    expect(unknown).toMatchObject({ status: 404, body: { error: { type: 'UnknownApprovalId' } } });
    await handle.cancel();
  });

  it('answers a decision the turn finds malformed with 400 and its type', async () => {
    const { handle, pending } = await parkedTurn();
    // The body passes the API's schema; the turn refuses an edited input that comes with a denial.
    const malformed = await call({ method: 'POST', url: `${turnPath(handle.workflowId)}/approvals/${pending.approvalId}`, body: { approved: false, input: { target: 'x', count: 1 } } });
    expect(malformed).toMatchObject({ status: 400, body: { error: { type: 'InvalidRequest', message: expect.stringContaining('only makes sense with approved: true') } } });
    await handle.cancel();
  });

  it('reports a turn the model refused: its state and result, status refused', async () => {
    const fake = await useFakeProviders();
    try {
      fake.script('openai', [{ noContent: true, finishReason: 'content_filter' }]);
      const turnId = `http-${randomUUID()}`;
      const input = { model: { provider: 'openai', model: 'gpt-4.1-mini' }, messages: [{ role: 'user', content: 'something filtered' }] };
      expect((await call({ method: 'POST', url: '/api/turns', body: { turnId, input } })).status).toBe(201);
      await turnpike.client.workflow.getHandle(turnId).result();
      const { status, body } = await call({ url: turnPath(turnId) });
      expect(status).toBe(200);
      expect(body).toMatchObject({ state: { status: 'refused' }, result: { status: 'refused', text: '', messages: [], cutOff: { finishReason: 'content-filter', providerFinishReason: 'content_filter' } } });
    } finally {
      await fake.restore();
    }
  });

  it('takes a client tool\'s result, validating it against the tool\'s output schema', async () => {
    const { handle, pending } = await parkedTurn(use('pick_colour', { options: ['red', 'green'] }));
    const url = `${turnPath(handle.workflowId)}/tool-results/${pending.toolCallId}`;
    expect((await call({ method: 'POST', url, body: { output: { colour: 'pink' } } })).body.error.type).toBe('InvalidToolOutput');
    expect((await call({ method: 'POST', url: `${turnPath(handle.workflowId)}/tool-results/call_nope`, body: { output: {} } })).status).toBe(404);
    expect((await call({ method: 'POST', url, body: { output: { colour: 'green' } } })).status).toBe(200);
    expect((await handle.result()).toolCalls[0]).toMatchObject({ outcome: 'client', output: { colour: 'green' } });
  });

  it('sends conversation messages and pages the history, turn ids with slashes included', async () => {
    const conversationId = `http-conv-${randomUUID()}`;
    const sent = await call({ method: 'POST', url: `/api/conversations/${conversationId}/messages`, body: { text: 'look up order 1003' } });
    expect(sent).toMatchObject({ status: 202, body: { turnWorkflowId: `${conversationId}/turn-1` } });
    await turnpike.client.workflow.getHandle(sent.body.turnWorkflowId).result();
    const turn = await call({ url: turnPath(sent.body.turnWorkflowId) });
    expect(turn.body.result.text).toContain('Milk jug');
    let history = await call({ url: `/api/conversations/${conversationId}/history?limit=2` });
    for (let tries = 0; history.body.total < 4 && tries < 50; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      history = await call({ url: `/api/conversations/${conversationId}/history?limit=2` });
    }
    expect(history.body).toMatchObject({ offset: 0, total: 4, messages: [{ role: 'user', content: 'look up order 1003' }, { role: 'assistant' }] });
  });

  it('takes a conversation message with an image, and refuses one whose image is too large, changing nothing', async () => {
    const conversationId = `http-conv-${randomUUID()}`;
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    const image = { type: 'image', source: { type: 'base64', mediaType: 'image/png', data: png } };
    const url = `/api/conversations/${conversationId}/messages`;
    const sent = await call({ method: 'POST', url, body: { text: 'look up order 1003', content: [image] } });
    expect(sent.status).toBe(202);
    await turnpike.client.workflow.getHandle(sent.body.turnWorkflowId).result();

    // Inline parts of 128 KiB or more are stored by the API's client and go by reference; a
    // stored part over the limit is refused by name.
    const tooLarge = { type: 'stored', ref: `sha256:${'0'.repeat(64)}`, mediaType: 'image/png', bytes: MAX_STORED_PART_BYTES + 1 };
    const refused = await call({ method: 'POST', url, body: { text: 'and this', content: [{ ...image, source: tooLarge }] } });
    expect(refused).toMatchObject({ status: 400, body: { error: { type: 'InvalidRequest' } } });
    expect(refused.body.error.message).toBe(`Invalid sendMessage: content[0].source is ${MAX_STORED_PART_BYTES + 1} bytes; a stored image or document may be at most ${MAX_STORED_PART_BYTES} bytes`);
    const unknownPart = await call({ method: 'POST', url, body: { text: 'and this', content: [{ type: 'audio' }] } });
    expect(unknownPart.status).toBe(400);

    let history = await call({ url: `/api/conversations/${conversationId}/history` });
    for (let tries = 0; history.body.total < 4 && tries < 50; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      history = await call({ url: `/api/conversations/${conversationId}/history` });
    }
    expect(history.body.messages[0]).toEqual({ role: 'user', content: [{ type: 'text', text: 'look up order 1003' }, image] });
    // Only the first message became a turn: the refused ones left no trace.
    expect(history.body.messages.filter((message: { role: string }) => message.role === 'user')).toHaveLength(1);
    expect((await call({ url: turnPath(`${conversationId}/turn-2`) })).status).toBe(404);
  });
});

describe('HTTP API with signed decisions', () => {
  it('requires the decision token the approval was listed with, for the same approver and input', async () => {
    const { handle, pending } = await parkedTurn();
    const url = `${turnPath(handle.workflowId)}/approvals/${pending.approvalId}`;
    const forAlice = (await call({ url: '/api/approvals', server: signedApi })).body.calls.find((entry: { approvalId: string }) => entry.approvalId === pending.approvalId);
    expect(forAlice.decisionToken).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const missing = await call({ method: 'POST', url, server: signedApi, body: { approved: true, inputHash: pending.inputHash } });
    expect(missing).toMatchObject({ status: 403, body: { error: { type: 'InvalidDecisionToken' } } });
    const otherApprover = await call({ method: 'POST', url, server: signedApi, token: 'bob-token', body: { approved: true, inputHash: pending.inputHash, decisionToken: forAlice.decisionToken } });
    expect(otherApprover.status).toBe(403);
    const otherInput = await call({ method: 'POST', url, server: signedApi, body: { approved: true, inputHash: 'sha256:forged', decisionToken: forAlice.decisionToken } });
    expect(otherInput.status).toBe(403);
    expect(executionsOf(handle.workflowId)).toHaveLength(0);

    const good = await call({ method: 'POST', url, server: signedApi, body: { approved: true, inputHash: pending.inputHash, decisionToken: forAlice.decisionToken } });
    expect(good.status).toBe(200);
    const replayed = await call({ method: 'POST', url, server: signedApi, body: { approved: true, inputHash: pending.inputHash, decisionToken: forAlice.decisionToken } });
    expect(replayed).toMatchObject({ status: 409, body: { error: { type: 'ApprovalAlreadyDecided' } } });
    await handle.result();
    expect(executionsOf(handle.workflowId)).toHaveLength(1);
  });
});
