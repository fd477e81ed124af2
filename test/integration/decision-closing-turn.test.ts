/**
 * A second decision (or result) that reaches a turn while it closes, or after it closed: an
 * approver approves and at once approves again, as a double click does, while the turn completes.
 * Temporal aborts that update ("workflow update was aborted by closing workflow"); turnpike answers
 * it as a decided call is answered: 409 `ApprovalAlreadyDecided` to whoever may read the turn (or
 * decide the call), 404 with the words of an unknown turn to anyone else, and the same typed
 * error from `TurnpikeClient` (client tool results: `ToolCallAlreadySettled`). Never Temporal's text.
 *
 * The turn's completing workflow task is held by the Worker's logger sink
 * (test/support/held-completion.ts) until the second request has gone to Temporal, so that the
 * update is admitted before the turn closes.
 */
import { Client, Connection } from '@temporalio/client';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseTokenMap } from '../../api/auth.js';
import { TurnpikeClient, TurnpikeRejectedError } from '../../client/turnpike-client.js';
import { turnpikeGrpcRetryInterceptor } from '../../connection/query-retry.js';
import { turnpikeDataConverter } from '../../content/data-converter.js';
import { serveApi, type ServedApi } from '../support/api-server.js';
import { completionGate, updateSpy } from '../support/held-completion.js';
import { executionsOf, testTools, use } from '../support/test-tools.js';
import { startTurnpike, waitForPending, type TurnpikeHarness } from '../support/turnpike-harness.js';

const gate = completionGate();
const spy = updateSpy();
let turnpike: TurnpikeHarness;
let connection: Connection;
let served: ServedApi;
/** The API's client, on the spied Connection. */
let client: TurnpikeClient;

beforeAll(async () => {
  turnpike = await startTurnpike({ tools: testTools, workerOptions: { sinks: gate.sinks } });
  // The API's own Connection, so that the spy sees exactly the updates the API sends.
  connection = await Connection.connect({ address: inject('temporalAddress'), interceptors: [turnpikeGrpcRetryInterceptor(), spy.interceptor] });
  client = new TurnpikeClient({ client: new Client({ connection, namespace: inject('temporalNamespace'), dataConverter: turnpikeDataConverter }), taskQueue: turnpike.taskQueue });
  served = await serveApi(turnpike, { client, tokens: parseTokenMap('alice-token:alice,bob-token:bob,mallory-token:mallory') });
});

afterEach(() => gate.releaseAll());

afterAll(async () => {
  await served?.api.close();
  await connection?.close();
  await turnpike?.stop();
});

async function call(token: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${served.base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: response.status, body: (await response.json()) as { error?: { type: string; message: string } } & Record<string, unknown> };
}

const turnPath = (turnId: string) => `/api/turns/${encodeURIComponent(turnId)}`;

/** Sends `send()` while the turn's completing task is held, once its request has gone to Temporal; then lets the turn close. */
async function whileClosing<T>(held: { held: Promise<void>; release(): void }, send: () => Promise<T>): Promise<T> {
  await held.held;
  const sent = spy.sent();
  const answer = send();
  await sent;
  // Temporal admits the update as it receives it; the turn's completion, released now, aborts it.
  await new Promise((resolve) => setTimeout(resolve, 300));
  held.release();
  return answer;
}

