/**
 * A turn cancelled while it calls a remote A2A agent (`defineA2aAgentTool`) cancels the remote
 * task too, on the dev server, against remote agents served by `@a2a-js/sdk`'s own server classes
 * (test/support/a2a-remote-agent.ts): the remote task reaches `canceled` in the remote's task
 * store, and the turn ends cancelled with one result per call. Also: two calls of one step, an
 * answer to a remote task's question (the task answered is cancelled), a
 * remote that lists no tasks (nothing to cancel: the turn still ends, bounded), and a turn
 * cancelled while no worker runs (the cancellation waits for the next worker).
 */
import { TaskState } from '@a2a-js/sdk';
import type { WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineA2aAgentTool } from '../../activities/a2a-remote/a2a-agent-tool.js';
import { REMOTE_CANCEL_PATCH } from '../../workflows/turn/cancel-running-calls.js';
import type { agentTurn } from '../../workflows/index.js';
import type { AgentTurnResult } from '../../workflows/types/index.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { startRemoteAgent, type RemoteAgent } from '../support/a2a-remote-agent.js';
import { startTurnpike, type TurnpikeHarness } from '../support/turnpike-harness.js';
import { until } from '../support/until.js';

let turnpike: TurnpikeHarness;
/** Behind `warehouse`. */
let warehouse: RemoteAgent;
/** Behind `unlisted_warehouse`, which refuses `ListTasks` (as turnpike's own A2A server does). */
let unlisted: RemoteAgent;

beforeAll(async () => {
  [warehouse, unlisted] = await Promise.all([startRemoteAgent(), startRemoteAgent()]);
  unlisted.forge = (method, answer) => (method === 'ListTasks' ? { jsonrpc: '2.0', id: answer.id, error: { code: -32004, message: 'ListTasks is not served here' } } : answer);
  const options = { pollInterval: '200ms', timeout: '1m' };
  turnpike = await startTurnpike({
    tools: [
      defineA2aAgentTool({ name: 'warehouse', url: warehouse.url, description: 'Answers questions about orders.', ...options }),
      defineA2aAgentTool({ name: 'unlisted_warehouse', url: unlisted.url, description: 'Answers too, and lists nothing.', ...options }),
    ],
  });
}, 180_000);

afterAll(async () => {
  for (const agent of [warehouse, unlisted]) {
    agent?.openLatch();
    await agent?.close();
  }
  await turnpike?.stop();
});

function use(tool: string, input: unknown): string {
  return `use ${tool} with ${JSON.stringify(input)}`;
}

/** Starts a turn whose calls follow remote tasks that stay working, and waits until each has been read. */
async function following(agent: RemoteAgent, text: string, tasks: number): Promise<{ handle: WorkflowHandle<typeof agentTurn>; taskIds: string[] }> {
  const before = agent.created.length;
  const reads = () => agent.methods.filter((method) => method === 'GetTask').length;
  const readsBefore = reads();
  const handle = await turnpike.startTurn({ text });
  await until(() => agent.created.length === before + tasks && reads() >= readsBefore + 2 * tasks);
  return { handle, taskIds: agent.created.slice(before) };
}

async function stateOf(agent: RemoteAgent, taskId: string): Promise<TaskState | undefined> {
  return (await agent.stored(taskId))?.status?.state;
}

