/**
 * A2A push receivers on private networks, with `@a2a-js/sdk`'s own client over real HTTP on the
 * dev server. By default the API refuses to register a URL whose host is a private address (in
 * any notation) or `localhost`, with the protocol's `RequestMalformedError`, and starts nothing:
 * neither a notifier nor, for a config sent with a message, the message's turn.
 *
 * At delivery the worker checks the address it connects to. To reach that check, a second API
 * here allows `localhost` and 127.0.0.1 while the worker allows nothing (as when a name resolved
 * to a public address at registration and to a private one now): the worker resolves `localhost`
 * through the OS (loopback on every machine, deterministic, no network needed) and refuses to
 * connect, and refuses the literal 127.0.0.1 as it is. Each notification is given up on at once,
 * never retried: the receiver gets nothing and the notifier ends with the task, all dropped.
 */
import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Message, type Task, type TaskPushNotificationConfig } from '@a2a-js/sdk';
import { ClientFactory, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTokenMap } from '../../api/auth.js';
import { taskIdFor } from '../../api/a2a/a2a-request-handler.js';
import type { A2aPushProgress } from '../../workflows/a2a/a2a-push-types.js';
import { a2aPushNotifierId } from '../../workflows/a2a/a2a-push-notifier.js';
import { serveApi, type ServedApi } from '../support/api-server.js';
import { noteStarted } from '../support/history-recorder.js';
import { startPushReceiver, type PushReceiver } from '../support/push-receiver.js';
import { testTools, use } from '../support/test-tools.js';
import { startTurnpike, type TurnpikeHarness } from '../support/turnpike-harness.js';
import { workflowExists } from '../support/workflow-exists.js';

let turnpike: TurnpikeHarness;
/** The default: no private receiver allowed. */
let strict: ServedApi;
/** Allows `localhost` and 127.0.0.1 at registration; the worker still allows nothing. */
let loose: ServedApi;
let receiver: PushReceiver;

const agents = { desk: { description: 'Acts on orders', model: { provider: 'scripted' as const, model: 'demo' }, tools: ['record_action', 'guarded_action'] } };

async function clientOf(served: ServedApi): Promise<Client> {
  const authorized: typeof fetch = (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), authorization: 'Bearer alice-token' } });
  return new ClientFactory({ transports: [new JsonRpcTransportFactory({ fetchImpl: authorized })] }).createFromUrl(`${served.base}/api/a2a/desk/`);
}

beforeAll(async () => {
  turnpike = await startTurnpike({ tools: testTools });
  strict = await serveApi(turnpike, { tokens: parseTokenMap('alice-token:alice'), a2a: { agents } });
  loose = await serveApi(turnpike, { tokens: parseTokenMap('alice-token:alice'), a2a: { agents, pushAllow: ['localhost', '127.0.0.1/32'] } });
  receiver = await startPushReceiver(() => 'private-token');
});
afterAll(async () => {
  await strict?.api.close();
  await loose?.api.close();
  await turnpike?.stop();
  await receiver?.close();
});

function message(text: string): Message {
  return { messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [], referenceTaskIds: [] };
}

