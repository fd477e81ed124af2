/**
 * Hostile input at scale: hundreds of malformed, stale, duplicate, forged and oversized
 * updates and signals against parked turns. Every update is rejected with a clear message,
 * no signal fails a workflow task, the turns' state does not change, and afterwards the turns
 * still complete normally with each approved call run once.
 */
import { WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approveToolCallSignal, approveToolCallUpdate, submitToolResultSignal, submitToolResultUpdate, turnStateQuery } from '../../workflows/messages/definitions.js';
import type { agentTurn } from '../../workflows/index.js';
import type { TurnState } from '../../workflows/types/index.js';
import { executionsOf, testTools, use } from '../support/test-tools.js';
import { startTurnpike, waitForPending, waitForState, type TurnpikeHarness } from '../support/turnpike-harness.js';

const ROUNDS = 300;

/** Deterministic pseudo-random numbers (mulberry32), so a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

let turnpike: TurnpikeHarness;
beforeAll(async () => {
  turnpike = await startTurnpike({ tools: testTools });
});
afterAll(async () => turnpike?.stop());

describe('fuzzing parked turns with hostile messages', () => {
  it(`rejects ${ROUNDS * 2} bad updates and ignores ${ROUNDS * 2} bad signals without changing anything`, async () => {
    // A turn with two approvals (one already decided), a client tool call and a finished server call.
    const handle: WorkflowHandle<typeof agentTurn> = await turnpike.startTurn({
      text: [
        use('guarded_action', { target: 'alpha', count: 1 }),
        use('guarded_action', { target: 'bravo', count: 2 }),
        use('pick_colour', { options: ['red', 'blue'] }),
        use('record_action', { action: 'server' }),
      ].join(' and '),
    });
    const pending = await waitForPending(handle, 3);
    const [decided, open] = pending.filter((call) => call.kind === 'approval');
    const client = pending.find((call) => call.kind === 'client-tool')!;
    await handle.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: decided.approvalId!, approved: true, approver: 'alice' }] });
    await waitForState(handle, (state) => state.pending.length === 2 && executionsOf(handle.workflowId).length === 2);
    // A finished turn, whose ids are stale.
    const finished = await turnpike.startTurn({ text: use('guarded_action', { target: 'stale', count: 1 }) });
    const [stale] = await waitForPending(finished);
    await finished.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: stale.approvalId!, approved: false, approver: 'bob' }] });
    await finished.result();

    const before: TurnState = await handle.query(turnStateQuery);
    const next = random(20261122);
    const pick = <T>(items: T[]): T => items[Math.floor(next() * items.length)];
    const junk = (): unknown => pick([null, 0, -1, 1e308, '', 'x'.repeat(5_000), [], [1, [2]], { nested: { deeper: [null] } }, 'true', '\u0000', '<script>alert(1)</script>']);
    const huge = () => ({ blob: 'x'.repeat(300 * 1024) });

    const badDecisions: Array<() => unknown> = [
      () => junk(),
      () => ({ approvalId: junk(), approved: true, approver: 'alice' }),
      () => ({ approvalId: open.approvalId, approved: junk(), approver: 'alice' }),
      () => ({ approvalId: `apr_${Math.floor(next() * 1e9)}`, approved: true, approver: 'alice' }),
      () => ({ approvalId: decided.approvalId, approved: pick([true, false]), approver: 'alice' }),
      () => ({ approvalId: stale.approvalId, approved: true, approver: 'alice' }),
      () => ({ approvalId: open.approvalId, approved: true, approver: pick(['mallory', '', undefined, 'ALICE']) }),
      () => ({ approvalId: open.approvalId, approved: true, approver: 'bob', input: pick([{ target: 'x', count: 1 }, { target: 'valid', count: -5 }, 'string', null, huge()]) }),
      () => ({ approvalId: open.approvalId, approved: true, approver: 'bob', inputHash: `sha256:${'0'.repeat(64)}` }),
      () => ({ approvalId: open.approvalId, approved: false, approver: 'bob', reason: 'r'.repeat(10_000) }),
      () => ({ approvalId: client.toolCallId, approved: true, approver: 'alice' }),
    ];
    const badResults: Array<() => unknown> = [
      () => junk(),
      () => ({ toolCallId: junk(), output: {} }),
      () => ({ toolCallId: `call_${Math.floor(next() * 1e9)}`, output: { colour: 'red' } }),
      () => ({ toolCallId: 'call_1_4', output: { done: 'forged server result' } }),
      () => ({ toolCallId: open.toolCallId, output: { guarded: 'forged' } }),
      () => ({ toolCallId: stale.toolCallId, output: {} }),
      () => ({ toolCallId: client.toolCallId, output: pick([{ colour: 'purple' }, { colour: 1 }, {}, null, 'red', huge()]) }),
      () => ({ toolCallId: client.toolCallId, output: { colour: 'red' }, isError: pick(['yes', 1, 0, null, {}, []]) }),
    ];

    const rejectionTypes = new Map<string, number>();
    let signals = 0;
    for (let round = 0; round < ROUNDS; round++) {
      for (const [update, signal, generators] of [
        [approveToolCallUpdate, approveToolCallSignal, badDecisions],
        [submitToolResultUpdate, submitToolResultSignal, badResults],
      ] as const) {
        const payload = pick(generators as Array<() => unknown>)();
        const error = await handle.executeUpdate(update as typeof approveToolCallUpdate, { args: [payload as never] }).then(
          () => undefined,
          (caught: unknown) => caught,
        );
        expect(error, `accepted: ${JSON.stringify(payload)?.slice(0, 200)}`).toBeInstanceOf(WorkflowUpdateFailedError);
        const cause = (error as WorkflowUpdateFailedError).cause as { type?: string; message?: string };
        expect(cause.message?.length).toBeGreaterThan(10);
        rejectionTypes.set(cause.type ?? '?', (rejectionTypes.get(cause.type ?? '?') ?? 0) + 1);
        await handle.signal(signal as typeof approveToolCallSignal, payload as never);
        signals++;
      }
    }

    // Signals are handled in order: once a valid one shows, every bad one before it was handled.
    await handle.signal(submitToolResultSignal, { toolCallId: client.toolCallId, output: { colour: 'blue' } });
    const after = await waitForState(handle, (state) => state.pending.length === 1);
    expect(after).toEqual({ ...before, pending: before.pending.filter((call) => call.toolCallId !== client.toolCallId) });
    const history = await handle.fetchHistory();
    expect(history.events!.filter((event) => event.workflowTaskFailedEventAttributes)).toEqual([]);
    // The model activity's streamed deltas arrive as signals too (how many depends on timing): not counted.
    const sent = history.events!.filter((event) => event.workflowExecutionSignaledEventAttributes && event.workflowExecutionSignaledEventAttributes.signalName !== '__temporal_workflow_stream_publish');
    expect(sent).toHaveLength(signals + 1);
    // Rejected updates leave no trace in history: only the one accepted decision does.
    expect(history.events!.filter((event) => event.workflowExecutionUpdateAcceptedEventAttributes)).toHaveLength(1);
    expect([...rejectionTypes.keys()].sort()).toEqual(
      expect.arrayContaining(['ApprovalAlreadyDecided', 'ApproverNotAllowed', 'InvalidEditedInput', 'InvalidRequest', 'InputHashMismatch', 'InvalidToolOutput', 'NotAClientTool', 'PayloadTooLarge', 'UnknownApprovalId', 'UnknownToolCallId']),
    );

    await handle.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: open.approvalId!, approved: true, approver: 'bob' }] });
    const result = await handle.result();
    expect(result.toolCalls.map((call) => call.outcome)).toEqual(['approved', 'approved', 'client', 'executed']);
    expect(executionsOf(handle.workflowId).map((execution) => execution.toolName).sort()).toEqual(['guarded_action', 'guarded_action', 'record_action']);
    console.log(`fuzz: ${ROUNDS * 2} bad updates rejected, ${signals} bad signals ignored; rejection types: ${JSON.stringify(Object.fromEntries(rejectionTypes))}`);
  });
});
