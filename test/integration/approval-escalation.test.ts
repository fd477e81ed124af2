/**
 * Escalation with short durations on the real dev server: when finance has not decided, the
 * managers are added, nudged by webhook, listed, and can decide (a vote already cast still
 * counts); at the last step the call is denied with the reason and the model is told. Each step
 * is a durable timer in the turn's history: across a worker restart none fires twice.
 * Delegation: an approver hands the call to bob, who is nudged and can decide, and the audit
 * shows the delegation.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineTool } from '../../activities/tools.js';
import { TurnpikeClient } from '../../client/index.js';
import type { ApprovalNotification } from '../../workflows/types/index.js';
import type { TurnEvent } from '../../workflows/types/turn-events.js';
import { use } from '../support/test-tools.js';
import { startTurnpike, waitForListed, waitForPending, waitForState, type TurnpikeHarness } from '../support/turnpike-harness.js';

const runs: string[] = [];
const execute = async (_input: unknown, { idempotencyKey }: { idempotencyKey: string }) => {
  runs.push(idempotencyKey);
  return { ok: true };
};
const payVendor = defineTool({
  name: 'pay_vendor',
  description: 'Pays a vendor; two from finance, or the managers once finance is slow.',
  inputSchema: z.object({ vendor: z.string() }),
  approval: { quorum: 2, approverGroups: ['finance'], escalate: [{ after: '2s', to: { approvers: ['mgr'] } }, { after: '1h', deny: 'no decision' }] },
  execute,
});
const closeBooks = defineTool({
  name: 'close_books',
  description: 'Closes the books; denied when nobody decides.',
  inputSchema: z.object({ month: z.string() }),
  approval: { approverGroups: ['finance'], escalate: [{ after: '2s', to: { approverGroups: ['finance-managers'] } }, { after: '5s', deny: 'no decision from finance' }] },
  execute,
});
const wireMoney = defineTool({
  name: 'wire_money',
  description: 'Wires money; finance decides.',
  inputSchema: z.object({ amount: z.number() }),
  approval: true,
  approverGroups: ['finance'],
  execute,
});
const runsOf = (turnId: string) => runs.filter((key) => key.startsWith(`${turnId}/`));

const deliveries: Array<{ id: string; body: { text: string; turnpike: ApprovalNotification } }> = [];
let receiver: http.Server;
let turnpike: TurnpikeHarness;
let client: TurnpikeClient;

beforeAll(async () => {
  receiver = http.createServer((request, response) => {
    let raw = '';
    request.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    request.on('end', () => {
      deliveries.push({ id: String(request.headers['x-turnpike-delivery']), body: JSON.parse(raw) });
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  turnpike = await startTurnpike({
    tools: [payVendor, closeBooks, wireMoney],
    notifications: { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, expiringBefore: '1s' },
  });
  client = new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue });
}, 120_000);
afterAll(async () => {
  await turnpike?.stop();
  await new Promise((resolve) => receiver?.close(resolve));
});

/** The turn's approval-progress events: what a reader of its stream saw of the approval before it was decided. */
async function progressEvents(turnId: string): Promise<Array<Extract<TurnEvent, { type: 'approval-progress' }>>> {
  const events: TurnEvent[] = [];
  for await (const record of client.turnEvents(turnId)) events.push(record.event);
  return events.filter((event): event is Extract<TurnEvent, { type: 'approval-progress' }> => event.type === 'approval-progress');
}

const nudgesOf = (approvalId: string, event: ApprovalNotification['event']) => deliveries.filter((d) => d.body.turnpike.approvalId === approvalId && d.body.turnpike.event === event);