/** The `cancelToolCall` activities of the turn's history: their results, decoded. */
async function cancelNotes(handle: WorkflowHandle): Promise<{ scheduled: number; notes: string[]; patched: boolean }> {
  const { events } = await handle.fetchHistory();
  const scheduledIds = new Set(events!.filter((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'cancelToolCall').map((event) => String(event.eventId)));
  const notes: string[] = [];
  for (const event of events!) {
    const completed = event.activityTaskCompletedEventAttributes;
    if (!completed || !scheduledIds.has(String(completed.scheduledEventId))) continue;
    const [payload] = completed.result!.payloads!;
    notes.push(String(defaultPayloadConverter.fromPayload(payload as never)));
  }
  const patched = events!.some((event) => {
    const marker = event.markerRecordedEventAttributes;
    return marker?.markerName === 'core_patch' && Buffer.from(marker.details!['patch-data']!.payloads![0]!.data!).toString('utf8').includes(REMOTE_CANCEL_PATCH);
  });
  return { scheduled: scheduledIds.size, notes, patched };
}

/** One result per call, each cancelled, in the turn's result and in the tool message the next turn gets. */
function expectEveryCallCancelled(result: AgentTurnResult, calls: number): void {
  expect(result.status).toBe('cancelled');
  expect(result.toolCalls).toHaveLength(calls);
  for (const call of result.toolCalls) {
    expect(call).toMatchObject({ outcome: 'cancelled', isError: true });
    expect(String(call.output)).toMatch(/^The turn was cancelled while "\w+" was running; it may or may not have taken effect\.$/);
  }
  const toolMessage = result.messages.at(-1)!;
  expect(toolMessage.role).toBe('tool');
  expect(toolMessage.role === 'tool' && toolMessage.content.map((part) => part.toolCallId)).toEqual(result.toolCalls.map((call) => call.toolCallId));
}

describe('a turn cancelled while it follows a remote A2A task', () => {
  it('cancels the remote task on the remote agent, and ends cancelled with one result for the call', async () => {
    const { handle, taskIds } = await following(warehouse, use('warehouse', { message: 'wait: pack order 1001' }), 1);
    expect(await stateOf(warehouse, taskIds[0]!)).toBe(TaskState.TASK_STATE_WORKING);
    const methodsBefore = warehouse.methods.length;
    await new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue }).turn(handle.workflowId).cancel();
    const result = await handle.result();
    expectEveryCallCancelled(result, 1);
    expect(await stateOf(warehouse, taskIds[0]!)).toBe(TaskState.TASK_STATE_CANCELED);
    // Found by the call's message among the remote's tasks, then cancelled, once.
    expect(warehouse.methods.slice(methodsBefore).filter((method) => method !== 'GetTask')).toEqual(['ListTasks', 'CancelTask']);
    const { scheduled, notes, patched } = await cancelNotes(handle);
    expect(scheduled).toBe(1);
    expect(notes).toEqual([`The remote task ${taskIds[0]} was asked to cancel; it is canceled.`]);
    expect(patched).toBe(true);
  });

  it('cancels each remote task of a step whose two calls were following them', async () => {
    const text = `${use('warehouse', { message: 'wait: pack order 1002' })} and ${use('warehouse', { message: 'wait: pack order 1003' })}`;
    const { handle, taskIds } = await following(warehouse, text, 2);
    await handle.cancel();
    const result = await handle.result();
    expectEveryCallCancelled(result, 2);
    for (const taskId of taskIds) expect(await stateOf(warehouse, taskId)).toBe(TaskState.TASK_STATE_CANCELED);
    const { scheduled, notes } = await cancelNotes(handle);
    expect(scheduled).toBe(2);
    expect(notes.sort()).toEqual(taskIds.map((taskId) => `The remote task ${taskId} was asked to cancel; it is canceled.`).sort());
  });

  it('cancels the remote task an answer was following, found by the answer its history holds', async () => {
    const before = warehouse.created.length;
    const first = await turnpike.startTurn({ text: use('warehouse', { message: 'hold: paint my order' }) });
    const asked = await first.result();
    expect(asked.toolCalls[0]!.output).toContain('Which colour do you want?');
    const taskId = warehouse.created[before]!;
    const reads = () => warehouse.methods.filter((method) => method === 'GetTask').length;
    const readsBefore = reads();
    const second = await turnpike.startTurn({ messages: [...asked.messages, { role: 'user', content: use('warehouse', { message: 'blue', taskId }) }] });
    await until(() => warehouse.received.some((received) => received.taskId === taskId && received.text === 'blue') && reads() >= readsBefore + 3);
    expect(await stateOf(warehouse, taskId)).toBe(TaskState.TASK_STATE_WORKING);
    const methodsBefore = warehouse.methods.length;
    await second.cancel();
    expectEveryCallCancelled(await second.result(), 1);
    expect(await stateOf(warehouse, taskId)).toBe(TaskState.TASK_STATE_CANCELED);
    // The task answered is read (it holds the answer), then cancelled; nothing is listed.
    expect(warehouse.methods.slice(methodsBefore).filter((method) => method !== 'GetTask')).toEqual(['CancelTask']);
    expect((await cancelNotes(second)).notes).toEqual([`The remote task ${taskId} was asked to cancel; it is canceled.`]);
    expect(warehouse.created).toHaveLength(before + 1);
  });

  it('ends the turn cancelled when the remote lists no tasks, leaving the task it cannot find', async () => {
    const { handle, taskIds } = await following(unlisted, use('unlisted_warehouse', { message: 'wait: pack order 1004' }), 1);
    const methodsBefore = unlisted.methods.length;
    await handle.cancel();
    const result = await handle.result();
    expectEveryCallCancelled(result, 1);
    // Best effort: without ListTasks the task is not found once the call's activity is cancelled.
    expect(unlisted.methods.slice(methodsBefore).filter((method) => method !== 'GetTask')).toEqual(['ListTasks']);
    expect(await stateOf(unlisted, taskIds[0]!)).toBe(TaskState.TASK_STATE_WORKING);
    expect((await cancelNotes(handle)).notes).toEqual(["No remote task holding this call's message was found (or the remote agent does not list its tasks); nothing was cancelled."]);
  });

  it('cancels the remote task once a worker runs again when the turn was cancelled with none running', async () => {
    const { handle, taskIds } = await following(warehouse, use('warehouse', { message: 'wait: pack order 1005' }), 1);
    await turnpike.stopWorker();
    await handle.cancel();
    // Nothing runs the turn meanwhile: the remote task goes on working.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await stateOf(warehouse, taskIds[0]!)).toBe(TaskState.TASK_STATE_WORKING);
    await turnpike.startWorker();
    const result = await handle.result();
    expectEveryCallCancelled(result, 1);
    expect(await stateOf(warehouse, taskIds[0]!)).toBe(TaskState.TASK_STATE_CANCELED);
  }, 120_000);
});
