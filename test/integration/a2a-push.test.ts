/**
 * A2A push notifications from turnpike's A2A server, set with `@a2a-js/sdk`'s own client over real
 * HTTP on the dev server, received by a local webhook that checks each one as docs/protocols.md
 * tells receivers to (`checkPushNotification`). A task parked for approval notifies input-required,
 * then after the approval its answer and completed, in order, each once; a receiver that fails is
 * retried; while the task is parked the notifier's activity waits on the server between reads
 * (no worker slot, no history); bad configs and callers without rights get the protocol's errors
 * and start nothing.
 */
import { randomUUID } from 'node:crypto';
import { Role, StreamResponse, TaskState, type Message, type Part, type Task, type TaskPushNotificationConfig } from '@a2a-js/sdk';
import { ClientFactory, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPushNotification, signPushNotification } from '../../index.js';
import { parseTokenMap } from '../../api/auth.js';
import { A2A_PUSH_NOTIFIER_WORKFLOW, a2aPushNotifierId } from '../../workflows/a2a/a2a-push-notifier.js';
import { serveApi, type ServedApi } from '../support/api-server.js';
import { noteStarted } from '../support/history-recorder.js';
import { startPushReceiver, type PushReceiver } from '../support/push-receiver.js';
import { executionsOf, testTools, use } from '../support/test-tools.js';
import { startTurnpike, type TurnpikeHarness } from '../support/turnpike-harness.js';
import { until } from '../support/until.js';
import { workflowExists } from '../support/workflow-exists.js';

let turnpike: TurnpikeHarness;
let served: ServedApi;
let alice: Client;
/** carol may neither read nor decide alice's tasks. */
let carol: Client;
const receivers: PushReceiver[] = [];

async function clientWith(token: string): Promise<Client> {
  const authorized: typeof fetch = (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), authorization: `Bearer ${token}` } });
  const factory = new ClientFactory({ transports: [new JsonRpcTransportFactory({ fetchImpl: authorized })] });
  return factory.createFromUrl(`${served.base}/api/a2a/desk/`);
}

beforeAll(async () => {
  // The receivers listen on 127.0.0.1: allowed explicitly, on the worker and the API (private receivers are refused by default, a2a-push-private.test.ts).
  turnpike = await startTurnpike({ tools: testTools, a2aPushAllow: ['127.0.0.1/32'] });
  served = await serveApi(turnpike, {
    tokens: parseTokenMap('alice-token:alice,carol-token:carol'),
    a2a: { agents: { desk: { description: 'Answers and acts on orders', model: { provider: 'scripted' as const, model: 'demo' }, tools: ['record_action', 'guarded_action'] } }, pushAllow: ['127.0.0.1/32'] },
  });
  alice = await clientWith('alice-token');
  carol = await clientWith('carol-token');
});
afterAll(async () => {
  await served?.api.close();
  await turnpike?.stop();
  await Promise.all(receivers.map((receiver) => receiver.close()));
});

