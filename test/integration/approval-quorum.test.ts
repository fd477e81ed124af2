/**
 * Four eyes: a refund over the limit needs two people from finance, and the person who asked
 * for it is not one of them. On the real dev server, through the HTTP API with tokens from an
 * identity provider (approver and groups come from the token): the requester's vote is refused,
 * one vote leaves the call parked (and shows in turnState, the listing and the audit), two run
 * it once, also when they arrive at the same instant through two API servers or across a worker
 * restart; one denial denies; an edit restarts the votes; a second vote by the same person is
 * refused with its type.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startWorkerProcess, type WorkerProcess } from '../chaos/chaos-support.js';
import type { TurnEvent } from '../../workflows/types/turn-events.js';
import { buildApi } from '../../api/index.js';
import { runCli } from '../../cli/main.js';
import { TurnpikeClient } from '../../client/index.js';
import { startIdentityProvider, type IdentityProvider } from '../support/identity-provider.js';
import { financeRefundTool } from '../support/refund-tool.js';
import { use } from '../support/test-tools.js';
import { startTurnpike, waitForPending, waitForState, type TurnpikeHarness } from '../support/turnpike-harness.js';

const { tool: refund, runsOf } = financeRefundTool();

let turnpike: TurnpikeHarness;
let idp: IdentityProvider;
let apis: FastifyInstance[];
let client: TurnpikeClient;
/** Two HTTP API processes, each with its own Connection and TurnpikeClient, as behind a load balancer. */
let apiProcesses: WorkerProcess[] = [];

beforeAll(async () => {
  [turnpike, idp] = await Promise.all([startTurnpike({ tools: [refund] }), startIdentityProvider()]);
  client = new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue });
  // Two API servers, each with its own client, as two processes behind a load balancer would be.
  apis = await Promise.all(
    [0, 1].map(() =>
      buildApi({
        client: new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue }),
        oidc: { jwksUrl: idp.jwksUrl, issuer: idp.issuer, audience: idp.audience },
        access: { adminGroups: ['auditors'] },
      }),
    ),
  );
  const env = {
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_NAMESPACE: inject('temporalNamespace'),
    TURNPIKE_TASK_QUEUE: turnpike.taskQueue,
    API_OIDC: JSON.stringify({ jwksUrl: idp.jwksUrl, issuer: idp.issuer, audience: idp.audience }),
    API_ADMIN_GROUPS: 'auditors',
  };
  apiProcesses = await Promise.all([0, 1].map(() => startWorkerProcess(env, 'test/support/api-process.ts')));
}, 120_000);
afterAll(async () => {
  await Promise.all(apiProcesses.map((api) => api.terminate()));
  await Promise.all((apis ?? []).map((api) => api.close()));
  await idp?.close();
  await turnpike?.stop();
});

async function token(email: string, groups: string[] = ['finance']): Promise<string> {
  return idp.sign({ sub: email, email, groups });
}

async function vote(turnId: string, approvalId: string, email: string, body: Record<string, unknown>, server = 0) {
  const response = await apis[server].inject({
    method: 'POST',
    url: `/api/turns/${encodeURIComponent(turnId)}/approvals/${approvalId}`,
    headers: { authorization: `Bearer ${await token(email)}`, 'content-type': 'application/json' },
    payload: JSON.stringify(body),
  });
  return { status: response.statusCode, body: response.json() };
}

