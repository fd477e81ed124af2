/**
 * `TurnpikeApprovers` (workflows/context/approver-values.ts): a turn keeps, as a search attribute,
 * who may decide what it has parked, and an approver's listing asks visibility for those turns
 * only, instead of reading every parked turn and filtering after (docs/capacity.md).
 *
 * 1. A turn started through the client carries it: `unset`, then the approvers of what it parks,
 *    `anyone` and `reader`, then `none`; a conversation's turns carry it too.
 *    An escalation and a delegation, which change who may decide and nothing else the turn
 *    upserts, upsert it alone (patch `0.5.0-approvers-attribute`), and the new approver lists it.
 * 2. An approver's listing is filtered by visibility: with a limit of one turn, bob finds his call
 *    behind newer turns he may not decide; a turn started without the attribute (as before it
 *    existed) is still listed, to those who may decide it; an identity with a quote is quoted.
 * A namespace without the attribute: approvers-namespace.test.ts.
 */
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { defineTool } from '../../activities/tools.js';
import type { TurnpikeClient } from '../../client/turnpike-client.js';
import { turnpikeApproversKey } from '../../workflows/context/search-attributes.js';
import { APPROVERS_PATCH } from '../../workflows/context/approver-values.js';
import type { AgentTurnInput } from '../../workflows/types/turn.js';
import { testTools, use } from '../support/test-tools.js';
import { noteStarted } from '../support/history-recorder.js';
import { useTurnpikeWithFakes, waitForPending, waitForState } from '../support/turnpike-harness.js';

/** An approval that names no approver: anyone may decide it. */
const openAction = defineTool({
  name: 'open_action',
  description: 'Needs anyone’s approval.',
  inputSchema: z.object({ target: z.string().min(1) }),
  approval: true,
  async execute(input) {
    return { done: input.target };
  },
});
/** Decided by one person whose identity has a quote and a backslash in it. */
const quotedAction = defineTool({
  name: 'quoted_action',
  description: 'Needs the approval of o’brien.',
  inputSchema: z.object({ target: z.string().min(1) }),
  approval: true,
  approvers: ["o'brien \\ ops"],
  async execute(input) {
    return { done: input.target };
  },
});

/** ann decides; after 2 s the call escalates to mgr, who may delegate it. */
const escalatingAction = defineTool({
  name: 'escalating_action',
  description: 'Needs ann’s approval, escalated to mgr.',
  inputSchema: z.object({ target: z.string().min(1) }),
  approval: { approvers: ['ann'], escalate: [{ after: '2s', to: { approvers: ['mgr'] } }] },
  async execute(input) {
    return { done: input.target };
  },
});

const suite = useTurnpikeWithFakes({ tools: [...testTools, openAction, quotedAction, escalatingAction] });

const turnOf = (...calls: string[]): AgentTurnInput => ({ model: { provider: 'scripted', model: 'demo' }, messages: [{ role: 'user', content: calls.join(' and ') }] });
const guarded = (target: string) => use('guarded_action', { target, count: 1 });
const finance = (account: string) => use('finance_transfer', { account, amount: 10 });

/** The turn's `TurnpikeApprovers` as visibility shows it, once it satisfies `predicate`. */
async function approversListed(client: TurnpikeClient, turnId: string, predicate: (values: string[] | undefined) => boolean): Promise<string[] | undefined> {
  const deadline = Date.now() + 30_000;
  let values: string[] | undefined;
  while (Date.now() < deadline) {
    for await (const execution of client.client.workflow.list({ query: `WorkflowId="${turnId}"` })) values = execution.typedSearchAttributes.get(turnpikeApproversKey);
    if (predicate(values)) return values;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`TurnpikeApprovers of ${turnId} never satisfied the condition; last: ${JSON.stringify(values)}`);
}

