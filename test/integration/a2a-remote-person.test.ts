/**
 * A person answers a remote A2A agent's `input-required` (`defineA2aAgentTool` with
 * `inputRequired: 'person'`), on the dev server, against a remote agent served by `@a2a-js/sdk`'s
 * own server classes (test/support/a2a-remote-agent.ts): the remote's question parks in the turn as
 * a question (turnState, listParkedCalls); the answer given through `TurnpikeClient` is the next
 * message the remote task receives, and the remote's artifact is the call's result; the same
 * question asked again parks anew and takes only the new answer; a declined
 * question cancels the remote task and is the call's error result; an answer for an unknown call
 * or of the wrong shape is refused and nothing reaches the remote; a worker stopped while the
 * question waits loses nothing.
 */
import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TaskState } from '@a2a-js/sdk';
import { defineA2aAgentTool } from '../../activities/a2a-remote/a2a-agent-tool.js';
import { messageIdOf } from '../../activities/a2a-remote/a2a-remote-call.js';
import { TurnpikeRejectedError } from '../../client/errors.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import type { agentTurn } from '../../workflows/index.js';
import { turnStateQuery } from '../../workflows/messages/definitions.js';
import { startRemoteAgent, type RemoteAgent } from '../support/a2a-remote-agent.js';
import { startTurnpike, waitForListed, waitForPending, waitForState, type TurnpikeHarness } from '../support/turnpike-harness.js';

let turnpike: TurnpikeHarness;
let client: TurnpikeClient;
/** Behind `clerk`, whose questions a person answers. */
let remote: RemoteAgent;

beforeAll(async () => {
  remote = await startRemoteAgent('clerk');
  turnpike = await startTurnpike({
    tools: [defineA2aAgentTool({ name: 'clerk', url: remote.url, description: 'Paints orders; asks which colour.', inputRequired: 'person', pollInterval: '200ms', timeout: '2m' })],
  });
  client = new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue });
}, 180_000);

afterAll(async () => {
  remote?.openLatch();
  await remote?.close();
  await turnpike?.stop();
});

/** Starts a turn whose model calls `clerk` with `message`, and waits for the remote's question to park. */
async function askThePerson(message: string) {
  const before = remote.created.length;
  const handle = await turnpike.startTurn({ text: `use clerk with ${JSON.stringify({ message })}` });
  const [question] = await waitForPending(handle);
  const taskId = remote.created[before]!;
  return { handle, question: question!, taskId };
}

/** How many times the call parked a question in the turn, from the turn's history. */
async function parks(handle: WorkflowHandle<typeof agentTurn>): Promise<number> {
  const { events } = await handle.fetchHistory();
  return events!.filter((event) => event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'parkElicitation').length;
}

