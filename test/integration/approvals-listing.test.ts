/**
 * Approval listings from visibility alone: each parked turn keeps its parked calls in its memo
 * (workflows/context/pending-memo.ts), and `listParkedCalls` / `GET /api/approvals` read them from the
 * visibility listing without querying any turn; so does `listDecisions` for parked turns. Proven with the worker stopped (a query would
 * find no worker), against each turn's exact `turnState`; with rights, counts, filters and the
 * expiry sort through the HTTP API; and for the case that still needs a query: an input too large
 * for the memo.
 */
import type { WorkflowHandle } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTokenMap } from '../../api/auth.js';
import { buildApi } from '../../api/server.js';
import { TurnpikeClient, type ParkedCall } from '../../client/turnpike-client.js';
import { PENDING_MEMO_INPUT_CAP, PENDING_MEMO_KEY } from '../../workflows/context/pending-memo.js';
import { testTools, use } from '../support/test-tools.js';
import { startTurnpike, waitForPending, type TurnpikeHarness } from '../support/turnpike-harness.js';


let turnpike: TurnpikeHarness;
let client: TurnpikeClient;
let api: FastifyInstance;

beforeAll(async () => {
  turnpike = await startTurnpike({ tools: testTools });
  client = new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue });
  api = await buildApi({
    client,
    tokens: parseTokenMap('alice-token:alice,controller-token:controller,mallory-token:mallory'),
    // A member of the finance group, as an identity provider would say.
    authenticate: async (authorization) => (authorization === 'Bearer fiona-token' ? { identity: 'fiona', groups: ['finance'] } : undefined),
  });
});
afterAll(async () => {
  await api?.close();
  await turnpike?.stop();
});

const byCallId = (a: ParkedCall, b: ParkedCall) => `${a.turnWorkflowId}/${a.toolCallId}`.localeCompare(`${b.turnWorkflowId}/${b.toolCallId}`);