/** A vote over a real socket to one of the two API processes. */
async function voteThroughProcess(turnId: string, approvalId: string, email: string, body: Record<string, unknown>, process: number) {
  const { base } = apiProcesses[process].ready as unknown as { base: string };
  const response = await fetch(`${base}/api/turns/${encodeURIComponent(turnId)}/approvals/${approvalId}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${await token(email)}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as { votes?: { decided: boolean }; error?: { type: string } } };
}

async function eventsOf(turnId: string): Promise<TurnEvent[]> {
  const events: TurnEvent[] = [];
  for await (const record of client.turnEvents(turnId)) events.push(record.event);
  return events;
}

async function parkRefund(amount: number) {
  const handle = await turnpike.startTurn({ text: use('refund_order', { order: 'A-1001', amount }), startedBy: 'rita' });
  const [pending] = await waitForPending(handle);
  return { handle, pending };
}

describe('a quorum of two in finance, the requester excluded', () => {
  it("refuses the requester's vote, keeps one vote parked and shows it, refuses a second vote by the same person, and runs the call once on the second", async () => {
    const { handle, pending } = await parkRefund(12_000);
    expect(pending).toMatchObject({ approverGroups: ['finance'], progress: { quorum: 2, denials: 1, votes: [], excludedRequester: 'rita' } });

    const requester = await vote(handle.workflowId, pending.approvalId!, 'rita', { approved: true, inputHash: pending.inputHash });
    expect(requester).toMatchObject({ status: 409, body: { error: { type: 'RequesterMayNotDecide' } } });

    const first = await vote(handle.workflowId, pending.approvalId!, 'alice', { approved: true, reason: 'matches the ticket', inputHash: pending.inputHash });
    expect(first).toMatchObject({ status: 200, body: { approved: true, votes: { approvals: 1, quorum: 2, decided: false } } });
    const parked = await waitForState(handle, (state) => state.pending[0]?.progress?.votes.length === 1);
    expect(parked.status).toBe('awaiting-input');
    expect(parked.pending[0].progress!.votes).toEqual([
      { approver: 'alice', approverGroups: ['finance'], approved: true, reason: 'matches the ticket', votedAt: expect.any(String), inputHash: pending.inputHash },
    ]);
    expect(runsOf(handle.workflowId)).toHaveLength(0);

    // The listing (from the memo) shows the vote to the next approver.
    const listed = async () => {
      const response = await apis[1].inject({ url: '/api/approvals', headers: { authorization: `Bearer ${await token('bob')}` } });
      return (response.json() as { calls: Array<{ turnWorkflowId: string; progress?: { votes: Array<{ approver: string }> } }> }).calls.find((call) => call.turnWorkflowId === handle.workflowId);
    };
    await expect.poll(async () => (await listed())?.progress?.votes.map((v) => v.approver), { timeout: 15_000 }).toEqual(['alice']);

    const again = await vote(handle.workflowId, pending.approvalId!, 'alice', { approved: true, inputHash: pending.inputHash }, 1);
    expect(again).toMatchObject({ status: 409, body: { error: { type: 'AlreadyVoted' } } });

    // A worker restart between the two votes loses nothing: the first vote is in the turn's history.
    await turnpike.stopWorker();
    await turnpike.startWorker();

    const second = await vote(handle.workflowId, pending.approvalId!, 'bob', { approved: true, inputHash: pending.inputHash }, 1);
    expect(second).toMatchObject({ status: 200, body: { votes: { approvals: 2, quorum: 2, decided: true } } });
    const result = await handle.result();
    expect(result.toolCalls).toMatchObject([{ outcome: 'approved', approval: { approver: 'bob', automatic: false } }]);
    expect(runsOf(handle.workflowId)).toEqual([{ key: expect.any(String), input: { order: 'A-1001', amount: 12_000 } }]);

    // The audit has every vote on the one decision.
    const [decision] = result.decisions!;
    expect(decision).toMatchObject({ outcome: 'approved', approver: 'bob', inputHash: pending.inputHash });
    expect(decision.progress!.votes.map(({ approver, approved }) => ({ approver, approved }))).toEqual([
      { approver: 'alice', approved: true },
      { approver: 'bob', approved: true },
    ]);
    const audit = await apis[0].inject({ url: `/api/decisions?tool=refund_order`, headers: { authorization: `Bearer ${await token('auditor', ['auditors'])}` } });
    const audited = (audit.json() as { decisions: Array<{ turnWorkflowId: string; progress?: { votes: unknown[] } }> }).decisions.find((d) => d.turnWorkflowId === handle.workflowId);
    expect(audited?.progress?.votes).toHaveLength(2);
  });

  it('runs the call once when two votes arrive at the same instant through two API processes, and records both', async () => {
    const { handle, pending } = await parkRefund(15_000);
    const [carol, dave] = await Promise.all([
      voteThroughProcess(handle.workflowId, pending.approvalId!, 'carol', { approved: true, inputHash: pending.inputHash }, 0),
      voteThroughProcess(handle.workflowId, pending.approvalId!, 'dave', { approved: true, inputHash: pending.inputHash }, 1),
    ]);
    expect([carol.status, dave.status]).toEqual([200, 200]);
    expect([carol.body.votes!.decided, dave.body.votes!.decided].sort()).toEqual([false, true]);
    const result = await handle.result();
    expect(result.toolCalls).toMatchObject([{ outcome: 'approved' }]);
    expect(runsOf(handle.workflowId)).toHaveLength(1);
    expect(result.decisions!.map((decision) => decision.progress!.votes.map((v) => v.approver).sort())).toEqual([['carol', 'dave']]);

    // A finance member who did not vote in time is told the approval was decided (409), not that it does not exist.
    const late = await voteThroughProcess(handle.workflowId, pending.approvalId!, 'frank', { approved: true, inputHash: pending.inputHash }, 1);
    expect(late).toMatchObject({ status: 409, body: { error: { type: 'ApprovalAlreadyDecided' } } });
    expect(result.decisions![0].eligible).toEqual({ approverGroups: ['finance'] });
    // Someone who could never decide it still learns nothing of the turn.
    const stranger = await apis[0].inject({
      method: 'POST',
      url: `/api/turns/${encodeURIComponent(handle.workflowId)}/approvals/${pending.approvalId}`,
      headers: { authorization: `Bearer ${await token('mallory', ['sales'])}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ approved: true }),
    });
    expect(stranger.statusCode).toBe(404);
  });

  it('accepts one of two votes by the same approver at the same instant through two API processes, and refuses the other (AlreadyVoted)', async () => {
    const { handle, pending } = await parkRefund(16_000);
    const both = await Promise.all([0, 1].map((process) => voteThroughProcess(handle.workflowId, pending.approvalId!, 'grace', { approved: true, inputHash: pending.inputHash }, process)));
    expect(both.map((answer) => answer.status).sort()).toEqual([200, 409]);
    expect(both.find((answer) => answer.status === 409)!.body.error!.type).toBe('AlreadyVoted');
    const state = await waitForState(handle, (s) => s.pending[0]?.progress?.votes.length === 1);
    expect(state.pending[0].progress!.votes.map((v) => v.approver)).toEqual(['grace']);
    expect(runsOf(handle.workflowId)).toHaveLength(0);
    await handle.cancel();
  });

  it('publishes a vote that decides nothing yet on the turn stream (approval-progress), then the decision as its tool-result', async () => {
    const { handle, pending } = await parkRefund(17_000);
    expect((await vote(handle.workflowId, pending.approvalId!, 'alice', { approved: true, reason: 'ok', inputHash: pending.inputHash })).status).toBe(200);
    expect((await vote(handle.workflowId, pending.approvalId!, 'bob', { approved: true, inputHash: pending.inputHash })).status).toBe(200);
    await handle.result();
    const events = await eventsOf(handle.workflowId);
    const progress = events.filter((event): event is Extract<TurnEvent, { type: 'approval-progress' }> => event.type === 'approval-progress');
    // One event for alice's vote; bob's decided the call, and its event is the tool-result.
    expect(progress).toEqual([
      {
        type: 'approval-progress',
        step: 1,
        approvalId: pending.approvalId,
        toolCallId: pending.toolCallId,
        toolName: 'refund_order',
        change: 'vote',
        progress: { quorum: 2, denials: 1, excludedRequester: 'rita', votes: [expect.objectContaining({ approver: 'alice', approved: true, reason: 'ok' })] },
      },
    ]);
    const types = events.map((event) => event.type);
    expect(types.indexOf('approval-requested')).toBeLessThan(types.indexOf('approval-progress'));
    expect(types.indexOf('approval-progress')).toBeLessThan(types.indexOf('tool-result'));
  });

  it('denies on one denial, and the model is told why', async () => {
    const { handle, pending } = await parkRefund(20_000);
    expect((await vote(handle.workflowId, pending.approvalId!, 'alice', { approved: true })).status).toBe(200);
    const denial = await vote(handle.workflowId, pending.approvalId!, 'erin', { approved: false, reason: 'duplicate refund' });
    expect(denial).toMatchObject({ status: 200, body: { approved: false, votes: { approvals: 1, quorum: 2, decided: true } } });
    const result = await handle.result();
    expect(result.toolCalls).toMatchObject([{ outcome: 'denied', approval: { approver: 'erin', reason: 'duplicate refund' } }]);
    expect(JSON.stringify(result.toolCalls[0].output)).toContain('duplicate refund');
    expect(runsOf(handle.workflowId)).toHaveLength(0);
    expect(result.decisions![0].progress!.votes.map((v) => [v.approver, v.approved])).toEqual([
      ['alice', true],
      ['erin', false],
    ]);
  });

  it('restarts the votes on an edit, and runs the edited input the quorum approved', async () => {
    const { handle, pending } = await parkRefund(30_000);
    expect((await vote(handle.workflowId, pending.approvalId!, 'alice', { approved: true, inputHash: pending.inputHash })).status).toBe(200);
    const edited = { order: 'A-1001', amount: 25_000 };
    const edit = await vote(handle.workflowId, pending.approvalId!, 'bob', { approved: true, input: edited, inputHash: pending.inputHash });
    expect(edit).toMatchObject({ status: 200, body: { votes: { approvals: 1, quorum: 2, decided: false } } });
    const state = await waitForState(handle, (s) => s.pending[0]?.progress?.votes[0]?.approver === 'bob');
    const [call] = state.pending;
    expect(call.input).toEqual(edited);
    expect(call.inputHash).not.toBe(pending.inputHash);
    // A vote on what alice saw no longer applies; alice may vote again on the edit.
    expect(await vote(handle.workflowId, pending.approvalId!, 'carol', { approved: true, inputHash: pending.inputHash })).toMatchObject({ status: 409, body: { error: { type: 'InputHashMismatch' } } });
    expect((await vote(handle.workflowId, pending.approvalId!, 'alice', { approved: true, inputHash: call.inputHash })).body.votes).toEqual({ approvals: 2, quorum: 2, decided: true });
    await handle.result();
    expect(runsOf(handle.workflowId).map((run) => run.input)).toEqual([edited]);
  });
});