describe("a person answers a remote agent's question", () => {
  it('parks the question in the turn, refuses bad answers, and sends the answer to the remote task, whose artifact is the result', async () => {
    const { handle, question, taskId } = await askThePerson('ask: paint my order');
    expect(question).toMatchObject({ kind: 'elicitation', toolName: 'clerk', message: 'Which colour do you want?', input: { message: 'ask: paint my order' } });
    expect(question.requestedSchema).toMatchObject({ type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] });
    expect((await handle.query(turnStateQuery)).status).toBe('awaiting-input');
    const [listed] = await waitForListed(client, handle.workflowId, 1);
    expect(listed).toMatchObject({ kind: 'elicitation', toolCallId: question.toolCallId, elicitationId: question.elicitationId, message: 'Which colour do you want?' });
    expect(remote.received).toEqual([{ messageId: messageIdOf(`${handle.workflowId}/${question.toolCallId}`), taskId, text: 'ask: paint my order' }]);

    // Bad answers: refused by the turn, nothing sent, the question still waits.
    const methods = remote.methods.length;
    const unknown = await client.submitToolResult(handle.workflowId, { toolCallId: 'call_nobody_made', output: { action: 'accept', content: { answer: 'red' } } }).catch((error: unknown) => error);
    expect(unknown).toBeInstanceOf(TurnpikeRejectedError);
    expect((unknown as TurnpikeRejectedError).type).toBe('UnknownToolCallId');
    const misshapen = await client.submitToolResult(handle.workflowId, { toolCallId: question.toolCallId, output: { action: 'accept', content: { colour: 'red' } } }).catch((error: unknown) => error);
    expect(misshapen).toMatchObject({ type: 'InvalidToolOutput' });
    expect((misshapen as Error).message).toContain('does not fit the requested schema');
    const empty = await client.submitToolResult(handle.workflowId, { toolCallId: question.toolCallId, output: { action: 'accept', content: { answer: '' } } }).catch((error: unknown) => error);
    expect(empty).toMatchObject({ type: 'InvalidToolOutput' });
    // The call keeps reading the turn for its answer meanwhile; the remote hears nothing.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(remote.methods.slice(methods).filter((method) => method !== 'GetTask')).toEqual([]);
    expect(remote.received).toHaveLength(1);
    const [still] = await waitForPending(handle);
    expect(still!.elicitationId).toBe(question.elicitationId);
    // No attempt waits for the person: each ends at once, and the server schedules the next.
    const [activity] = (await handle.describe()).raw.pendingActivities ?? [];
    expect(activity?.attempt).toBeGreaterThan(2);
    expect(activity?.lastFailure?.applicationFailureInfo?.type).toBe('A2aTaskWorking');
    expect(activity?.lastFailure?.message).toContain("input-required (waiting for a person's answer)");

    await client.submitToolResult(handle.workflowId, { toolCallId: question.toolCallId, output: { action: 'accept', content: { answer: 'ultramarine blue' } } });
    const result = await handle.result();
    expect(result.status).toBe('completed');
    expect(result.toolCalls).toHaveLength(1);
    expect(result.toolCalls[0]).toMatchObject({ toolName: 'clerk', outcome: 'executed', isError: false, output: 'Painted it ultramarine blue.' });
    // Exactly the person's words reached the remote task, once, as its next message.
    expect(remote.received).toEqual([
      { messageId: messageIdOf(`${handle.workflowId}/${question.toolCallId}`), taskId, text: 'ask: paint my order' },
      { messageId: messageIdOf(`${handle.workflowId}/${question.toolCallId}/${question.elicitationId}`), taskId, text: 'ultramarine blue' },
    ]);
    expect(remote.created).toContain(taskId);
    expect((await remote.task(taskId))?.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(await parks(handle)).toBe(1);
  });

  it('the same question asked again after an answer parks anew, and only the new answer is sent', async () => {
    const { handle, question, taskId } = await askThePerson('again: paint my order');
    await client.submitToolResult(handle.workflowId, { toolCallId: question.toolCallId, output: { action: 'accept', content: { answer: 'purple' } } });
    const { pending } = await waitForState(handle, (state) => state.pending.length === 1 && state.pending[0]!.elicitationId !== question.elicitationId);
    expect(pending[0]).toMatchObject({ kind: 'elicitation', toolCallId: question.toolCallId, message: 'Which colour do you want?' });
    await client.submitToolResult(handle.workflowId, { toolCallId: question.toolCallId, output: { action: 'accept', content: { answer: 'teal' } } });
    const result = await handle.result();
    expect(result.toolCalls[0]).toMatchObject({ isError: false, output: 'Painted it teal.' });
    expect(remote.received.filter((message) => message.taskId === taskId).map((message) => message.text)).toEqual(['again: paint my order', 'purple', 'teal']);
    // Three parks for two questions: the turn hands an earlier attempt's answer to the same words
    // asked again ('purple'), and the call, which already sent it, parks the question once more.
    expect(await parks(handle)).toBe(3);
  });

  it('a declined question cancels the remote task, and the call says the person declined', async () => {
    const { handle, question, taskId } = await askThePerson('ask: paint the other order');
    await client.submitToolResult(handle.workflowId, { toolCallId: question.toolCallId, output: { action: 'decline' } });
    const result = await handle.result();
    expect(result.status).toBe('completed');
    expect(result.toolCalls[0]).toMatchObject({ toolName: 'clerk', isError: true });
    expect(result.toolCalls[0]!.output).toBe(
      `Tool "clerk" failed: The person declined to answer the remote agent's question on its task ${taskId}; the remote task was asked to cancel.`,
    );
    expect(remote.received.filter((message) => message.taskId === taskId).map((message) => message.text)).toEqual(['ask: paint the other order']);
    expect(remote.methods).toContain('CancelTask');
    expect((await remote.task(taskId))?.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
  });

  it('a worker stopped while the question waits loses nothing: the question stays parked, and its answer reaches the remote task', async () => {
    const { handle, question, taskId } = await askThePerson('ask: paint a third order');
    // A few attempts have read the turn for the answer (every 200 ms) before the worker stops.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await turnpike.stopWorker();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await turnpike.startWorker();
    const [after] = await waitForPending(handle);
    expect(after!.elicitationId).toBe(question.elicitationId);
    await client.submitToolResult(handle.workflowId, { toolCallId: question.toolCallId, output: { action: 'accept', content: { answer: 'green' } } });
    const result = await handle.result();
    expect(result.toolCalls[0]).toMatchObject({ isError: false, output: 'Painted it green.' });
    expect(remote.received.filter((message) => message.taskId === taskId).map((message) => message.text)).toEqual(['ask: paint a third order', 'green']);
    // The question's id survived in the call's heartbeat details: it was parked once, in one activity.
    expect(await parks(handle)).toBe(1);
    const { events } = await handle.fetchHistory();
    expect(events!.filter((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'executeTool')).toHaveLength(1);
  }, 120_000);
});