/** The listing once visibility shows exactly `expected` calls (it lags the turns by moments). */
async function listingOf(expected: number, list: () => Promise<ParkedCall[]> = () => client.listParkedCalls()): Promise<ParkedCall[]> {
  let calls: ParkedCall[] = [];
  for (let attempt = 0; attempt < 300; attempt++) {
    calls = await list();
    if (calls.length === expected) return calls.sort(byCallId);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the listing never showed ${expected} calls; last: ${JSON.stringify(calls)}`);
}

/** What `turnState` says is parked in these turns: the exact answer the listing must give. */
async function exactly(handles: WorkflowHandle[]): Promise<ParkedCall[]> {
  const calls = await Promise.all(
    handles.map(async (handle) => {
      const state = await client.turnState(handle.workflowId);
      const startedBy = (await client.describeStart(handle.workflowId))?.startedBy;
      return state.pending.map((call) => ({
        ...call,
        turnWorkflowId: handle.workflowId,
        ...(state.conversationId ? { conversationId: state.conversationId } : {}),
        ...(startedBy ? { startedBy } : {}),
      }));
    }),
  );
  return calls.flat().sort(byCallId);
}

async function approvals(token: string, query = '') {
  const response = await api.inject({ url: `/api/approvals${query}`, headers: { authorization: `Bearer ${token}` } });
  expect(response.statusCode).toBe(200);
  return response.json() as { approver: string; counts: Record<string, number>; calls: ParkedCall[] };
}

describe('listing parked calls from the memo', () => {
  let guardedSoon: WorkflowHandle;
  let guardedLater: WorkflowHandle;
  let finance: WorkflowHandle;
  let pair: WorkflowHandle;
  let client_: WorkflowHandle;

  it('lists every parked call exactly as turnState does, with the worker stopped', async () => {
    guardedSoon = await turnpike.startTurn({ text: use('guarded_action', { target: 'soon', count: 1 }), approvalTimeout: '2h', conversationId: 'conv-soon' });
    guardedLater = await turnpike.startTurn({ text: use('guarded_action', { target: 'later', count: 2 }), approvalTimeout: '3h', conversationId: 'conv-later' });
    finance = await turnpike.startTurn({ text: use('finance_transfer', { account: 'acc-1', amount: 50 }), approvalTimeout: '1h' });
    pair = await turnpike.startTurn({
      text: `${use('guarded_action', { target: 'first', count: 3 })} and ${use('finance_transfer', { account: 'acc-2', amount: 70 })}`,
      approvalTimeout: '4h',
    });
    // Started by alice (as POST /api/turns records its caller): only she reads its client-tool call.
    client_ = await turnpike.startTurn({ text: use('pick_colour', { options: ['red', 'blue'] }), clientToolTimeout: '5h', startedBy: 'alice' });
    for (const handle of [guardedSoon, guardedLater, finance, client_]) await waitForPending(handle);
    await waitForPending(pair, 2);
    const expected = await exactly([guardedSoon, guardedLater, finance, pair, client_]);
    expect(expected).toHaveLength(6);
    await listingOf(6);

    const memo = (await turnpike.client.workflow.getHandle(pair.workflowId).describe()).memo?.[PENDING_MEMO_KEY] as { calls: unknown[] };
    expect(memo.calls).toHaveLength(2);

    // No worker: a turnState query could not be answered, so what is listed came from visibility.
    await turnpike.stopWorker();
    try {
      expect(await listingOf(6)).toEqual(expected);
    } finally {
      await turnpike.startWorker();
    }
  });

  it('shows each approver what they may decide, counted per tool, filtered, sorted by expiry', async () => {
    const alice = await approvals('alice-token');
    expect(alice.approver).toBe('alice');
    // guarded_action: alice or bob; finance_transfer: controller or the finance group; the client
    // tool's call: those who may read its turn, here alice, who started it.
    expect(alice.calls.map((call) => [call.toolName, call.input])).toEqual([
      ['guarded_action', { target: 'soon', count: 1 }],
      ['guarded_action', { target: 'later', count: 2 }],
      ['guarded_action', { target: 'first', count: 3 }],
      ['pick_colour', { options: ['red', 'blue'] }],
    ]);
    expect(alice.counts).toEqual({ guarded_action: 3 });

    const fiona = await approvals('fiona-token');
    expect(fiona.calls.map((call) => [call.toolName, call.input])).toEqual([
      ['finance_transfer', { account: 'acc-1', amount: 50 }],
      ['finance_transfer', { account: 'acc-2', amount: 70 }],
    ]);
    expect(fiona.counts).toEqual({ finance_transfer: 2 });
    expect((await approvals('controller-token')).counts).toEqual({ finance_transfer: 2 });
    const mallory = await approvals('mallory-token');
    expect(mallory.counts).toEqual({});
    expect(mallory.calls).toEqual([]);

    expect((await approvals('alice-token', '?conversation=conv-later')).calls.map((call) => call.turnWorkflowId)).toEqual([guardedLater.workflowId]);
    expect((await approvals('fiona-token', '?tool=finance_transfer')).calls.map((call) => call.turnWorkflowId)).toEqual([finance.workflowId, pair.workflowId]);
    expect((await approvals('alice-token', '?minAgeSeconds=3600')).calls).toEqual([]);
    expect((await approvals('alice-token', '?minAgeSeconds=0')).calls).toHaveLength(4);
  });

  it('drops a decided call, and keeps the other call of a turn that still waits', async () => {
    const [soon] = await client.turnState(guardedSoon.workflowId).then((state) => state.pending);
    const pairCalls = (await client.turnState(pair.workflowId)).pending;
    const guardedOfPair = pairCalls.find((call) => call.toolName === 'guarded_action')!;
    // Through the API, which also drops the listing it shares between pollers.
    const decide = (turnId: string, approvalId: string, body: object) =>
      api.inject({ method: 'POST', url: `/api/turns/${encodeURIComponent(turnId)}/approvals/${approvalId}`, headers: { authorization: 'Bearer alice-token', 'content-type': 'application/json' }, payload: JSON.stringify(body) });
    expect((await decide(guardedSoon.workflowId, soon.approvalId!, { approved: true })).statusCode).toBe(200);
    expect((await decide(pair.workflowId, guardedOfPair.approvalId!, { approved: false, reason: 'no' })).statusCode).toBe(200);

    const listed = await listingOf(4);
    expect(listed).toEqual(await exactly([guardedLater, finance, pair, client_]));
    expect(listed.filter((call) => call.turnWorkflowId === pair.workflowId).map((call) => call.toolName)).toEqual(['finance_transfer']);
    expect((await approvals('alice-token')).counts).toEqual({ guarded_action: 1 });

    // The audit trail: the parked turn's decision from its memo, the ended turn's from its result.
    await guardedSoon.result();
    for (let attempt = 0; attempt < 300; attempt++) {
      const { count } = await turnpike.client.workflow.count(`WorkflowId="${guardedSoon.workflowId}" AND ExecutionStatus="Completed"`);
      if (count === 1) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const ofTurns = async (...handles: WorkflowHandle[]) =>
      (await Promise.all(handles.map(async (handle) => ((await client.turnState(handle.workflowId)).decisions ?? []).map((decision) => ({ ...decision, turnWorkflowId: handle.workflowId }))))).flat();
    const expected = await ofTurns(pair, guardedSoon);
    expect(expected.map((decision) => [decision.toolName, decision.outcome, decision.approver])).toEqual([
      ['guarded_action', 'denied', 'alice'],
      ['guarded_action', 'approved', 'alice'],
    ]);
    await turnpike.stopWorker();
    try {
      const decisions = await client.listDecisions();
      expect(decisions.sort((a, b) => a.turnWorkflowId.localeCompare(b.turnWorkflowId))).toEqual(expected.sort((a, b) => a.turnWorkflowId.localeCompare(b.turnWorkflowId)));
    } finally {
      await turnpike.startWorker();
    }
  });

  it('reads an input too large for the memo with turnState, and lists it whole', async () => {
    const target = 'x'.repeat(PENDING_MEMO_INPUT_CAP + 10);
    const large = await turnpike.startTurn({ text: use('guarded_action', { target, count: 9 }) });
    await waitForPending(large);
    const memo = (await large.describe()).memo?.[PENDING_MEMO_KEY] as { calls: Array<{ input?: unknown; inputOmitted?: boolean }> };
    expect(memo.calls).toMatchObject([{ inputOmitted: true }]);
    expect(memo.calls[0].input).toBeUndefined();
    const listed = await listingOf(5);
    expect(listed.find((call) => call.turnWorkflowId === large.workflowId)).toEqual((await exactly([large]))[0]);
    expect(listed.find((call) => call.turnWorkflowId === large.workflowId)?.input).toEqual({ target, count: 9 });
  });
});