describe('the CLI', () => {
  async function cli(...argv: string[]) {
    const run = { stdout: '', stderr: '' };
    const code = await runCli(argv, {
      client,
      stdout: { write: (chunk: string) => (run.stdout += chunk), isTTY: false },
      stderr: { write: (chunk: string) => (run.stderr += chunk) },
    });
    return { code, ...run };
  }

  it('votes, shows the votes in pending and the audit, and refuses a second vote by the same person (exit 3)', async () => {
    const { handle, pending } = await parkRefund(11_000);
    const turnId = handle.workflowId;
    const first = await cli('approve', turnId, pending.approvalId!, '--as', 'alice', '--group', 'finance');
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('1/2 approvals; the call waits for more');
    const again = await cli('approve', turnId, pending.approvalId!, '--as', 'alice', '--group', 'finance');
    expect(again.code).toBe(3);
    expect(again.stderr).toContain('AlreadyVoted');
    await expect
      .poll(async () => (await cli('pending', '--query', `WorkflowId = '${turnId}'`)).stdout, { timeout: 15_000 })
      .toContain('1/2 approved (alice ✔)');
    const second = await cli('approve', turnId, pending.approvalId!, '--as', 'bob', '--group', 'finance');
    expect(second.stdout).toContain('✔ approved');
    await handle.result();
    const audit = await cli('decisions', '--tool', 'refund_order');
    expect(audit.stdout).toContain('2/2 approved (alice ✔, bob ✔)');
  });
});
