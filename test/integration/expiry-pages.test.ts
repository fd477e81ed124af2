/**
 * An approver's queue soonest-expiring first, a page at a time (`TurnpikeNextExpiry`,
 * workflows/context/next-expiry.ts; client/expiry-pages.ts; `GET /api/approvals?limit=&after=`).
 *
 * Turns parked with approval timeouts of 3, 1, 5, 2 and 4 hours, started in that order (so
 * visibility's own order, newest first, is not the expiry order), beside a turn started without
 * the attribute (as before it existed) that expires soonest of all and a turn with only a
 * client-side call. Pages of two give the two soonest, then the next two across a decision made
 * between pages, then the turns without an expiry; nothing repeats. The HTTP API takes the same
 * `limit` and `after` and refuses bad ones with 400. The dashboard: dashboard-pages.test.ts.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTokenMap } from '../../api/auth.js';
import { buildApi } from '../../api/server.js';
import type { ParkedCall, ParkedPage, TurnpikeClient } from '../../client/turnpike-client.js';
import { NEXT_EXPIRY_NONE } from '../../workflows/context/next-expiry.js';
import { turnpikeNextExpiryKey } from '../../workflows/context/search-attributes.js';
import type { AgentTurnInput } from '../../workflows/types/turn.js';
import { noteStarted } from '../support/history-recorder.js';
import { testTools, use } from '../support/test-tools.js';
import { useTurnpikeWithFakes, waitForPending } from '../support/turnpike-harness.js';

const suite = useTurnpikeWithFakes({ tools: testTools });
let api: FastifyInstance;
beforeAll(async () => {
  api = await buildApi({ client: suite.client, tokens: parseTokenMap('alice-token:alice,mallory-token:mallory') });
});
afterAll(async () => {
  await api?.close();
});

const turnOf = (approvalTimeout: string, ...calls: string[]): AgentTurnInput => ({
  model: { provider: 'scripted', model: 'demo' },
  messages: [{ role: 'user', content: calls.join(' and ') }],
  approvalTimeout,
});
const guarded = (target: string) => use('guarded_action', { target, count: 1 });

/** The turn's `TurnpikeNextExpiry` as visibility shows it (ISO), once `predicate` holds. */
async function expiryListed(client: TurnpikeClient, turnId: string, predicate: (value: string | undefined) => boolean): Promise<string | undefined> {
  const deadline = Date.now() + 30_000;
  let value: string | undefined;
  while (Date.now() < deadline) {
    for await (const execution of client.client.workflow.list({ query: `WorkflowId="${turnId}"` })) value = execution.typedSearchAttributes.get(turnpikeNextExpiryKey)?.toISOString();
    if (predicate(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`TurnpikeNextExpiry of ${turnId} never satisfied the condition; last: ${value}`);
}

/** Turns parked with these timeouts, in this order, each through the client (which starts them with the attribute). */
async function parkTurns(client: TurnpikeClient, prefix: string, timeouts: string[]): Promise<Map<string, string>> {
  const byTimeout = new Map<string, string>();
  for (const timeout of timeouts) {
    const turnId = `${prefix}-${timeout}-${randomUUID().slice(0, 8)}`;
    await client.startTurn(turnOf(timeout, guarded(`t-${timeout}`)), { turnId });
    noteStarted(client.turn(turnId));
    byTimeout.set(timeout, turnId);
  }
  for (const turnId of byTimeout.values()) await waitForPending(client.turn(turnId), 1);
  return byTimeout;
}

const turnsOf = (calls: ParkedCall[]) => [...new Set(calls.map((call) => call.turnWorkflowId))];

describe('an approver’s queue, soonest-expiring first, a page at a time', () => {
  it('pages the queue by expiry: the two soonest, the next two across a decision between pages, then the turns without an expiry', async () => {
    const { client, turnpike } = suite;
    const prefix = `pages-${randomUUID().slice(0, 8)}`;
    const dated = await parkTurns(client, prefix, ['3h', '1h', '5h', '2h', '4h']);
    // Started as before the attribute existed: the soonest of all, but nothing tells visibility so.
    const legacy = await turnpike.client.workflow.start('agentTurn', { taskQueue: turnpike.taskQueue, workflowId: `${prefix}-legacy`, args: [turnOf('30m', guarded('legacy'))] });
    // Only a client-side call: nothing a person decides, so no expiry.
    const clientOnly = `${prefix}-client`;
    await client.startTurn(turnOf('10m', use('pick_colour', { options: ['red'] })), { turnId: clientOnly });
    noteStarted(client.turn(clientOnly));
    await waitForPending(legacy, 1);
    await waitForPending(client.turn(clientOnly), 1);

    // Each turn publishes the soonest expiry of its decisions; a client-side call has none.
    const oneHour = (await client.turnState(dated.get('1h')!)).pending[0]!;
    expect(await expiryListed(client, dated.get('1h')!, (value) => value !== NEXT_EXPIRY_NONE)).toBe(oneHour.expiresAt);
    expect(await expiryListed(client, clientOnly, () => true)).toBe(NEXT_EXPIRY_NONE);
    expect(await expiryListed(client, legacy.workflowId, () => true)).toBeUndefined();

    const ids = [...dated.values(), legacy.workflowId, clientOnly];
    const query = `WorkflowType="agentTurn" AND AgentTurnStatus="awaiting-input" AND WorkflowId IN (${ids.map((id) => `"${id}"`).join(', ')})`;
    const page = (limit: number, after?: string) => client.listParkedPage({ query, limit, approver: { identity: 'alice' }, ...(after ? { after } : {}) });
    // Visibility lags: wait until every dated turn carries its expiry and all seven are listed.
    for (const turnId of dated.values()) await expiryListed(client, turnId, (value) => value !== undefined && value !== NEXT_EXPIRY_NONE);
    let whole: ParkedPage = { calls: [] };
    for (let attempt = 0; attempt < 150 && whole.calls.length !== 7; attempt++) {
      whole = await page(100);
      if (whole.calls.length !== 7) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const order = [...['1h', '2h', '3h', '4h', '5h'].map((timeout) => dated.get(timeout)!), ...[legacy.workflowId, clientOnly].sort()];
    expect(turnsOf(whole.calls)).toEqual(order);
    expect(whole.next).toBeUndefined();

    const first = await page(2);
    expect(turnsOf(first.calls)).toEqual([dated.get('1h'), dated.get('2h')]);
    expect(first.next).toEqual(expect.any(String));

    // Decided between pages: the next page goes on from where the first ended, without it.
    const [threeHours] = await waitForPending(client.turn(dated.get('3h')!), 1);
    await client.approveToolCall(dated.get('3h')!, { approvalId: threeHours!.approvalId!, approved: true, approver: 'alice' });
    expect((await client.turnResult(dated.get('3h')!)).status).toBe('completed');
    let second = await page(2, first.next);
    for (let attempt = 0; attempt < 150 && turnsOf(second.calls).includes(dated.get('3h')!); attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      second = await page(2, first.next);
    }
    expect(turnsOf(second.calls)).toEqual([dated.get('4h'), dated.get('5h')]);
    expect(second.next).toEqual(expect.any(String));

    // Then those without an expiry, by turn id: the one started without the attribute is listed.
    const third = await page(2, second.next);
    expect(turnsOf(third.calls)).toEqual([legacy.workflowId, clientOnly].sort());
    expect(third.next).toBeUndefined();
    const seen = [first, second, third].flatMap((one) => turnsOf(one.calls));
    expect(new Set(seen).size).toBe(seen.length);

    // A page of one from the cursor inside the undated turns continues by id.
    const undatedFirst = await page(1, second.next);
    expect(turnsOf(undatedFirst.calls)).toEqual([[legacy.workflowId, clientOnly].sort()[0]]);
    expect(turnsOf((await page(1, undatedFirst.next)).calls)).toEqual([[legacy.workflowId, clientOnly].sort()[1]]);

    // Someone who may decide nothing here sees only the client-side call, whoever may read it.
    const mallory = await client.listParkedPage({ query, limit: 10, approver: { identity: 'mallory' } });
    expect(turnsOf(mallory.calls)).toEqual([clientOnly]);

    // Bad arguments are refused before anything is read.
    await expect(client.listParkedPage({ query, limit: 0 })).rejects.toThrow(RangeError);
    await expect(client.listParkedPage({ query, after: 'not-a-cursor' })).rejects.toThrow(/after is not a cursor/);
  });

  it('serves the pages over HTTP: GET /api/approvals?limit=&after=, soonest first, and 400 for a bad limit or cursor', async () => {
    const { client } = suite;
    const prefix = `http-pages-${randomUUID().slice(0, 8)}`;
    // alice's queue: these, and what the first test left parked.
    const dated = await parkTurns(client, prefix, ['7h', '6h', '8h']);
    const get = async (token: string, query: string) => api.inject({ url: `/api/approvals${query}`, headers: { authorization: `Bearer ${token}` } });
    type Body = { approver: string; counts: Record<string, number>; calls: ParkedCall[]; next?: string };
    const mine = (calls: ParkedCall[]) => calls.filter((call) => call.turnWorkflowId.startsWith(prefix));
    let all: Body = { approver: '', counts: {}, calls: [] };
    for (let attempt = 0; attempt < 150 && mine(all.calls).length !== 3; attempt++) {
      all = (await get('alice-token', '')).json() as Body;
      if (mine(all.calls).length !== 3) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    // Without `limit`: one page of up to 5,000 turns, sorted by expiry, as before paging existed.
    expect(turnsOf(mine(all.calls))).toEqual(['6h', '7h', '8h'].map((timeout) => dated.get(timeout)));
    expect(all.next).toBeUndefined();
    expect(all.counts.guarded_action).toBeGreaterThanOrEqual(3);

    // Page through all of it, one turn a page: the same calls, nothing twice.
    const pages: Body[] = [];
    let after: string | undefined;
    do {
      const response = await get('alice-token', `?limit=1${after ? `&after=${encodeURIComponent(after)}` : ''}`);
      expect(response.statusCode).toBe(200);
      const body = response.json() as Body;
      pages.push(body);
      after = body.next;
    } while (after && pages.length < 50);
    const paged = pages.flatMap((body) => body.calls);
    expect(paged.map((call) => call.toolCallId + call.turnWorkflowId).sort()).toEqual(all.calls.map((call) => call.toolCallId + call.turnWorkflowId).sort());
    expect(turnsOf(mine(paged))).toEqual(['6h', '7h', '8h'].map((timeout) => dated.get(timeout)));
    // Counts are the page's.
    expect(Object.values(pages[0]!.counts).reduce((sum, count) => sum + count, 0)).toBeLessThanOrEqual(pages[0]!.calls.length);

    for (const [query, message] of [
      ['?limit=0', /limit/],
      ['?limit=5001', /limit/],
      ['?limit=two', /limit/],
      ['?limit=1.5', /limit/],
      ['?after=not-a-cursor', /after/],
      [`?after=${Buffer.from(JSON.stringify(['yesterday', 'x'])).toString('base64url')}`, /after/],
    ] as const) {
      const response = await get('alice-token', query);
      expect(response.statusCode, query).toBe(400);
      expect(response.body, query).toMatch(message);
    }
  });
});
