/**
 * turnpike as an A2A server, driven only by `@a2a-js/sdk`'s own client over real HTTP: an A2A
 * task is a turn on the dev server. Send and get, a parked approval as `input-required` decided
 * by a follow-up message, streaming, cancel, the protocol's own errors, and a retried send that
 * starts nothing new.
 */
import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Message, type Part, type StreamResponse, type Task } from '@a2a-js/sdk';
import { ClientFactory, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskIdFor } from '../../api/a2a/a2a-request-handler.js';
import { parseTokenMap } from '../../api/auth.js';
import { serveApi, type ServedApi } from '../support/api-server.js';
import { executionsOf, testTools, use } from '../support/test-tools.js';
import { startTurnpike, type TurnpikeHarness } from '../support/turnpike-harness.js';

let turnpike: TurnpikeHarness;
let served: ServedApi;
let other: ServedApi;
let alice: Client;
let bob: Client;
/** alice through a second API process over the same turns: it keeps no task of its own. */
let aliceElsewhere: Client;

/** An A2A client of the `desk` agent, found by its Agent Card, sending `token` on every call. */
async function clientWith(token: string, api = served): Promise<Client> {
  const authorized: typeof fetch = (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), authorization: `Bearer ${token}` } });
  const factory = new ClientFactory({ transports: [new JsonRpcTransportFactory({ fetchImpl: authorized })] });
  return factory.createFromUrl(`${api.base}/api/a2a/desk/`);
}

beforeAll(async () => {
  turnpike = await startTurnpike({ tools: testTools });
  const options = {
    tokens: parseTokenMap('alice-token:alice,bob-token:bob'),
    a2a: { agents: { desk: { description: 'Answers and acts on orders', model: { provider: 'scripted' as const, model: 'demo' }, tools: ['record_action', 'guarded_action', 'finance_transfer'] } } },
  };
  served = await serveApi(turnpike, options);
  other = await serveApi(turnpike, options);
  alice = await clientWith('alice-token');
  bob = await clientWith('bob-token');
  aliceElsewhere = await clientWith('alice-token', other);
});
afterAll(async () => {
  await served?.api.close();
  await other?.api.close();
  await turnpike?.stop();
});

