/**
 * The agentTurn workflow on a real Temporal dev server with a real Worker: every tool kind,
 * every way a parked call settles, and every way a message to a parked turn is rejected.
 */
import { WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  approveToolCallSignal,
  approveToolCallUpdate,
  submitToolResultSignal,
  submitToolResultUpdate,
  turnStateQuery,
} from '../../workflows/messages/definitions.js';
import type { AgentTurnResult, Message, ToolMessage, TurnState } from '../../workflows/types/index.js';
import { recordAs } from '../support/history-recorder.js';
import { executionsOf, testTools, use } from '../support/test-tools.js';
import { startTurnpike, waitForPending, waitForState, type TurnpikeHarness } from '../support/turnpike-harness.js';

let turnpike: TurnpikeHarness;
beforeAll(async () => {
  turnpike = await startTurnpike({ tools: testTools });
});
afterAll(async () => turnpike?.stop());

/** Every tool call in `messages` is answered by exactly one result, in the next tool message. */
function expectEveryCallAnsweredOnce(messages: Message[]): void {
  messages.forEach((message, index) => {
    if (message.role !== 'assistant') return;
    const callIds = message.content.flatMap((part) => (part.type === 'tool-call' ? [part.toolCallId] : []));
    if (callIds.length === 0) return;
    const next = messages[index + 1] as ToolMessage | undefined;
    expect(next?.role).toBe('tool');
    expect(next!.content.map((result) => result.toolCallId)).toEqual(callIds);
  });
}

function toolResults(result: AgentTurnResult): ToolMessage['content'] {
  return result.messages.flatMap((message) => (message.role === 'tool' ? message.content : []));
}

async function historyLength(handle: WorkflowHandle): Promise<number> {
  return (await handle.fetchHistory()).events?.length ?? 0;
}

/** Expects the update to be rejected with `type` and a message matching `message`. */
async function expectRejected(promise: Promise<unknown>, type: string, message: RegExp): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(WorkflowUpdateFailedError);
  const cause = (error as WorkflowUpdateFailedError).cause as { type?: string; message: string };
  expect(cause.type).toBe(type);
  expect(cause.message).toMatch(message);
}

