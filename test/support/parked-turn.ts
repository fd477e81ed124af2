/**
 * A turn parked on three calls (two approvals of `guarded_action`, one `pick_colour` client
 * call) for the hostile-message tests, what its history says about failed workflow tasks, and
 * the valid decisions that complete it.
 */
import type { WorkflowHandle } from '@temporalio/client';
import { expect } from 'vitest';
import { approveToolCallUpdate, submitToolResultUpdate } from '../../workflows/messages/definitions.js';
import type { agentTurn } from '../../workflows/index.js';
import type { PendingToolCall } from '../../workflows/types/index.js';
import { executionsOf, use } from './test-tools.js';
import { waitForPending, type TurnpikeHarness } from './turnpike-harness.js';

export interface ParkedTurn {
  handle: WorkflowHandle<typeof agentTurn>;
  approvals: PendingToolCall[];
  clientCall: PendingToolCall;
}

export async function parkTurn(turnpike: TurnpikeHarness): Promise<ParkedTurn> {
  const handle = await turnpike.startTurn({
    text: [use('guarded_action', { target: 'alpha', count: 1 }), use('guarded_action', { target: 'bravo', count: 2 }), use('pick_colour', { options: ['red', 'blue'] })].join(' and '),
  });
  const pending = await waitForPending(handle, 3);
  return { handle, approvals: pending.filter((call) => call.kind === 'approval'), clientCall: pending.find((call) => call.kind === 'client-tool')! };
}

/** The turn's history, with the events the hostile-message tests count. */
export async function historyOf(handle: WorkflowHandle) {
  const events = (await handle.fetchHistory()).events ?? [];
  return {
    events,
    failedTasks: events
      .filter((event) => event.workflowTaskFailedEventAttributes)
      .map(({ workflowTaskFailedEventAttributes: failed }) => `${failed!.cause}: ${failed!.failure?.message ?? '(no failure)'}`),
    acceptedUpdates: events.filter((event) => event.workflowExecutionUpdateAcceptedEventAttributes).length,
    signals: events.filter((event) => event.workflowExecutionSignaledEventAttributes && event.workflowExecutionSignaledEventAttributes.signalName !== '__temporal_workflow_stream_publish').length,
  };
}

/** Valid decisions for the calls still open; the turn completes and each approved call ran once. */
export async function completeTurn({ handle, approvals, clientCall }: ParkedTurn, decided: PendingToolCall[] = []): Promise<void> {
  await handle.executeUpdate(submitToolResultUpdate, { args: [{ toolCallId: clientCall.toolCallId, output: { colour: 'blue' } }] });
  for (const approval of approvals.filter((call) => !decided.includes(call))) {
    await handle.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: approval.approvalId!, approved: true, approver: 'bob' }] });
  }
  const result = await handle.result();
  expect(result.status).toBe('completed');
  expect(result.toolCalls.map((call) => call.outcome)).toEqual(['approved', 'approved', 'client']);
  expect(executionsOf(handle.workflowId).map((execution) => execution.toolName)).toEqual(['guarded_action', 'guarded_action']);
}
