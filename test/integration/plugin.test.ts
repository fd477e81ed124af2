/**
 * `TurnpikePlugin` on a Worker the user builds: the user's own workflows file (its workflow plus
 * turnpike's, re-exported) and its own activity, on its own task queue. The user's workflow runs
 * a turn as a child; decisions reach the child by its id; the parent gets the typed result.
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { Client } from '@temporalio/client';
import { Worker, type NativeConnection } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { TurnpikeClient } from '../../client/index.js';
import { TurnpikePlugin } from '../../worker/index.js';
import { noteStarted, saveStarted } from '../support/history-recorder.js';
import { executionsOf, testTools, use } from '../support/test-tools.js';
import { waitForPending } from '../support/turnpike-harness.js';
import { startUserWorker, type UserWorker } from '../support/user-worker.js';
import type { orderDesk } from '../support/user-workflows.js';

const USER_WORKFLOWS = fileURLToPath(new URL('../support/user-workflows.ts', import.meta.url));
const SCRIPTED = { provider: 'scripted' as const, model: 'demo' };

let user: UserWorker;
let nativeConnection: NativeConnection;
let client: Client;
let turnpike: TurnpikeClient;
const notes: string[] = [];
const taskQueue = `user-worker-${randomUUID()}`;

beforeAll(async () => {
  // The plugin on the Client too: turnpike's payload codec, so large results read back as JSON.
  user = await startUserWorker({ taskQueue, workflowsPath: USER_WORKFLOWS, activities: { recordOrderNote: async (note: string) => void notes.push(note) } });
  ({ nativeConnection, client, turnpike } = user);
});

afterAll(async () => {
  await saveStarted();
  await user?.stop();
});

/** The kinds of event in a workflow's history, by the attributes each event carries. */
async function historyEvents(workflowId: string): Promise<string[]> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? []).flatMap((event) => Object.keys(event).filter((key) => key.endsWith('EventAttributes') && event[key as keyof typeof event]));
}

describe('TurnpikePlugin on a user\'s own worker', () => {
  it.each([{ viaHandle: false }, { viaHandle: true }])('runs a child turn from the user\'s workflow that parks, is approved by its id, and returns its result (%o)', async ({ viaHandle }) => {
    const orderId = `order-${randomUUID()}`;
    const order = await client.workflow.start<typeof orderDesk>('orderDesk', {
      taskQueue,
      workflowId: orderId,
      args: [{ request: use('guarded_action', { target: 'prod-db', count: 2 }), model: SCRIPTED, viaHandle }],
    });
    const turnId = `${orderId}/agent`;
    const child = client.workflow.getHandle(turnId);
    noteStarted(child);
    const [pending] = await waitForPending(child);
    expect(pending).toMatchObject({ kind: 'approval', toolName: 'guarded_action', input: { target: 'prod-db', count: 2 } });
    // The parked turn is listed on the user's task queue like any other.
    await expect.poll(async () => (await turnpike.listParkedCalls()).map((call) => call.turnWorkflowId), { timeout: 10_000 }).toContain(turnId);

    await turnpike.approveToolCall(turnId, { approvalId: pending.approvalId!, approved: true, approver: 'alice' });
    const result = await order.result();
    expect(result.status).toBe('completed');
    expect(result.toolCalls).toMatchObject([{ toolName: 'guarded_action', outcome: 'approved', approval: { approver: 'alice', automatic: false } }]);
    expect(executionsOf(turnId)).toHaveLength(1);
    expect(notes).toContain(`turn ${turnId} ended completed`);

    // The parent awaited its child: the turn sent it no turnFinished signal (that is for conversations).
    expect(await historyEvents(turnId)).toContain('workflowExecutionCompletedEventAttributes');
    expect(await historyEvents(turnId)).not.toContain('signalExternalWorkflowExecutionInitiatedEventAttributes');
    expect(await historyEvents(orderId)).not.toContain('workflowExecutionSignaledEventAttributes');
  });

  it('refuses to start a worker whose own activities share a name with turnpike\'s', async () => {
    await expect(
      Worker.create({
        connection: nativeConnection,
        namespace: inject('temporalNamespace'),
        taskQueue: `clash-${randomUUID()}`,
        workflowsPath: USER_WORKFLOWS,
        activities: { callModel: async () => 'mine' },
        plugins: [new TurnpikePlugin({ tools: testTools })],
      }),
    ).rejects.toThrow(/already has activities named callModel/);
  });
});