describe('tool kinds', () => {
  it('runs a server tool at once and gives the model its output', async () => {
    const handle = await turnpike.startTurn({ text: use('record_action', { action: 'wave' }) });
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'completed', steps: 2 });
    expect(result.toolCalls).toEqual([
      { toolCallId: 'call_1_1', toolName: 'record_action', input: { action: 'wave' }, outcome: 'executed', output: { done: 'wave' }, isError: false },
    ]);
    expect(result.text).toContain('"done":"wave"');
    expect(executionsOf(handle.workflowId)).toHaveLength(1);
  });

  it('runs an approved call once, after the decision, with the approver recorded', async () => {
    const handle = await turnpike.startTurn({ text: use('guarded_action', { target: 'prod', count: 2 }) });
    const [pending] = await waitForPending(handle);
    expect(pending).toMatchObject({ kind: 'approval', toolName: 'guarded_action', input: { target: 'prod', count: 2 } });
    expect(pending.approvalId).toMatch(/^apr_/);
    expect(pending.approvalId).not.toBe(pending.toolCallId);
    expect(pending.inputHash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(executionsOf(handle.workflowId)).toHaveLength(0);

    await handle.executeUpdate(approveToolCallUpdate, {
      args: [{ approvalId: pending.approvalId!, approved: true, approver: 'alice', reason: 'looks right', inputHash: pending.inputHash }],
    });
    const result = await handle.result();
    expect(result.toolCalls[0]).toMatchObject({
      outcome: 'approved',
      output: { guarded: 'prod', count: 2 },
      approval: { approvalId: pending.approvalId, approved: true, automatic: false, approver: 'alice', reason: 'looks right' },
    });
    expect(executionsOf(handle.workflowId)).toHaveLength(1);
  });

  it('runs an approved call with the input the approver edited', async () => {
    const handle = await turnpike.startTurn({ text: use('guarded_action', { target: 'prod', count: 2 }) });
    const [pending] = await waitForPending(handle);
    await handle.executeUpdate(approveToolCallUpdate, {
      args: [{ approvalId: pending.approvalId!, approved: true, approver: 'bob', input: { target: 'staging', count: 1 } }],
    });
    const result = await handle.result();
    expect(result.toolCalls[0]).toMatchObject({ outcome: 'approved', input: { target: 'staging', count: 1 }, output: { guarded: 'staging', count: 1 } });
    expect(executionsOf(handle.workflowId).map((execution) => execution.input)).toEqual([{ target: 'staging', count: 1 }]);
  });

  it('denies an approval with a reason that reaches the model, and never runs the tool', async () => {
    const handle = await turnpike.startTurn({ text: use('guarded_action', { target: 'prod', count: 2 }) });
    const [pending] = await waitForPending(handle);
    await handle.executeUpdate(approveToolCallUpdate, {
      args: [{ approvalId: pending.approvalId!, approved: false, approver: 'alice', reason: 'not during the freeze' }],
    });
    const result = await handle.result();
    expect(result.toolCalls[0]).toMatchObject({ outcome: 'denied', isError: true, approval: { approved: false, automatic: false, reason: 'not during the freeze' } });
    expect(toolResults(result)[0]).toMatchObject({ isError: true, output: expect.stringContaining('not during the freeze') });
    expect(result.text).toContain('not during the freeze');
    expect(executionsOf(handle.workflowId)).toHaveLength(0);
  });

  it('denies an approval that expires and tells the model why', async () => {
    const handle = await turnpike.startTurn({ text: use('guarded_action', { target: 'prod', count: 2 }), approvalTimeout: '1s' });
    const result = await handle.result();
    expect(result.toolCalls[0]).toMatchObject({ outcome: 'expired', isError: true, approval: { approved: false, automatic: true } });
    expect(toolResults(result)[0].output).toMatch(/expired after 1s without a decision/);
    expect(executionsOf(handle.workflowId)).toHaveLength(0);
    const state = await handle.query(turnStateQuery);
    expect(state).toMatchObject({ status: 'completed', pending: [] });
  });

  it('records automatic approvals and denials from a policy like human ones', async () => {
    const handle = await turnpike.startTurn({ text: 'refund $50 on order 1003 and refund $9000 on order 1001' });
    const result = await handle.result();
    expect(result.toolCalls.map((call) => [call.outcome, call.approval?.automatic, call.approval?.approved])).toEqual([
      ['approved', true, true],
      ['denied', true, false],
    ]);
    expect(result.toolCalls[0].approval?.approvalId).toMatch(/^apr_/);
    expect(result.toolCalls[1].output).toMatch(/above the maximum refund/);
  });

  it('parks a client tool until the caller submits its result', async () => {
    const handle = await turnpike.startTurn({ text: 'ask me "which size?"' });
    const [pending] = await waitForPending(handle);
    expect(pending).toMatchObject({ kind: 'client-tool', toolName: 'ask_user', input: { question: 'which size?' } });
    expect(pending.approvalId).toBeUndefined();
    await handle.executeUpdate(submitToolResultUpdate, { args: [{ toolCallId: pending.toolCallId, output: { answer: 'large' } }] });
    const result = await handle.result();
    expect(result.toolCalls[0]).toMatchObject({ outcome: 'client', output: { answer: 'large' }, isError: false });
    expect(result.text).toContain('large');
  });

  it('gives an expired client tool call an error result', async () => {
    const handle = await turnpike.startTurn({ text: 'ask me "which size?"', clientToolTimeout: '1s' });
    const result = await handle.result();
    expect(result.toolCalls[0]).toMatchObject({ outcome: 'expired', isError: true });
    expect(toolResults(result)[0].output).toMatch(/did not return a result .* within 1s/);
  });

  it('settles a mixed step in parallel: the server tool runs before the decision, the model is called once after all three', async () => {
    const handle = await turnpike.startTurn({
      text: `${use('record_action', { action: 'prepare' })} and ${use('guarded_action', { target: 'prod', count: 1 })} and ask me "ready?"`,
    });
    const pending = await waitForPending(handle, 2);
    expect(pending.map((call) => call.kind).sort()).toEqual(['approval', 'client-tool']);
    // The server tool did not wait for the person.
    await waitForState(handle, () => executionsOf(handle.workflowId).length === 1);
    expect((await handle.query(turnStateQuery)).step).toBe(1);

    const approval = pending.find((call) => call.kind === 'approval')!;
    const client = pending.find((call) => call.kind === 'client-tool')!;
    await handle.executeUpdate(submitToolResultUpdate, { args: [{ toolCallId: client.toolCallId, output: { answer: 'yes' } }] });
    expect((await handle.query(turnStateQuery)).step).toBe(1);
    await handle.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: approval.approvalId!, approved: true, approver: 'alice' }] });

    const result = await handle.result();
    expect(result.steps).toBe(2);
    const [, toolMessage] = result.messages as [Message, ToolMessage];
    expect(toolMessage.content.map((part) => [part.toolCallId, part.toolName])).toEqual([
      ['call_1_1', 'record_action'],
      ['call_1_2', 'guarded_action'],
      ['call_1_3', 'ask_user'],
    ]);
    expect(result.toolCalls.map((call) => call.outcome)).toEqual(['executed', 'approved', 'client']);
    const history = await handle.fetchHistory();
    const modelCalls = history.events!.filter((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel');
    expect(modelCalls).toHaveLength(2);
    expectEveryCallAnsweredOnce([...[{ role: 'user', content: '' } as Message], ...result.messages]);
  });
});

