/**
 * A rightful decision sent through the HTTP API while the turn's worker does not answer: the
 * turn's workflow task is taken by a worker that stopped answering (played, as in
 * stalled-workflow-task.test.ts, by a poll of the task queue whose task is never answered) until
 * the task times out. Meanwhile the server buffers one query of the turn and refuses the others
 * ("consistent query buffer is full"), and updates wait.
 *
 * The API once asked a query to know whether the caller may decide (api/read-access.ts): a refused
 * one was read as "no" and the decision answered 404, as if the turn did not exist. Now the rights
 * of a parked turn come from its memo, and the API waits out Temporal's failures
 * (`transientPatienceMs`) on the decision's update: the decision is decided once the worker
 * answers; with too little patience it is answered 503 with `Retry-After`, and a retry is decided,
 * or told the first was (409) when the server held it and applied it after the API stopped waiting.
 * Each approved call runs once, and a reader of the turn reads across the stall to `turn-finished`.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseTokenMap } from '../../api/auth.js';
import { ReadAccess } from '../../api/read-access.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { turnStateQuery } from '../../workflows/messages/definitions.js';
import type { agentTurn } from '../../workflows/index.js';
import type { AgentTurnInput } from '../../workflows/types/turn.js';
import { serveApi, type ServedApi } from '../support/api-server.js';
import { readSseFrom } from '../support/sse-reader.js';
import { executionsOf, testTools, use } from '../support/test-tools.js';
import { startTurnpike, waitForPending, type TurnpikeHarness } from '../support/turnpike-harness.js';

/** Longer than one query's quick retries after a refusal (about 6 s, connection/query-retry.ts), well within the API's patience. */
const STALLED_TASK_TIMEOUT = '15s';
const TOKENS = parseTokenMap('bob-token:bob');

let harness: TurnpikeHarness;
/** The API as it runs by default: 30 s of patience. */
let patient: ServedApi;
/** An API whose patience ends before the stall does. */
let impatient: ServedApi;

beforeAll(async () => {
  harness = await startTurnpike({ tools: testTools });
  patient = await serveApi(harness, { tokens: TOKENS });
  impatient = await serveApi(harness, { tokens: TOKENS, client: new TurnpikeClient({ client: harness.client, taskQueue: harness.taskQueue, transientPatienceMs: 2_000 }) });
});

afterAll(async () => {
  await patient?.api.close();
  await impatient?.api.close();
  await harness?.stop();
});

async function decide(api: ServedApi, turnId: string, approvalId: string) {
  const response = await fetch(`${api.base}/api/turns/${encodeURIComponent(turnId)}/approvals/${encodeURIComponent(approvalId)}`, {
    method: 'POST',
    headers: { authorization: 'Bearer bob-token', 'content-type': 'application/json' },
    body: JSON.stringify({ approved: true }),
  });
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body: (await response.json()) as { error?: { type: string; message: string } } };
}

/**
 * Polls the turn's task queue as a worker that then stops answering. A query of the reader's that
 * reached the queue after the worker stopped comes first as a query-only task: it is left
 * unanswered too, and the poll goes on to the turn's workflow task (taking the query alone would
 * leave the workflow task to the live worker, and nothing would stall).
 */
async function takeWorkflowTaskAndNeverAnswer() {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const task = await harness.client.connection.withDeadline(deadline, () =>
      harness.client.workflowService.pollWorkflowTaskQueue({ namespace: inject('temporalNamespace'), taskQueue: { name: harness.taskQueue }, identity: 'stalled-worker' }),
    );
    if (!task.query && task.taskToken?.length) return task;
  }
}