describe('a decision that reaches a turn as it closes', () => {
  it('answers a second approval sent as the turn completes with 409 ApprovalAlreadyDecided, and later ones too', async () => {
    const handle = await turnpike.startTurn({ text: use('guarded_action', { target: 'double-click', count: 1 }), startedBy: 'alice' });
    const turnId = handle.workflowId;
    const [pending] = await waitForPending(handle);
    const url = `${turnPath(turnId)}/approvals/${pending.approvalId}`;
    const held = gate.hold(turnId);

    expect((await call('alice-token', 'POST', url, { approved: true })).status).toBe(200);
    const again = await whileClosing(held, () => call('alice-token', 'POST', url, { approved: true }));
    expect(again).toEqual({ status: 409, body: { error: { type: 'ApprovalAlreadyDecided', message: `Approval ${pending.approvalId} was already decided` } } });

    const result = await handle.result();
    expect(result.status).toBe('completed');
    expect(result.toolCalls).toMatchObject([{ toolName: 'guarded_action', outcome: 'approved', approval: { approver: 'alice' } }]);
    expect(executionsOf(turnId)).toHaveLength(1);

    // After the turn closed: the same answer to the approver, to the other approver (a vote too
    // late), and to a library caller; a stranger learns nothing, as of a turn that does not exist.
    expect((await call('alice-token', 'POST', url, { approved: false })).body.error).toEqual({ type: 'ApprovalAlreadyDecided', message: `Approval ${pending.approvalId} was already decided` });
    expect((await call('bob-token', 'POST', url, { approved: true })).status).toBe(409);
    const stranger = await call('mallory-token', 'POST', url, { approved: true });
    const unknown = await call('mallory-token', 'POST', `${turnPath(`${turnId}-nope`)}/approvals/${pending.approvalId}`, { approved: true });
    expect(stranger).toEqual({ status: 404, body: { error: { type: 'NotFound', message: `No turn ${JSON.stringify(turnId)} was found` } } });
    expect(unknown.body.error?.message).toBe(`No turn ${JSON.stringify(`${turnId}-nope`)} was found`);
    const refusal = await client.approveToolCall(turnId, { approvalId: pending.approvalId!, approved: true, approver: 'bob' }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(TurnpikeRejectedError);
    expect(refusal).toMatchObject({ type: 'ApprovalAlreadyDecided', message: `Approval ${pending.approvalId} was already decided` });
    expect(executionsOf(turnId)).toHaveLength(1);
  });

  it("answers a library caller's second approval as the turn completes with the same typed error", async () => {
    const handle = await turnpike.startTurn({ text: use('guarded_action', { target: 'library', count: 2 }) });
    const [pending] = await waitForPending(handle);
    const held = gate.hold(handle.workflowId);
    const decision = { approvalId: pending.approvalId!, approved: true, approver: 'bob' };
    await client.approveToolCall(handle.workflowId, decision);
    const refusal = await whileClosing(held, () => client.approveToolCall(handle.workflowId, decision).catch((error: unknown) => error));
    expect(refusal).toBeInstanceOf(TurnpikeRejectedError);
    expect(refusal).toMatchObject({ type: 'ApprovalAlreadyDecided', message: `Approval ${pending.approvalId} was already decided` });
    expect((await handle.result()).status).toBe('completed');
    expect(executionsOf(handle.workflowId)).toHaveLength(1);
  });

  it("answers a client tool's second result as the turn completes with 409 ToolCallAlreadySettled", async () => {
    const handle = await turnpike.startTurn({ text: use('pick_colour', { options: ['red', 'blue'] }), startedBy: 'alice' });
    const turnId = handle.workflowId;
    const [pending] = await waitForPending(handle);
    const url = `${turnPath(turnId)}/tool-results/${pending.toolCallId}`;
    const held = gate.hold(turnId);

    expect((await call('alice-token', 'POST', url, { output: { colour: 'blue' } })).status).toBe(200);
    const again = await whileClosing(held, () => call('alice-token', 'POST', url, { output: { colour: 'red' } }));
    expect(again).toEqual({ status: 409, body: { error: { type: 'ToolCallAlreadySettled', message: `Tool call ${pending.toolCallId} is already settled (the turn has ended)` } } });
    const result = await handle.result();
    expect(result.toolCalls).toMatchObject([{ toolName: 'pick_colour', outcome: 'client', output: { colour: 'blue' } }]);
    expect((await call('alice-token', 'POST', url, { output: { colour: 'red' } })).body.error?.type).toBe('ToolCallAlreadySettled');
    expect((await call('mallory-token', 'POST', url, { output: { colour: 'red' } })).status).toBe(404);
  });
});