describe('model mistakes become error results the model can correct', () => {
  it('answers an unknown tool and invalid input with error results, and runs nothing', async () => {
    const handle = await turnpike.startTurn({
      text: `${use('no_such_tool', {})} and ${use('record_action', { action: 42 })} and ${use('guarded_action', { target: 'x', count: -1 })}`,
    });
    const result = await handle.result();
    expect(result.status).toBe('completed');
    expect(result.toolCalls.map((call) => call.outcome)).toEqual(['error', 'error', 'error']);
    const outputs = toolResults(result).map((part) => String(part.output));
    expect(outputs[0]).toMatch(/Unknown tool "no_such_tool"\. Available tools: .*record_action/);
    expect(outputs[1]).toMatch(/Invalid input for tool "record_action"[\s\S]*action/);
    expect(outputs[2]).toMatch(/Invalid input for tool "guarded_action"/);
    // Invalid input never reaches the approval step.
    expect((await handle.query(turnStateQuery)).pending).toEqual([]);
    expect(executionsOf(handle.workflowId)).toHaveLength(0);
  });

  it('answers malformed JSON arguments with an error result', async () => {
    const handle = await turnpike.startTurn({ text: 'use record_action with {"action": "oops"' });
    const result = await handle.result();
    expect(result.toolCalls[0]).toMatchObject({ outcome: 'error', isError: true });
    expect(String(result.toolCalls[0].output)).toMatch(/not valid JSON/);
  });

  it('retries a failing tool with the same idempotency key, and reports a tool that keeps failing', async () => {
    const handle = await turnpike.startTurn({ text: `${use('flaky_action', { action: 'sync' })} and ${use('broken_action', {})}` });
    const result = await handle.result();
    expect(result.toolCalls[0]).toMatchObject({ outcome: 'executed', output: { done: 'sync', attempt: 2 } });
    expect(result.toolCalls[1]).toMatchObject({ outcome: 'error', isError: true, output: expect.stringContaining('the backend is down') });
    const flaky = executionsOf(handle.workflowId).filter((execution) => execution.toolName === 'flaky_action');
    expect(flaky.map((execution) => execution.attempt)).toEqual([1, 2]);
    expect(new Set(flaky.map((execution) => execution.idempotencyKey))).toEqual(new Set([`${handle.workflowId}/call_1_1`]));
  });

  it('stops at maxSteps with a history that is still valid input', async () => {
    const handle = await turnpike.startTurn({
      text: `${use('record_action', { action: 'a' })} then ${use('record_action', { action: 'b' })} then ${use('record_action', { action: 'c' })}`,
      maxSteps: 2,
    });
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'max-steps', steps: 2 });
    expect(result.messages.at(-1)?.role).toBe('tool');
    expectEveryCallAnsweredOnce(result.messages);
  });
});