describe('a rightful decision while the turn’s worker does not answer', () => {
  it('is decided once the worker answers (or answered 503 and decided when sent again), each call runs once, and a reader reads to the end', { timeout: 90_000 }, async () => {
    // Started by nobody through the API: bob may decide (and read) the turn only because its parked calls name him.
    const input: AgentTurnInput = {
      model: { provider: 'scripted', model: 'demo' },
      messages: [{ role: 'user', content: [use('guarded_action', { target: 'patient', count: 1 }), use('guarded_action', { target: 'impatient', count: 2 })].join(' and ') }],
    };
    const handle = await harness.client.workflow.start<typeof agentTurn>('agentTurn', { taskQueue: harness.taskQueue, workflowId: `turn-${randomUUID()}`, args: [input], workflowTaskTimeout: STALLED_TASK_TIMEOUT });
    const turnId = handle.workflowId;
    const [first, second] = await waitForPending(handle, 2);
    const reading = readSseFrom(`${patient.base}/api/turns/${encodeURIComponent(turnId)}/events`, { authorization: 'Bearer bob-token' }, (message) => message.event === 'end' || message.event === 'error');

    // The worker goes; a signal gives the turn a workflow task, which the stalled worker takes and never answers.
    await harness.stopWorker();
    await handle.signal('nudge');
    const stalled = await takeWorkflowTaskAndNeverAnswer();
    expect(stalled.workflowExecution?.workflowId).toBe(turnId);
    const stalledAt = Date.now();
    // A live worker, which gets the turn once the stalled task times out.
    await harness.startWorker();
    // One query waits in the turn's buffer (the only place), so the API's own are refused until the task times out.
    const buffered = harness.client.workflow.getHandle(turnId).query(turnStateQuery).catch(() => undefined);

    const [decided, refused] = await Promise.all([decide(patient, turnId, first!.approvalId!), decide(impatient, turnId, second!.approvalId!)]);
    // The impatient API gave up within the stall: 503 with Retry-After, never "no such turn".
    expect(refused.status, JSON.stringify(refused.body)).toBe(503);
    expect(refused.body.error?.type).toBe('Unavailable');
    expect(refused.body.error?.message).toMatch(/sending it again is safe/);
    expect(Number(refused.retryAfter)).toBeGreaterThan(0);
    // The patient one waited the stall out and was decided.
    expect(decided.status, JSON.stringify(decided.body)).toBe(200);
    expect(Date.now() - stalledAt).toBeGreaterThan(10_000);

    // Sent again once the worker answers, the refused decision is decided: by this request, or by the first one,
    // which the server held while the API stopped waiting for it (then this one is told it was decided).
    const again = await decide(impatient, turnId, second!.approvalId!);
    if (again.status !== 200) expect([again.status, again.body.error?.type], JSON.stringify(again.body)).toEqual([409, 'ApprovalAlreadyDecided']);
    // And once more: a duplicate is refused as decided, and runs nothing.
    const duplicate = await decide(patient, turnId, first!.approvalId!);
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.error?.type).toBe('ApprovalAlreadyDecided');

    const result = await handle.result();
    expect(result.status).toBe('completed');
    expect(result.toolCalls.map((call) => [call.outcome, call.approval?.approver])).toEqual([['approved', 'bob'], ['approved', 'bob']]);
    expect(executionsOf(turnId).map((execution) => (execution.input as { target: string }).target).sort()).toEqual(['impatient', 'patient']);
    await buffered;

    // The reader, opened before the stall, read across it to the turn's end.
    const { status, messages } = await reading;
    expect(status).toBe(200);
    expect(messages.filter((message) => message.event === 'error')).toEqual([]);
    const types = messages.filter((message) => message.event === 'message').map((message) => (JSON.parse(message.data) as { event: { type: string } }).event.type);
    expect(types.at(-1)).toBe('turn-finished');
    expect(messages.at(-1)?.event).toBe('end');
    // The stalled task did time out: the turn's history says so.
    const { events } = await handle.fetchHistory();
    expect(events?.some((event) => event.workflowTaskTimedOutEventAttributes)).toBe(true);
  });
});

describe('an approver’s rights on a parked turn', () => {
  it('are read from the turn’s memo: answered with no worker at all, for the approver and for a stranger, and after one of its calls is decided', { timeout: 60_000 }, async () => {
    const input: AgentTurnInput = {
      model: { provider: 'scripted', model: 'demo' },
      messages: [{ role: 'user', content: [use('guarded_action', { target: 'memo', count: 1 }), use('guarded_action', { target: 'memo', count: 2 })].join(' and ') }],
    };
    const handle = await harness.client.workflow.start<typeof agentTurn>('agentTurn', { taskQueue: harness.taskQueue, workflowId: `turn-${randomUUID()}`, args: [input] });
    const turnId = handle.workflowId;
    const [first, second] = await waitForPending(handle, 2);
    // One decided while the worker runs, so the memo holds a decision by bob and one parked call.
    const decider = new TurnpikeClient({ client: harness.client, taskQueue: harness.taskQueue });
    await decider.approveToolCall(turnId, { approvalId: first!.approvalId!, approved: true, approver: 'bob' });
    await waitForPending(handle, 1);

    // No worker polls now: a `turnState` query could not be answered, and with 1 s of patience a check that asked one would fail.
    await harness.stopWorker();
    try {
      const access = new ReadAccess(new TurnpikeClient({ client: harness.client, taskQueue: harness.taskQueue, transientPatienceMs: 1_000 }), { admins: [], adminGroups: [] });
      const bob = { identity: 'bob', groups: [] };
      const mallory = { identity: 'mallory', groups: [] };
      expect(await access.mayDecideApproval(bob, turnId, second!.approvalId!)).toBe(true);
      expect(await access.mayReadTurn(bob, turnId)).toBe(true);
      expect(await access.mayDecideApproval(mallory, turnId, second!.approvalId!)).toBe(false);
      expect(await access.mayReadTurn(mallory, turnId)).toBe(false);
    } finally {
      await harness.startWorker();
    }
    await decider.approveToolCall(turnId, { approvalId: second!.approvalId!, approved: false, approver: 'bob', reason: 'enough' });
    const result = await handle.result();
    expect(result.toolCalls.map((call) => call.outcome)).toEqual(['approved', 'denied']);
  });
});