function text(value: string): Part {
  return { content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

function data(value: unknown): Part {
  return { content: { $case: 'data', value }, metadata: undefined, filename: '', mediaType: 'application/json' };
}

function message(parts: Part[], taskId = ''): Message {
  return { messageId: randomUUID(), contextId: '', taskId, role: Role.ROLE_USER, parts, metadata: undefined, extensions: [], referenceTaskIds: [] };
}

function send(client: Client, sent: Message, returnImmediately = false) {
  return client.sendMessage({ tenant: '', message: sent, configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately }, metadata: undefined });
}

async function sendTask(client: Client, sent: Message, returnImmediately = false): Promise<Task> {
  const result = await send(client, sent, returnImmediately);
  expect('status' in result).toBe(true);
  return result as Task;
}

function answerText(task: Task): string {
  return task.artifacts.flatMap((artifact) => artifact.parts).map((part) => (part.content?.$case === 'text' ? part.content.value : '')).join('');
}

/** The error the client threw, by the protocol's name and JSON-RPC code. */
async function refusal(work: Promise<unknown>): Promise<{ name: string; code?: number; message: string }> {
  const error = await work.then(() => undefined, (caught: unknown) => caught as { name: string; code?: number; message: string });
  expect(error).toBeDefined();
  return error!;
}

async function parkedTask(client = alice): Promise<Task> {
  const task = await sendTask(client, message([text(use('guarded_action', { target: 'a2a-desk', count: 2 }))]));
  expect(task.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
  return task;
}

function approvalIdOf(task: Task): string {
  const waiting = task.status!.message!.parts.find((part) => part.content?.$case === 'data')!.content as { value: { waiting: { approvalId: string }[] } };
  return waiting.value.waiting[0]!.approvalId;
}

describe('A2A server', () => {
  it('publishes the agent card and completes a task, readable by GetTask', async () => {
    const card = await alice.getAgentCard();
    expect(card.name).toBe('desk');
    expect(card.capabilities?.streaming).toBe(true);
    const task = await sendTask(alice, message([text(use('record_action', { action: 'a2a-hello' }))]));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answerText(task)).toContain('a2a-hello');
    const read = await alice.getTask({ tenant: '', id: task.id });
    expect(read.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answerText(read)).toBe(answerText(task));
    // The task is the turn: the same id, read through turnpike's own client.
    expect((await served.client.turnResult(task.id)).status).toBe('completed');
  });

  it('shows a parked approval as input-required naming what waits, and a follow-up message to another API process approves it', async () => {
    const task = await parkedTask();
    expect((await aliceElsewhere.getTask({ tenant: '', id: task.id })).status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const status = task.status!.message!;
    const words = status.parts.find((part) => part.content?.$case === 'text')!.content!.value as string;
    expect(words).toContain('guarded_action waits for approval by alice or bob');
    const approvalId = approvalIdOf(task);
    expect(executionsOf(task.id)).toHaveLength(0);
    const done = await sendTask(aliceElsewhere, message([data({ approvalId, approved: true, reason: 'looks right' })], task.id));
    expect(done.id).toBe(task.id);
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answerText(done)).toContain('"guarded":"a2a-desk"');
    expect(executionsOf(task.id)).toHaveLength(1);
    const result = await served.client.turnResult(task.id);
    expect(result.decisions?.[0]).toMatchObject({ approvalId, approver: 'alice', reason: 'looks right' });
  });

  it('streams a task: its snapshot, input-required, then after the decision its answer and completed', async () => {
    const seen: StreamResponse[] = [];
    let taskId = '';
    for await (const event of alice.sendMessageStream({ tenant: '', message: message([text(use('guarded_action', { target: 'a2a-stream', count: 1 }))]), configuration: undefined, metadata: undefined })) {
      seen.push(event);
      // The snapshot comes first; the turn may have parked before it was read.
      if (event.payload?.$case === 'task') taskId = event.payload.value.id;
      const state = event.payload?.$case === 'task' || event.payload?.$case === 'statusUpdate' ? event.payload.value.status?.state : undefined;
      if (state === TaskState.TASK_STATE_INPUT_REQUIRED) break;
    }
    expect(seen[0]!.payload?.$case).toBe('task');
    const parked = await alice.getTask({ tenant: '', id: taskId });
    const after: StreamResponse[] = [];
    for await (const event of alice.sendMessageStream({ tenant: '', message: message([data({ approvalId: approvalIdOf(parked), approved: true })], taskId), configuration: undefined, metadata: undefined })) after.push(event);
    expect(after[0]!.payload?.$case).toBe('task');
    const artifact = after.find((event) => event.payload?.$case === 'artifactUpdate');
    expect(artifact?.payload?.$case === 'artifactUpdate' && artifact.payload.value.artifact?.parts[0]?.content?.value).toContain('a2a-stream');
    const last = after.at(-1)!.payload;
    expect(last?.$case === 'statusUpdate' && last.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('resubscribes to a parked task and cancels it: the turn ends cancelled with a result for its call', async () => {
    const task = await parkedTask();
    const stream = alice.resubscribeTask({ tenant: '', id: task.id });
    const first = await stream.next();
    expect(first.value?.payload?.$case).toBe('task');
    const canceled = await alice.cancelTask({ tenant: '', id: task.id, metadata: undefined });
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    const rest: StreamResponse[] = [];
    for await (const event of stream) rest.push(event);
    const last = rest.at(-1)!.payload;
    expect(last?.$case === 'statusUpdate' && last.value.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    const result = await served.client.turnResult(task.id);
    expect(result.status).toBe('cancelled');
    expect(result.toolCalls.map((call) => call.outcome)).toEqual(['cancelled']);
    expect(executionsOf(task.id)).toHaveLength(0);
    // Canceling again answers the canceled task; nothing else changes.
    expect((await alice.cancelTask({ tenant: '', id: task.id, metadata: undefined })).status?.state).toBe(TaskState.TASK_STATE_CANCELED);
  });

  it('answers unknown tasks, messages to finished tasks and other callers with the protocol errors, changing nothing', async () => {
    const unknown = await refusal(alice.getTask({ tenant: '', id: 'a2a-desk-no-such-task' }));
    expect(unknown.name).toBe('TaskNotFoundError');
    expect((await refusal(alice.cancelTask({ tenant: '', id: 'a2a-desk-no-such-task', metadata: undefined }))).name).toBe('TaskNotFoundError');
    const finished = message([text(use('record_action', { action: 'a2a-finished' }))]);
    const done = await sendTask(alice, finished);
    expect(done.id).toBe(taskIdFor('desk', 'alice', finished.messageId));
    const late = await refusal(send(alice, message([data({ approvalId: 'x', approved: true })], done.id)));
    expect(late.name).toBe('UnsupportedOperationError');
    expect((await refusal(alice.cancelTask({ tenant: '', id: done.id, metadata: undefined }))).name).toBe('TaskNotCancelableError');
    // A caller the API does not know is refused before anything is read or started.
    const stranger = await clientWith('unknown-token');
    await expect(send(stranger, message([text(use('record_action', { action: 'a2a-stranger' }))]))).rejects.toThrow(/401/);
    await expect(stranger.getTask({ tenant: '', id: done.id })).rejects.toThrow(/401/);
    // A new task whose message holds a file by url, blank text or no part at all is refused before anything starts.
    const url: Part = { content: { $case: 'url', value: 'https://files.example/report.pdf' }, metadata: undefined, filename: 'report.pdf', mediaType: 'application/pdf' };
    const malformed = [message([text('summarise this'), url]), message([text('   ')]), message([])];
    expect(await Promise.all(malformed.map(async (sent) => (await refusal(send(alice, sent))).name))).toEqual(['ContentTypeNotSupportedError', 'RequestMalformedError', 'RequestMalformedError']);
    for (const sent of malformed) {
      await expect(turnpike.client.workflow.getHandle(taskIdFor('desk', 'alice', sent.messageId)).describe()).rejects.toThrow(/not found/i);
    }
    // bob did not start it and decides nothing in it: to him it is not there.
    expect((await refusal(bob.getTask({ tenant: '', id: done.id }))).name).toBe('TaskNotFoundError');
    expect(executionsOf(done.id)).toHaveLength(1);
    expect((await alice.getTask({ tenant: '', id: done.id })).status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    // A follow-up without a decision, or with a malformed one, changes nothing in a parked task.
    const parked = await parkedTask();
    expect((await refusal(send(alice, message([text('go on')], parked.id)))).name).toBe('RequestMalformedError');
    expect((await refusal(send(alice, message([data({ approvalId: approvalIdOf(parked), approved: 'yes' })], parked.id)))).name).toBe('RequestMalformedError');
    expect((await alice.getTask({ tenant: '', id: parked.id })).status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    await alice.cancelTask({ tenant: '', id: parked.id, metadata: undefined });
    // A decision the turn refuses (alice is not among finance's approvers) is refused with the turn's reason.
    const transfer = await sendTask(alice, message([text(use('finance_transfer', { account: 'a2a-acct', amount: 10 }))]));
    expect(transfer.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const notAllowed = await refusal(send(alice, message([data({ approvalId: approvalIdOf(transfer), approved: true })], transfer.id)));
    expect(notAllowed.name).toBe('UnsupportedOperationError');
    expect(notAllowed.message).toContain('ApproverNotAllowed');
    expect((await alice.getTask({ tenant: '', id: transfer.id })).status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(executionsOf(transfer.id)).toHaveLength(0);
    await alice.cancelTask({ tenant: '', id: transfer.id, metadata: undefined });
  });

  it('starts no second turn for a retried send with the same messageId', async () => {
    const sent = message([text(use('record_action', { action: 'a2a-once' }))]);
    const first = await sendTask(alice, sent, true);
    const { runId } = await turnpike.client.workflow.getHandle(first.id).describe();
    const again = await sendTask(alice, sent);
    expect(again.id).toBe(first.id);
    expect(again.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const third = await sendTask(alice, sent);
    expect(third.id).toBe(first.id);
    expect(executionsOf(first.id)).toHaveLength(1);
    // The latest run of the id is still the first one: the retries, even after it ended, started none.
    expect((await turnpike.client.workflow.getHandle(first.id).describe()).runId).toBe(runId);
    // The same messageId from another caller is another task.
    expect((await sendTask(bob, sent)).id).not.toBe(first.id);
  });
});