describe('messages to a parked turn that are rejected change nothing', () => {
  let handle: WorkflowHandle;
  let pending: TurnState['pending'];
  let before: { state: TurnState; events: number };

  beforeAll(async () => {
    // Two approvals and two client calls, so one of each can be settled while the turn stays parked.
    recordAs('messages to a parked turn that are rejected');
    handle = await turnpike.startTurn({
      text: [
        use('guarded_action', { target: 'one', count: 1 }),
        use('guarded_action', { target: 'two', count: 2 }),
        use('pick_colour', { options: ['red', 'blue'] }),
        'ask me "anything else?"',
        use('record_action', { action: 'now' }),
      ].join(' and '),
    });
    pending = await waitForPending(handle, 4);
    await handle.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: pending[0].approvalId!, approved: true, approver: 'alice' }] });
    await handle.executeUpdate(submitToolResultUpdate, { args: [{ toolCallId: pending[3].toolCallId, output: { answer: 'no' } }] });
    await waitForState(handle, (state) => state.pending.length === 2 && executionsOf(handle.workflowId).length === 2);
    before = { state: await handle.query(turnStateQuery), events: await historyLength(handle) };
    recordAs(undefined);
  });

  afterAll(async () => {
    await handle.cancel();
  });

  it.each([
    ['an unknown approvalId', () => ({ approvalId: 'apr_nope', approved: true, approver: 'alice' }), 'UnknownApprovalId', /^Unknown approvalId \(8 characters\): this turn has no approval with this id$/],
    ['a second decision for the same approval', () => ({ approvalId: pending[0].approvalId!, approved: false, approver: 'alice' }), 'ApprovalAlreadyDecided', /already decided/],
    ['an approver outside the allow-list', () => ({ approvalId: pending[1].approvalId!, approved: true, approver: 'mallory' }), 'ApproverNotAllowed', /^The approver \(7 characters\) may not decide "guarded_action"; allowed: alice, bob$/],
    ['a decision without an approver when the tool has an allow-list', () => ({ approvalId: pending[1].approvalId!, approved: true }), 'ApproverNotAllowed', /^A decision without an approver may not decide/],
    ['an edited input that fails the schema', () => ({ approvalId: pending[1].approvalId!, approved: true, approver: 'bob', input: { target: 'x', count: 0 } }), 'InvalidEditedInput', /fails its schema/],
    ['a decision for an input other than the one shown', () => ({ approvalId: pending[1].approvalId!, approved: true, approver: 'bob', inputHash: 'sha256:0000' }), 'InputHashMismatch', /inputHash does not match/],
    ['a malformed decision', () => ({ approvalId: pending[1].approvalId!, approved: 'yes' }), 'InvalidRequest', /approved: .*boolean/],
  ])('rejects %s', async (_name, request, type, message) => {
    await expectRejected(handle.executeUpdate(approveToolCallUpdate, { args: [request() as never] }), type, message);
    expect(await handle.query(turnStateQuery)).toEqual(before.state);
    expect(await historyLength(handle)).toBe(before.events);
  });

  it.each([
    ['an unknown toolCallId', () => ({ toolCallId: 'call_nope', output: {} }), 'UnknownToolCallId', /^Unknown toolCallId \(9 characters\): this turn has no tool call with this id$/],
    ['a result for an already-settled call', () => ({ toolCallId: pending[3].toolCallId, output: { answer: 'again' } }), 'ToolCallAlreadySettled', /already settled/],
    ['a result for a server tool call', () => ({ toolCallId: 'call_1_5', output: { done: 'forged' } }), 'NotAClientTool', /not a client tool call/],
    ['a result for a call awaiting approval', () => ({ toolCallId: pending[1].toolCallId, output: { guarded: 'forged' } }), 'NotAClientTool', /not a client tool call/],
    ['output that fails the output schema', () => ({ toolCallId: pending[2].toolCallId, output: { colour: 'purple' } }), 'InvalidToolOutput', /fails its output schema/],
    ['a malformed result', () => ({ output: {} }), 'InvalidRequest', /toolCallId/],
  ])('rejects %s', async (_name, request, type, message) => {
    await expectRejected(handle.executeUpdate(submitToolResultUpdate, { args: [request() as never] }), type, message);
    expect(await handle.query(turnStateQuery)).toEqual(before.state);
    expect(await historyLength(handle)).toBe(before.events);
  });

  it('ignores invalid signals without failing the workflow task, and applies the valid one after them', async () => {
    await handle.signal(approveToolCallSignal, { approvalId: 'apr_nope', approved: true });
    await handle.signal(approveToolCallSignal, 'garbage' as never);
    await handle.signal(submitToolResultSignal, { toolCallId: pending[2].toolCallId, output: { colour: 'purple' } });
    await handle.signal(submitToolResultSignal, null as never);
    // Signals are handled in order: once this valid one shows, the invalid ones were handled.
    await handle.signal(submitToolResultSignal, { toolCallId: pending[2].toolCallId, output: { colour: 'red' } });
    const state = await waitForState(handle, (current) => current.pending.length === 1);
    expect(state).toEqual({ ...before.state, pending: before.state.pending.filter((call) => call.toolCallId !== pending[2].toolCallId) });
    const history = await handle.fetchHistory();
    expect(history.events!.some((event) => event.workflowTaskFailedEventAttributes)).toBe(false);
  });
});