/** Waits until visibility lists the turn as parked with `count` calls (the listing reads visibility). */
async function parkedInVisibility(client: TurnpikeClient, handle: WorkflowHandle, count: number): Promise<void> {
  await waitForPending(handle, count);
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const listed = await client.listParkedCalls({ query: `WorkflowId="${handle.workflowId}" AND AgentTurnStatus="awaiting-input"` });
    if (listed.length === count) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${handle.workflowId} was never listed with ${count} parked calls`);
}

describe('TurnpikeApprovers', () => {
  it('says who may decide what a turn has parked, as it parks and is decided, in turns and in a conversation’s turns', async () => {
    const { client } = suite;
    const turnId = `approvers-${randomUUID()}`;
    await client.startTurn(turnOf(guarded('one'), finance('acct-1'), use('open_action', { target: 'x' }), use('pick_colour', { options: ['red'] })), { turnId });
    const handle = client.turn(turnId);
    noteStarted(handle);
    const pending = await waitForPending(handle, 4);
    expect(await approversListed(client, turnId, (values) => (values?.length ?? 0) > 1)).toEqual(['anyone', 'group:finance', 'reader', 'user:alice', 'user:bob', 'user:controller']);

    for (const call of pending.filter((call) => call.kind === 'approval')) await client.approveToolCall(turnId, { approvalId: call.approvalId!, approved: call.toolName !== 'finance_transfer', approver: call.toolName === 'finance_transfer' ? 'controller' : 'alice' });
    expect(await approversListed(client, turnId, (values) => values?.length === 1)).toEqual(['reader']);
    const colour = pending.find((call) => call.kind === 'client-tool')!;
    await client.submitToolResult(turnId, { toolCallId: colour.toolCallId, output: { colour: 'red' } });
    expect((await client.turnResult(turnId)).status).toBe('completed');
    // Kept when nothing is parked: its presence is how a hand-over's next run knows the namespace has it.
    expect(await approversListed(client, turnId, (values) => values?.[0] === 'none')).toEqual(['none']);
    // Its values rode on the upserts the turn makes anyway: no patch marker, no upsert of their own.
    const { events } = await handle.fetchHistory();
    expect(events?.filter((event) => event.markerRecordedEventAttributes)).toEqual([]);
    const upserts = (events ?? []).flatMap((event) => (event.upsertWorkflowSearchAttributesEventAttributes ? [Object.keys(event.upsertWorkflowSearchAttributesEventAttributes.searchAttributes?.indexedFields ?? {})] : []));
    expect(upserts.every((keys) => keys.includes('AgentTurnStatus'))).toBe(true);

    // A conversation's turn: started by the conversation, which passes the attribute on.
    const conversationId = `approvers-conversation-${randomUUID()}`;
    const sent = await client.sendMessage({ conversationId, conversation: { model: { provider: 'scripted', model: 'demo' } }, text: finance('acct-2') });
    await waitForState(client.turn(sent.turnWorkflowId), (state) => state.pending.length === 1);
    expect(await approversListed(client, sent.turnWorkflowId, (values) => values?.includes('user:controller') === true)).toEqual(['group:finance', 'user:controller']);
  });

  it('filters an approver’s listing in visibility: bob finds his call behind newer turns he may not decide, with a limit of one turn', async () => {
    const { client, turnpike } = suite;
    // The oldest: a turn started as before the attribute existed: no TurnpikeApprovers at all.
    const legacy = await turnpike.client.workflow.start('agentTurn', { taskQueue: turnpike.taskQueue, workflowId: `approvers-legacy-${randomUUID()}`, args: [turnOf(finance('legacy'))] });
    await parkedInVisibility(client, legacy, 1);
    expect(await approversListed(client, legacy.workflowId, () => true)).toBeUndefined();
    const bobs = `approvers-bob-${randomUUID()}`;
    await client.startTurn(turnOf(guarded('bob')), { turnId: bobs });
    await parkedInVisibility(client, client.turn(bobs), 1);
    const others: string[] = [];
    for (let index = 0; index < 3; index++) {
      const turnId = `approvers-finance-${randomUUID()}`;
      await client.startTurn(turnOf(finance(`acct-${index}`)), { turnId });
      await parkedInVisibility(client, client.turn(turnId), 1);
      others.push(turnId);
    }

    const scope = `(${others.concat(bobs, legacy.workflowId).map((id) => `WorkflowId="${id}"`).join(' OR ')}) AND AgentTurnStatus="awaiting-input"`;
    // Read then filtered, one turn finds nothing of bob's: the newest turns are not his.
    const unfiltered = await client.listParkedCalls({ query: scope, limit: 1 });
    expect(unfiltered.map((call) => call.toolName)).toEqual(['finance_transfer']);
    // Asked of visibility, the one turn read is his.
    const mine = await client.listParkedCalls({ query: scope, limit: 1, approver: { identity: 'bob' } });
    expect(mine.map((call) => [call.turnWorkflowId, call.toolName])).toEqual([[bobs, 'guarded_action']]);
    // A member of finance: the three finance turns and the legacy one (listed as it carries no attribute, and theirs to decide).
    const fiona = await client.listParkedCalls({ query: scope, approver: { identity: 'fiona', groups: ['finance'] } });
    expect(fiona.map((call) => call.turnWorkflowId).sort()).toEqual([...others, legacy.workflowId].sort());
    // Someone who may decide nothing here gets nothing, the legacy turn included (checked after reading).
    expect(await client.listParkedCalls({ query: scope, approver: { identity: 'mallory' } })).toEqual([]);

    const quoted = `approvers-quoted-${randomUUID()}`;
    await client.startTurn(turnOf(use('quoted_action', { target: 'q' })), { turnId: quoted });
    await parkedInVisibility(client, client.turn(quoted), 1);
    const theirs = await client.listParkedCalls({ query: `WorkflowId="${quoted}"`, approver: { identity: "o'brien \\ ops" } });
    expect(theirs.map((call) => call.toolName)).toEqual(['quoted_action']);
    expect(await client.listParkedCalls({ query: `WorkflowId="${quoted}"`, approver: { identity: "o'brien" } })).toEqual([]);
  });

  it('follows an escalation and a delegation: the approver they add finds the call in their own listing', async () => {
    const { client } = suite;
    const turnId = `approvers-escalation-${randomUUID()}`;
    await client.startTurn(turnOf(use('escalating_action', { target: 'e' })), { turnId });
    noteStarted(client.turn(turnId)); // for the replay set of the patch
    const [call] = await waitForPending(client.turn(turnId), 1);
    expect(await approversListed(client, turnId, (values) => values?.includes('user:ann') === true)).toEqual(['user:ann']);
    const mine = (identity: string) => client.listParkedCalls({ query: `WorkflowId="${turnId}"`, approver: { identity } });
    expect(await mine('mgr')).toEqual([]);

    // The escalation adds mgr; the status and the parked tool stay as they were.
    expect(await approversListed(client, turnId, (values) => values?.includes('user:mgr') === true)).toEqual(['user:ann', 'user:mgr']);
    expect((await mine('mgr')).map((parked) => parked.approvalId)).toEqual([call!.approvalId]);

    // mgr hands it to eve.
    await client.delegateApproval(turnId, { approvalId: call!.approvalId!, approver: 'mgr', to: { approvers: ['eve'] }, reason: 'eve owns it' });
    expect(await approversListed(client, turnId, (values) => values?.includes('user:eve') === true)).toContain('user:eve');
    expect((await mine('eve')).map((parked) => parked.approvalId)).toEqual([call!.approvalId]);
    await client.approveToolCall(turnId, { approvalId: call!.approvalId!, approved: true, approver: 'eve' });
    expect((await client.turnResult(turnId)).status).toBe('completed');
    const { events } = await client.turn(turnId).fetchHistory();
    // One marker of the patch, however many times who may decide changed.
    const markers = (events ?? []).flatMap((event) => event.markerRecordedEventAttributes?.details?.['patch-data']?.payloads ?? []);
    expect(markers.filter((payload) => Buffer.from(payload.data ?? []).toString('utf8').includes(APPROVERS_PATCH))).toHaveLength(1);
  });
});
