/**
 * An A2A context that spans several tasks, driven only by `@a2a-js/sdk`'s own client over real
 * HTTP on the dev server: a task that names the contextId of an earlier one is a new turn given
 * the context's history; each task reads and streams on its own; unknown and other callers'
 * contexts are refused and start nothing; a retried message starts no further turn; a later
 * task's push notifications name the context's id.
 */
import { randomUUID } from 'node:crypto';
import { Role, StreamResponse, TaskState, type Message, type Part } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskIdFor } from '../../api/a2a/a2a-request-handler.js';
import { MAX_CONTEXT_HISTORY_BYTES } from '../../api/a2a/a2a-contexts.js';
import { parseTokenMap } from '../../api/auth.js';
import { a2aClient, answerText, refusal, sendTask } from '../support/a2a-client.js';
import { serveApi, type ServedApi } from '../support/api-server.js';
import { startPushReceiver, type PushReceiver } from '../support/push-receiver.js';
import { testTools, use } from '../support/test-tools.js';
import { startTurnpike, type TurnpikeHarness } from '../support/turnpike-harness.js';
import { until } from '../support/until.js';

let turnpike: TurnpikeHarness;
let served: ServedApi;
let alice: Client;
let bob: Client;
let bobOnLedger: Client;
const receivers: PushReceiver[] = [];

function clientWith(token: string, agent = 'desk'): Promise<Client> {
  return a2aClient(`${served.base}/api/a2a/${agent}/`, token);
}

beforeAll(async () => {
  // Push receivers listen on 127.0.0.1: allowed on the worker and the API.
  turnpike = await startTurnpike({ tools: testTools, a2aPushAllow: ['127.0.0.1/32'] });
  const agent = { description: 'Answers and acts on orders', model: { provider: 'scripted' as const, model: 'demo' }, tools: ['record_action', 'guarded_action'] };
  served = await serveApi(turnpike, { tokens: parseTokenMap('alice-token:alice,bob-token:bob'), a2a: { agents: { desk: agent, ledger: agent }, pushAllow: ['127.0.0.1/32'] } });
  alice = await clientWith('alice-token');
  bob = await clientWith('bob-token');
  bobOnLedger = await clientWith('bob-token', 'ledger');
});
afterAll(async () => {
  await served?.api.close();
  await turnpike?.stop();
  await Promise.all(receivers.map((receiver) => receiver.close()));
});