describe('parking across workers and cancellation', () => {
  it('resumes a parked turn on a new worker after its worker stopped (the approval is not lost)', async () => {
    const handle = await turnpike.startTurn({ text: use('guarded_action', { target: 'restart', count: 1 }) });
    const [pending] = await waitForPending(handle);
    await turnpike.stopWorker();
    try {
      // No worker: the update is accepted only when a worker picks it up, so send it as a signal.
      await handle.signal(approveToolCallSignal, { approvalId: pending.approvalId!, approved: true, approver: 'alice' });
    } finally {
      await turnpike.startWorker();
    }
    const result = await handle.result();
    expect(result.toolCalls[0]).toMatchObject({ outcome: 'approved', approval: { approver: 'alice' } });
    expect(executionsOf(handle.workflowId)).toHaveLength(1);
  });

  it('cancels a parked turn: every open call gets a cancelled result and the history stays valid', async () => {
    const handle = await turnpike.startTurn({ text: `${use('record_action', { action: 'before' })} and ${use('guarded_action', { target: 'prod', count: 1 })} and ask me "still there?"` });
    await waitForPending(handle, 2);
    await waitForState(handle, () => executionsOf(handle.workflowId).length === 1);
    await handle.cancel();
    const result = await handle.result();
    expect(result.status).toBe('cancelled');
    expect(result.toolCalls.map((call) => call.outcome)).toEqual(['executed', 'cancelled', 'cancelled']);
    expect(String(result.toolCalls[1].output)).toMatch(/cancelled while "guarded_action" waited for approval; the tool did not run/);
    expectEveryCallAnsweredOnce(result.messages);
    expect(await handle.query(turnStateQuery)).toMatchObject({ status: 'cancelled', pending: [] });
    expect(executionsOf(handle.workflowId)).toHaveLength(1);
  });
});