async function parkedTask(client: Client, target: string): Promise<Task> {
  const task = (await client.sendMessage({ tenant: '', message: message(use('guarded_action', { target, count: 1 })), configuration: undefined, metadata: undefined })) as Task;
  expect(task.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
  return task;
}

function config(taskId: string, url: string, id: string): TaskPushNotificationConfig {
  return { tenant: '', id, taskId, url, token: 'private-token', authentication: undefined };
}

const exists = (workflowId: string) => workflowExists(turnpike.client, workflowId);

const refusal = (work: Promise<unknown>) => work.then(() => undefined, (error: { name: string; message: string }) => error);

describe('A2A push receivers on private networks', () => {
  it('refuses to register a private or localhost URL in any notation, with RequestMalformedError, and starts no notifier', async () => {
    const alice = await clientOf(strict);
    const task = await parkedTask(alice, 'private-1');
    const urls = [
      receiver.url,
      'http://2130706433/hook',
      'http://0x7f.1/hook',
      'http://[::ffff:127.0.0.1]/hook',
      'http://[::1]:8080/hook',
      'http://169.254.169.254/latest/meta-data/',
      'http://10.0.0.5/hook',
      'https://192.168.1.1/hook',
      'http://100.64.0.1/hook',
      'http://[fd00::1]/hook',
      'http://[fe80::1]/hook',
      'http://0.0.0.0/hook',
      'http://localhost:9/hook',
      'http://receiver.localhost/hook',
    ];
    for (const [index, url] of urls.entries()) {
      const refused = await refusal(alice.createTaskPushNotificationConfig(config(task.id, url, `private-${index}`)));
      expect(refused?.name, url).toBe('RequestMalformedError');
      expect(refused?.message, url).toMatch(/is refused: .*(private, loopback, link-local or reserved address|this machine's)/);
      expect(await exists(a2aPushNotifierId(task.id, `private-${index}`)), url).toBe(false);
    }
    const configs = await alice.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' });
    expect(configs.configs).toEqual([]);
    // A public URL is taken (its name is not resolved now).
    expect((await alice.createTaskPushNotificationConfig(config(task.id, 'https://hooks.example.com/a2a', 'public'))).id).toBe('public');
    await alice.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'public' });
    await alice.cancelTask({ tenant: '', id: task.id, metadata: undefined });
  });

  it('refuses a message whose push config names a private receiver before its turn starts', async () => {
    const alice = await clientOf(strict);
    const sent = message(use('record_action', { target: 'private-2', count: 1 }));
    const refused = await refusal(alice.sendMessage({ tenant: '', message: sent, configuration: { acceptedOutputModes: [], taskPushNotificationConfig: config('', 'http://169.254.169.254/hook', 'meta'), returnImmediately: false }, metadata: undefined }));
    expect(refused?.name).toBe('RequestMalformedError');
    expect(refused?.message).toContain('169.254.169.254');
    expect(await exists(taskIdFor('desk', 'alice', sent.messageId))).toBe(false);
  });

  it('refuses at delivery a receiver the worker does not allow: localhost as the OS resolves it, and 127.0.0.1; each notification is given up on at once, nothing is sent', async () => {
    const alice = await clientOf(loose);
    const task = await parkedTask(alice, 'private-3');
    const port = new URL(receiver.url).port;
    await alice.createTaskPushNotificationConfig(config(task.id, `http://localhost:${port}/a2a-push`, 'by-name'));
    await alice.createTaskPushNotificationConfig(config(task.id, receiver.url, 'by-address'));
    const handles = ['by-name', 'by-address'].map((id) => {
      const handle = turnpike.client.workflow.getHandle(a2aPushNotifierId(task.id, id));
      noteStarted(handle);
      return handle;
    });
    // While the task is parked: its input-required notification was dropped, not kept for a retry.
    for (const handle of handles) {
      let progress: A2aPushProgress | undefined;
      let failureType: string | null | undefined;
      for (let read = 0; read < 150 && !(progress && progress.dropped >= 1); read++) {
        const pending = (await handle.describe()).raw.pendingActivities?.[0];
        const details = pending?.heartbeatDetails?.payloads?.[0]?.data;
        if (details) progress = JSON.parse(Buffer.from(details).toString()) as A2aPushProgress;
        failureType = pending?.lastFailure?.applicationFailureInfo?.type;
        if (!(progress && progress.dropped >= 1)) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(progress).toMatchObject({ delivered: 0, dropped: 1, failures: 0, queue: [] });
      expect(failureType).toBe('A2aPushIdle');
    }
    await loose.client.approveToolCall(task.id, { approvalId: approvalIdOf(task), approved: true, approver: 'alice' });
    // The answer and the final status are dropped too, at once (a retried one would take minutes), and the notifiers end.
    for (const handle of handles) {
      const result = (await handle.result()) as { delivered: number; dropped: number };
      expect(result.delivered).toBe(0);
      expect(result.dropped).toBeGreaterThanOrEqual(3);
    }
    expect(receiver.attempts).toEqual([]);
  });
});

function approvalIdOf(task: Task): string {
  const waiting = task.status!.message!.parts.find((part) => part.content?.$case === 'data')!.content as { value: { waiting: { approvalId: string }[] } };
  return waiting.value.waiting[0]!.approvalId;
}