function text(value: string): Part {
  return { content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

function message(words: string, contextId = '', messageId: string = randomUUID()): Message {
  return { messageId, contextId, taskId: '', role: Role.ROLE_USER, parts: [text(words)], metadata: undefined, extensions: [], referenceTaskIds: [] };
}

/** Whether a workflow of that id exists, asked of the server itself. */
async function exists(workflowId: string): Promise<boolean> {
  return (await served.client.describeStart(workflowId)) !== undefined;
}

describe('A2A contexts', () => {
  it('continues a context: the second task is a new turn given the first task’s message and answer, and each task reads and streams on its own', async () => {
    const firstWords = use('record_action', { action: 'ctx-first' });
    const opening = message(firstWords);
    const first = await sendTask(alice, opening);
    expect(first.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(first.contextId).toBe(first.id);
    const firstAnswer = answerText(first);
    expect(firstAnswer).toContain('ctx-first');

    const secondWords = use('record_action', { action: 'ctx-second' });
    const retried = message(secondWords, first.contextId);
    const second = await sendTask(alice, retried);
    expect(second.id).toBe(`${first.id}/turn-2`);
    expect(second.contextId).toBe(first.contextId);
    expect(second.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answerText(second)).toContain('ctx-second');

    // What the second turn's model was given: the first task's user message and answer, then the new message.
    const transcript = await served.client.turnTranscript(second.id);
    const users = transcript.filter((entry) => entry.role === 'user').map((entry) => entry.content);
    expect(users).toEqual([firstWords, secondWords]);
    const firstTranscript = await served.client.turnTranscript(first.id);
    expect(transcript.slice(0, firstTranscript.length)).toEqual(firstTranscript);
    const answers = transcript.flatMap((entry) => (entry.role === 'assistant' && Array.isArray(entry.content) ? entry.content : [])).flatMap((part) => (part.type === 'text' ? [part.text] : []));
    expect(answers[0]).toBe(firstAnswer);

    // Each task on its own: GetTask and a subscription-free stream of a new third task.
    const readFirst = await alice.getTask({ tenant: '', id: first.id });
    expect(answerText(readFirst)).toBe(firstAnswer);
    const readSecond = await alice.getTask({ tenant: '', id: second.id });
    expect(readSecond.contextId).toBe(first.id);
    expect(answerText(readSecond)).toBe(answerText(second));
    expect(await refusal(bob.getTask({ tenant: '', id: second.id }))).toMatchObject({ name: 'TaskNotFoundError' });

    const streamed: StreamResponse[] = [];
    for await (const event of alice.sendMessageStream({ tenant: '', message: message(use('record_action', { action: 'ctx-third' }), first.id), configuration: undefined, metadata: undefined })) streamed.push(event);
    expect(streamed[0]!.payload?.$case === 'task' && streamed[0]!.payload.value.id).toBe(`${first.id}/turn-3`);
    const last = streamed.at(-1)!.payload;
    expect(last?.$case === 'statusUpdate' && last.value.contextId).toBe(first.id);
    expect(last?.$case === 'statusUpdate' && last.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const thirdUsers = (await served.client.turnTranscript(`${first.id}/turn-3`)).filter((entry) => entry.role === 'user');
    expect(thirdUsers).toHaveLength(3);

    // The second message sent again: its task, and no fourth one.
    const again = await sendTask(alice, retried);
    expect(again.id).toBe(second.id);
    expect(answerText(again)).toBe(answerText(second));
    expect(await exists(`${first.id}/turn-4`)).toBe(false);
    // The first message sent again with its own contextId is the first task.
    expect((await sendTask(alice, message(firstWords, first.id, opening.messageId))).id).toBe(first.id);
    expect(await exists(`${first.id}/turn-4`)).toBe(false);
  });

  it('refuses an unknown context, another caller’s, and another agent’s, starting nothing', async () => {
    const mine = await sendTask(alice, message(use('record_action', { action: 'ctx-mine' })));
    const unknown = taskIdFor('desk', 'alice', `unknown-${randomUUID()}`);
    for (const [client, contextId] of [
      [alice, unknown],
      [alice, 'not-a-context'],
      [alice, `${mine.id}/turn-2`],
      [bob, mine.id],
      [bobOnLedger, mine.id],
    ] as const) {
      const sent = message(use('record_action', { action: 'ctx-refused' }), contextId);
      expect(await refusal(sendTask(client, sent))).toMatchObject({ name: 'TaskNotFoundError' });
      expect(await exists(`${mine.id}/turn-2`)).toBe(false);
      expect(await exists(taskIdFor('desk', client === alice ? 'alice' : 'bob', sent.messageId))).toBe(false);
      expect(await exists(taskIdFor('ledger', 'bob', sent.messageId))).toBe(false);
    }
    expect(await exists(unknown)).toBe(false);
  });

  it('refuses to continue a context whose history is over the bound a task may start with, starting nothing', async () => {
    // A first task whose own message is over MAX_CONTEXT_HISTORY_BYTES: its transcript is too.
    const long = `${'a long brief. '.repeat(Math.ceil(MAX_CONTEXT_HISTORY_BYTES / 14) + 1000)}`;
    const first = await sendTask(alice, message(long));
    expect(first.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const refused = await refusal(sendTask(alice, message('and then?', first.id)));
    expect(refused).toMatchObject({ name: 'UnsupportedOperationError' });
    expect(refused.message).toMatch(/history is \d+ bytes, over the 1000000 a task may start with: start a new context/);
    expect(await exists(`${first.id}/turn-2`)).toBe(false);
  });

  it('refuses a message to a context whose last task waits for input, and takes it once that task has ended', async () => {
    const parked = await sendTask(alice, message(use('guarded_action', { target: 'ctx-parked', count: 1 })));
    expect(parked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const next = message(use('record_action', { action: 'ctx-after' }), parked.id);
    const refused = await refusal(sendTask(alice, next));
    expect(refused.name).toBe('UnsupportedOperationError');
    expect(refused.message).toContain('has not ended (awaiting-input)');
    expect(await exists(`${parked.id}/turn-2`)).toBe(false);
    await alice.cancelTask({ tenant: '', id: parked.id, metadata: undefined });
    const after = await sendTask(alice, next);
    expect(after.id).toBe(`${parked.id}/turn-2`);
    expect(after.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    // The cancelled call is in the history the new turn was given, with its cancelled result.
    const transcript = await served.client.turnTranscript(after.id);
    expect(transcript.some((entry) => entry.role === 'tool')).toBe(true);
  });

  it('answers a later task of a context like any task: parked for approval, approved by a follow-up naming its taskId and the contextId, then resubscribed and cancelled', async () => {
    const first = await sendTask(alice, message(use('record_action', { action: 'ctx-before-approval' })));
    const second = await sendTask(alice, message(use('guarded_action', { target: 'ctx-later', count: 1 }), first.id));
    expect(second.id).toBe(`${first.id}/turn-2`);
    expect(second.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(second.status?.message?.contextId).toBe(first.id);
    const waiting = second.status!.message!.parts.find((part) => part.content?.$case === 'data')!.content as { value: { waiting: { approvalId: string }[] } };
    const approval: Message = { ...message('', first.id), taskId: second.id, parts: [{ content: { $case: 'data', value: { approvalId: waiting.value.waiting[0]!.approvalId, approved: true } }, metadata: undefined, filename: '', mediaType: 'application/json' }] };
    const approved = await sendTask(alice, approval);
    expect(approved.id).toBe(second.id);
    expect(approved.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answerText(approved)).toContain('ctx-later');
    // A follow-up naming another context is refused.
    expect(await refusal(sendTask(alice, { ...approval, messageId: randomUUID(), contextId: second.id }))).toMatchObject({ name: 'RequestMalformedError' });

    const third = await sendTask(alice, message(use('guarded_action', { target: 'ctx-cancel', count: 1 }), first.id));
    expect(third.id).toBe(`${first.id}/turn-3`);
    const stream = alice.resubscribeTask({ tenant: '', id: third.id });
    const snapshot = await stream.next();
    expect(snapshot.value?.payload?.$case === 'task' && snapshot.value.payload.value.contextId).toBe(first.id);
    expect((await alice.cancelTask({ tenant: '', id: third.id, metadata: undefined })).status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    const rest: StreamResponse[] = [];
    for await (const event of stream) rest.push(event);
    const last = rest.at(-1)!.payload;
    expect(last?.$case === 'statusUpdate' && last.value.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect((await served.client.turnResult(third.id)).status).toBe('cancelled');
  });

  it("sends a later task's push notifications with the context's id, as reading the task shows it", async () => {
    const first = await sendTask(alice, message(use('record_action', { action: 'ctx-push-first' })));
    const second = await sendTask(alice, message(use('guarded_action', { target: 'ctx-push', count: 1 }), first.id));
    expect(second.id).toBe(`${first.id}/turn-2`);
    expect(second.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    let token = '';
    const receiver = await startPushReceiver(() => token);
    receivers.push(receiver);
    const set = await alice.createTaskPushNotificationConfig({ tenant: '', id: 'ctx-hook', taskId: second.id, url: receiver.url, token: '', authentication: undefined });
    token = set.token;
    await until(() => receiver.taken.length >= 1, 'the input-required notification');
    const waiting = second.status!.message!.parts.find((part) => part.content?.$case === 'data')!.content as { value: { waiting: { approvalId: string }[] } };
    await served.client.approveToolCall(second.id, { approvalId: waiting.value.waiting[0]!.approvalId, approved: true, approver: 'alice' });
    const completed = (response: StreamResponse) => response.payload?.$case === 'statusUpdate' && response.payload.value.status?.state === TaskState.TASK_STATE_COMPLETED;
    await until(() => receiver.taken.some((taken) => completed(StreamResponse.fromJSON(taken.body))), 'the completed notification');
    const notified = receiver.taken.map((taken) => StreamResponse.fromJSON(taken.body).payload);
    expect(notified.map((payload) => payload?.$case)).toContain('artifactUpdate');
    for (const payload of notified) {
      if (payload?.$case !== 'statusUpdate' && payload?.$case !== 'artifactUpdate') throw new Error(`unexpected notification ${payload?.$case}`);
      expect(payload.value).toMatchObject({ taskId: second.id, contextId: first.id });
      if (payload.$case === 'statusUpdate' && payload.value.status?.message) expect(payload.value.status.message).toMatchObject({ taskId: second.id, contextId: first.id });
    }
    // The input-required one names what waits, in the context's id, as the task read by the API does.
    const parked = notified[0]!;
    expect(parked.$case === 'statusUpdate' && parked.value.status?.message?.contextId).toBe(first.id);
  });

  it('two messages sent to a context at once never share a task: each accepted one is the last user message of its own turn', async () => {
    const first = await sendTask(alice, message(use('record_action', { action: 'ctx-race' })));
    const sent = [message(use('record_action', { action: 'ctx-race-a' }), first.id), message(use('record_action', { action: 'ctx-race-b' }), first.id)];
    const outcomes = await Promise.all(sent.map((one) => sendTask(alice, one).then((task) => ({ task }), (error: { name: string }) => ({ error }))));
    const accepted = outcomes.flatMap((outcome, index) => ('task' in outcome ? [{ task: outcome.task, sent: sent[index]! }] : []));
    expect(accepted.length).toBeGreaterThanOrEqual(1);
    for (const outcome of outcomes) if ('error' in outcome) expect(outcome.error.name).toBe('UnsupportedOperationError');
    expect(new Set(accepted.map(({ task }) => task.id)).size).toBe(accepted.length);
    for (const { task, sent: one } of accepted) {
      const users = (await served.client.turnTranscript(task.id)).filter((entry) => entry.role === 'user');
      expect(users.at(-1)!.content).toBe((one.parts[0]!.content as { value: string }).value);
    }
    // Nothing was started beyond the accepted tasks.
    expect(await exists(`${first.id}/turn-${accepted.length + 2}`)).toBe(false);
  });
});