function text(value: string): Part {
  return { content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

function message(parts: Part[], taskId = ''): Message {
  return { messageId: randomUUID(), contextId: '', taskId, role: Role.ROLE_USER, parts, metadata: undefined, extensions: [], referenceTaskIds: [] };
}

async function parkedTask(target: string): Promise<Task> {
  const task = (await alice.sendMessage({ tenant: '', message: message([text(use('guarded_action', { target, count: 1 }))]), configuration: undefined, metadata: undefined })) as Task;
  expect(task.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
  return task;
}

function approvalIdOf(task: Task): string {
  const waiting = task.status!.message!.parts.find((part) => part.content?.$case === 'data')!.content as { value: { waiting: { approvalId: string }[] } };
  return waiting.value.waiting[0]!.approvalId;
}

function config(taskId: string, url: string, more: Partial<TaskPushNotificationConfig> = {}): TaskPushNotificationConfig {
  return { tenant: '', id: '', taskId, url, token: '', authentication: undefined, ...more };
}

/** What a notification says: its kind and the task's state (or the artifact's id). */
function said(body: Record<string, unknown>): string {
  const response = StreamResponse.fromJSON(body);
  if (response.payload?.$case === 'statusUpdate') return `status:${TaskState[response.payload.value.status!.state]}`;
  if (response.payload?.$case === 'artifactUpdate') return `artifact:${response.payload.value.artifact!.artifactId}`;
  return `other:${response.payload?.$case}`;
}

/**
 * input-required, then the answer and completed, each once and in that order; the turn's running
 * between the approval and its end may show as one `working` status between them, when a read of
 * the task fell in that moment.
 */
function expectParkedThenCompleted(receiver: PushReceiver): void {
  const seen = receiver.taken.map((taken) => said(taken.body));
  expect(seen.filter((what) => what !== 'status:TASK_STATE_WORKING')).toEqual(['status:TASK_STATE_INPUT_REQUIRED', 'artifact:answer', 'status:TASK_STATE_COMPLETED']);
  expect(seen.slice(1, -2).every((what) => what === 'status:TASK_STATE_WORKING')).toBe(true);
  expect(seen.length).toBeLessThanOrEqual(4);
  expect(new Set(receiver.taken.map((taken) => taken.delivery)).size).toBe(seen.length);
}


/** The notifier of a config, noted for the replay set (`npm run record-histories`). */
function notifier(taskId: string, configId: string) {
  const handle = turnpike.client.workflow.getHandle(a2aPushNotifierId(taskId, configId));
  noteStarted(handle);
  return handle;
}

function millis(timestamp: { seconds?: unknown; nanos?: number | null } | null | undefined): number {
  return timestamp ? Number(timestamp.seconds) * 1_000 + Math.floor((timestamp.nanos ?? 0) / 1e6) : 0;
}

function notifierExists(taskId: string, configId: string): Promise<boolean> {
  return workflowExists(turnpike.client, a2aPushNotifierId(taskId, configId));
}

describe('A2A push notifications', () => {
  it('advertises them, and notifies a parked task\'s input-required, then after an approval its answer and completed, in order, each once, signed', async () => {
    expect((await alice.getAgentCard()).capabilities?.pushNotifications).toBe(true);
    const task = await parkedTask('push-1');
    let token = '';
    const receiver = await startPushReceiver(() => token);
    receivers.push(receiver);
    const set = await alice.createTaskPushNotificationConfig(config(task.id, receiver.url, { id: 'desk-hook', authentication: { scheme: 'Bearer', credentials: 'receiver-secret' } }));
    token = set.token;
    // No token given: turnpike chose one (32 random bytes) and answered it.
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(set).toMatchObject({ id: 'desk-hook', taskId: task.id, url: receiver.url });
    expect(await alice.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'desk-hook' })).toMatchObject({ id: 'desk-hook', token });
    await until(() => receiver.taken.length >= 1, 'the input-required notification');
    expect(said(receiver.taken[0]!.body)).toBe('status:TASK_STATE_INPUT_REQUIRED');
    const first = receiver.taken[0]!;
    expect(first.headers['authorization']).toBe('Bearer receiver-secret');
    expect(first.headers['x-a2a-notification-token']).toBe(token);
    expect(first.headers['content-type']).toBe('application/a2a+json');

    // Approved through turnpike itself, not A2A.
    await served.client.approveToolCall(task.id, { approvalId: approvalIdOf(task), approved: true, approver: 'alice' });
    await until(() => receiver.taken.some((taken) => said(taken.body) === 'status:TASK_STATE_COMPLETED'), 'the completed notification');
    expectParkedThenCompleted(receiver);
    expect(receiver.attempts.every((attempt) => attempt.status === 200)).toBe(true);
    const answer = StreamResponse.fromJSON(receiver.taken.at(-2)!.body);
    expect(JSON.stringify(answer)).toContain('guarded');
    expect(executionsOf(task.id)).toHaveLength(1);
    // The notifier ends with the task; its config stays readable, and nothing more comes.
    const result = await notifier(task.id, 'desk-hook').result();
    expect(result).toEqual({ delivered: receiver.taken.length, dropped: 0 });
    const delivered = receiver.taken.length;
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(receiver.taken).toHaveLength(delivered);
  });

  it('retries a receiver that fails twice: it still gets each notification, in order', async () => {
    const task = await parkedTask('push-2');
    const token = 'a-token-of-the-clients-own';
    const receiver = await startPushReceiver(() => token, { failFirst: 2 });
    receivers.push(receiver);
    await alice.createTaskPushNotificationConfig(config(task.id, receiver.url, { id: 'flaky', token }));
    await until(() => receiver.taken.length >= 1, 'the input-required notification after two failures');
    await served.client.approveToolCall(task.id, { approvalId: approvalIdOf(task), approved: true, approver: 'alice' });
    expect(await notifier(task.id, 'flaky').result()).toEqual({ delivered: receiver.taken.length, dropped: 0 });
    expectParkedThenCompleted(receiver);
    // Each notification: two 503s, then taken, under one delivery id.
    for (const { delivery } of receiver.taken) expect(receiver.attempts.filter((attempt) => attempt.delivery === delivery).map((attempt) => attempt.status)).toEqual([503, 503, 200]);
  });

  it('lists and deletes configs: a deleted config\'s notifier is cancelled, and Get no longer finds it', async () => {
    const task = await parkedTask('push-3');
    const receiver = await startPushReceiver(() => 'kept-token');
    receivers.push(receiver);
    await alice.createTaskPushNotificationConfig(config(task.id, receiver.url, { id: 'kept', token: 'kept-token' }));
    // A retried create of the same config finds it; the same id for another config is refused.
    expect((await alice.createTaskPushNotificationConfig(config(task.id, receiver.url, { id: 'kept', token: 'kept-token' }))).id).toBe('kept');
    const clash = await alice.createTaskPushNotificationConfig(config(task.id, 'https://elsewhere.example/hook', { id: 'kept', token: 'kept-token' })).then(() => undefined, (error: Error) => error);
    expect(clash?.name).toBe('RequestMalformedError');
    await alice.createTaskPushNotificationConfig(config(task.id, 'http://127.0.0.1:9/never', { id: 'dropped' }));
    let listed: string[] = [];
    for (let tries = 0; tries < 50 && listed.length < 2; tries++) {
      listed = (await alice.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' })).configs.map((listedConfig) => listedConfig.id);
      if (listed.length < 2) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(listed).toEqual(['dropped', 'kept']);
    await alice.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'dropped' });
    const gone = await alice.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'dropped' }).then(() => undefined, (error: Error) => error);
    expect(gone?.name).toBe('TaskNotFoundError');
    const { status } = await notifier(task.id, 'dropped').describe();
    expect(status.name).toBe('CANCELLED');
    await until(() => receiver.taken.length >= 1, 'the kept config\'s notification');
    await served.client.approveToolCall(task.id, { approvalId: approvalIdOf(task), approved: true, approver: 'alice' });
    expect(await notifier(task.id, 'kept').result()).toEqual({ delivered: receiver.taken.length, dropped: 0 });
    expectParkedThenCompleted(receiver);
  });

  it('holds no worker while the task is parked: between reads its activity waits on the server, further apart while nothing changes, and its history does not grow', async () => {
    const task = await parkedTask('push-6');
    const token = 'idle-token';
    const receiver = await startPushReceiver(() => token);
    receivers.push(receiver);
    await alice.createTaskPushNotificationConfig(config(task.id, receiver.url, { id: 'idle', token }));
    await until(() => receiver.taken.length >= 1, 'the input-required notification');
    const handle = notifier(task.id, 'idle');
    const historyLength = async () => (await handle.fetchHistory()).events!.length;
    const scheduledAt = await historyLength();
    // Reads 1, 2, 4 s apart: by the fourth attempt the activity has waited on the server three times.
    let waiting: temporal.api.workflow.v1.IPendingActivityInfo | undefined;
    for (let read = 0; read < 150 && !waiting; read++) {
      const pending = (await handle.describe()).raw.pendingActivities?.[0];
      if (pending?.state === temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED && (pending.attempt ?? 0) >= 4) waiting = pending;
      else await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(waiting, 'the activity waiting in backoff after its fourth attempt').toBeDefined();
    expect(waiting!.activityType?.name).toBe('deliverA2aPush');
    expect(waiting!.lastFailure?.applicationFailureInfo?.type).toBe('A2aPushIdle');
    const progress = JSON.parse(Buffer.from(waiting!.heartbeatDetails!.payloads![0]!.data!).toString()) as { delivered: number; queue: unknown[]; quiet: number };
    expect(progress).toMatchObject({ delivered: 1, queue: [] });
    expect(progress.quiet).toBeGreaterThanOrEqual(2);
    // The next read is scheduled 2^quiet s after the last attempt ended (up to 30 s), not a second.
    const gap = millis(waiting!.nextAttemptScheduleTime) - millis(waiting!.lastAttemptCompleteTime);
    expect(gap).toBeGreaterThanOrEqual(Math.min(30_000, 1_000 * 2 ** progress.quiet) - 50);
    expect(gap).toBeLessThanOrEqual(Math.min(30_000, 1_000 * 2 ** progress.quiet) + 50);
    // Its attempts entered no history: still the activity's one ActivityTaskScheduled, never started.
    expect(await historyLength()).toBe(scheduledAt);
    expect((await handle.fetchHistory()).events!.some((event) => event.activityTaskStartedEventAttributes)).toBe(false);
    await served.client.approveToolCall(task.id, { approvalId: approvalIdOf(task), approved: true, approver: 'alice' });
    expect(await notifier(task.id, 'idle').result()).toEqual({ delivered: receiver.taken.length, dropped: 0 });
    expectParkedThenCompleted(receiver);
  });

  it('refuses bad input with the protocol\'s errors and starts nothing: an unknown task, a URL that is not http(s), a caller without rights, a task that has ended', async () => {
    const task = await parkedTask('push-4');
    const refusal = (work: Promise<unknown>) => work.then(() => undefined, (error: { name: string; message: string }) => error);
    const unknown = await refusal(alice.createTaskPushNotificationConfig(config('a2a-desk-0000000000000000000000000000000000000000', 'https://example.com/hook', { id: 'x' })));
    expect(unknown?.name).toBe('TaskNotFoundError');
    const notHttp = await refusal(alice.createTaskPushNotificationConfig(config(task.id, 'file:///etc/passwd', { id: 'file' })));
    expect(notHttp?.name).toBe('RequestMalformedError');
    expect(notHttp?.message).toContain('http or https');
    const badScheme = await refusal(alice.createTaskPushNotificationConfig(config(task.id, 'https://example.com/hook', { id: 'scheme', authentication: { scheme: 'Bearer x', credentials: 'y\r\nInjected: 1' } })));
    expect(badScheme?.name).toBe('RequestMalformedError');
    // carol may not read alice's task (nor decide its call, which alice or bob approves): to her it does not exist, for every push method.
    const foreign = await refusal(carol.createTaskPushNotificationConfig(config(task.id, 'https://example.com/hook', { id: 'carols' })));
    expect(foreign?.name).toBe('TaskNotFoundError');
    await alice.createTaskPushNotificationConfig(config(task.id, 'http://127.0.0.1:9/never', { id: 'alices' }));
    expect((await refusal(carol.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'alices' })))?.name).toBe('TaskNotFoundError');
    expect((await refusal(carol.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' })))?.name).toBe('TaskNotFoundError');
    expect((await refusal(carol.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'alices' })))?.name).toBe('TaskNotFoundError');
    expect((await turnpike.client.workflow.getHandle(a2aPushNotifierId(task.id, 'alices')).describe()).status.name).toBe('RUNNING');
    for (const id of ['file', 'scheme', 'carols']) expect(await notifierExists(task.id, id)).toBe(false);
    expect(await notifierExists('a2a-desk-0000000000000000000000000000000000000000', 'x')).toBe(false);
    // Ended: cancel the task, then a config is refused.
    await alice.cancelTask({ tenant: '', id: task.id, metadata: undefined });
    const ended = await refusal(alice.createTaskPushNotificationConfig(config(task.id, 'https://example.com/hook', { id: 'late' })));
    expect(ended?.name).toBe('UnsupportedOperationError');
    expect(await notifierExists(task.id, 'late')).toBe(false);
    const notifiers = [];
    for await (const execution of turnpike.client.workflow.list({ query: `WorkflowType = '${A2A_PUSH_NOTIFIER_WORKFLOW}' AND WorkflowId STARTS_WITH '${task.id}/'` })) notifiers.push(execution.workflowId);
    expect(notifiers.every((id) => id === a2aPushNotifierId(task.id, 'alices'))).toBe(true);
  });

  it('loses no notification across a worker restart while one is pending', async () => {
    const task = await parkedTask('push-5');
    const token = 'restart-token';
    const receiver = await startPushReceiver(() => token, { failFirst: 1 });
    receivers.push(receiver);
    await alice.createTaskPushNotificationConfig(config(task.id, receiver.url, { id: 'restart', token }));
    // The first try is refused: the notification is pending, in the run's heartbeat details, when the worker stops.
    await until(() => receiver.attempts.length >= 1, 'the first try');
    await turnpike.stopWorker();
    await turnpike.startWorker();
    await until(() => receiver.taken.length >= 1, 'the input-required notification from the new worker');
    await served.client.approveToolCall(task.id, { approvalId: approvalIdOf(task), approved: true, approver: 'alice' });
    expect(await notifier(task.id, 'restart').result()).toEqual({ delivered: receiver.taken.length, dropped: 0 });
    expectParkedThenCompleted(receiver);
  });

  it('gives receivers a check that refuses a forged notification: another key, a changed body, an old timestamp, another token', () => {
    const token = 'receivers-token';
    const body = JSON.stringify({ statusUpdate: { taskId: 'a2a-desk-1', contextId: 'a2a-desk-1', status: { state: 'TASK_STATE_COMPLETED' } } });
    const timestamp = String(Math.floor(Date.now() / 1000));
    const headers = (signature: string, at = timestamp, sentToken = token) => ({ 'x-turnpike-signature': signature, 'x-turnpike-timestamp': at, 'x-a2a-notification-token': sentToken });
    expect(checkPushNotification({ token, body, headers: headers(signPushNotification(token, timestamp, body)) })).toBeUndefined();
    expect(checkPushNotification({ token, body, headers: headers(signPushNotification('forger-key', timestamp, body)) })).toBe('signature does not match');
    expect(checkPushNotification({ token, body: body.replace('COMPLETED', 'FAILED'), headers: headers(signPushNotification(token, timestamp, body)) })).toBe('signature does not match');
    const old = String(Number(timestamp) - 3600);
    expect(checkPushNotification({ token, body, headers: headers(signPushNotification(token, old, body), old) })).toBe('timestamp out of range');
    expect(checkPushNotification({ token, body, headers: headers(signPushNotification(token, timestamp, body), timestamp, 'other') })).toBe('token does not match');
    expect(checkPushNotification({ token, body, headers: new Headers() })).toBe('no signature');
  });
});