describe('escalation', () => {
  it('adds the managers at the first step and nudges them; they can decide, and a vote cast before still counts', async () => {
    const handle = await turnpike.startTurn({ text: use('pay_vendor', { vendor: 'acme' }) });
    const [pending] = await waitForPending(handle);
    expect(pending.progress?.escalation).toMatchObject([{ after: '2s', to: { approvers: ['mgr'] } }, { after: '1h', deny: 'no decision' }]);
    await client.approveToolCall(handle.workflowId, { approvalId: pending.approvalId!, approved: true, approver: 'alice', approverGroups: ['finance'] });

    await expect.poll(() => nudgesOf(pending.approvalId!, 'escalated').length, { timeout: 30_000 }).toBe(1);
    const [nudge] = nudgesOf(pending.approvalId!, 'escalated');
    expect(nudge.id).toBe(`${handle.workflowId}/${pending.approvalId}/escalated/0`);
    expect(nudge.body.turnpike.added).toEqual({ approvers: ['mgr'] });
    expect(nudge.body.text).toContain('escalated to mgr');
    const state = await waitForState(handle, (s) => s.pending[0]?.progress?.escalation?.[0]?.firedAt !== undefined);
    expect(state.pending[0]).toMatchObject({ approvers: ['mgr'], approverGroups: ['finance'] });
    // The listing shows the new approver, and lists the call to them.
    await expect.poll(async () => (await waitForListed(client, handle.workflowId, 1))[0].approvers, { timeout: 15_000 }).toEqual(['mgr']);

    const decided = await client.approveToolCall(handle.workflowId, { approvalId: pending.approvalId!, approved: true, approver: 'mgr' });
    expect(decided.votes).toEqual({ approvals: 2, quorum: 2, decided: true });
    const result = await handle.result();
    expect(result.toolCalls).toMatchObject([{ outcome: 'approved', approval: { approver: 'mgr' } }]);
    expect(runsOf(handle.workflowId)).toHaveLength(1);
    expect(result.decisions![0].progress!.votes.map((v) => v.approver)).toEqual(['alice', 'mgr']);
    // The stream showed alice's vote, then the step that added mgr (with alice's vote still counted).
    const progress = await progressEvents(handle.workflowId);
    expect(progress.map((event) => [event.change, event.progress.votes.map((v) => v.approver), event.progress.escalation![0].firedAt !== undefined])).toEqual([
      ['vote', ['alice'], false],
      ['escalation', ['alice'], true],
    ]);
    expect(result.decisions![0].eligible).toEqual({ approvers: ['mgr'], approverGroups: ['finance'] });
  });

  it('denies at the last step with its reason, tells the model, and fires no step twice across a worker restart', async () => {
    const handle = await turnpike.startTurn({ text: use('close_books', { month: '2026-10' }) });
    const [pending] = await waitForPending(handle);
    await expect.poll(() => nudgesOf(pending.approvalId!, 'escalated').length, { timeout: 30_000 }).toBe(1);
    // A manager could decide now; nobody does. The worker goes away past the last step's time.
    await turnpike.stopWorker();
    const due = Date.parse(pending.requestedAt) + 5_000;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - Date.now()) + 1_000));
    await turnpike.startWorker();

    const result = await handle.result();
    expect(result.toolCalls).toMatchObject([{ outcome: 'denied', approval: { automatic: true, reason: 'no decision from finance' } }]);
    expect(JSON.stringify(result.toolCalls[0].output)).toContain('no decision from finance');
    expect(runsOf(handle.workflowId)).toHaveLength(0);
    const [decision] = result.decisions!;
    expect(decision).toMatchObject({ outcome: 'denied', automatic: true, reason: 'no decision from finance' });
    expect(decision.progress!.escalation!.map((step) => step.firedAt !== undefined)).toEqual([true, true]);

    // One escalation nudge, and one notifyApprovers activity per nudge in the turn's history.
    expect(nudgesOf(pending.approvalId!, 'escalated')).toHaveLength(1);
    const history = await handle.fetchHistory();
    const scheduled = (history.events ?? []).filter((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'notifyApprovers');
    expect(scheduled).toHaveLength(3); // parked, escalated, decided
  });
});

describe('delegation', () => {
  it('hands a call to bob: bob is nudged and can decide, and the audit shows the delegation', async () => {
    const handle = await turnpike.startTurn({ text: use('wire_money', { amount: 900 }) });
    const [pending] = await waitForPending(handle);
    // bob is not in finance: he may not decide yet, nor may an outsider delegate.
    await expect(client.approveToolCall(handle.workflowId, { approvalId: pending.approvalId!, approved: true, approver: 'bob' })).rejects.toMatchObject({ type: 'ApproverNotAllowed' });
    await expect(
      client.delegateApproval(handle.workflowId, { approvalId: pending.approvalId!, approver: 'eve', approverGroups: ['ops'], to: { approvers: ['eve'] }, reason: 'mine now' }),
    ).rejects.toMatchObject({ type: 'ApproverNotAllowed' });

    const delegated = await client.delegateApproval(handle.workflowId, {
      approvalId: pending.approvalId!,
      approver: 'alice',
      approverGroups: ['finance'],
      to: { approvers: ['bob'] },
      reason: 'bob owns this vendor',
    });
    expect(delegated).toMatchObject({ approvalId: pending.approvalId, toolCallId: pending.toolCallId });
    await expect.poll(() => nudgesOf(pending.approvalId!, 'delegated').length, { timeout: 30_000 }).toBe(1);
    expect(nudgesOf(pending.approvalId!, 'delegated')[0].body.turnpike).toMatchObject({ added: { approvers: ['bob'] }, delegationReason: 'bob owns this vendor', sequence: 0 });
    const state = await waitForState(handle, (s) => (s.pending[0]?.progress?.delegations?.length ?? 0) === 1);
    expect(state.pending[0]).toMatchObject({ approvers: ['bob'], progress: { delegations: [{ from: 'alice', to: { approvers: ['bob'] }, reason: 'bob owns this vendor' }] } });

    await client.approveToolCall(handle.workflowId, { approvalId: pending.approvalId!, approved: true, approver: 'bob', reason: 'checked' });
    const result = await handle.result();
    expect(result.toolCalls).toMatchObject([{ outcome: 'approved', approval: { approver: 'bob' } }]);
    expect(runsOf(handle.workflowId)).toHaveLength(1);
    const [decision] = await client.listDecisions({ tool: 'wire_money' });
    expect(decision).toMatchObject({ turnWorkflowId: handle.workflowId, approver: 'bob', progress: { delegations: [{ from: 'alice', to: { approvers: ['bob'] } }] } });
    // The delegation was on the turn's stream before the decision.
    expect((await progressEvents(handle.workflowId)).map((event) => [event.change, event.progress.delegations?.map((d) => d.to)])).toEqual([['delegation', [{ approvers: ['bob'] }]]]);
  });
});
