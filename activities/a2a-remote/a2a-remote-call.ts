/**
 * One attempt of a remote A2A agent's call (`defineA2aAgentTool`), inside `executeTool`:
 *
 * 1. The remote task's id, once known, is in the activity's heartbeat details (Temporal keeps
 *    them from one attempt to the next, on any worker). Without it, a retried attempt first
 *    looks for the task an earlier attempt may have started before it could record it (below),
 *    and only then sends the message, with `returnImmediately` so the remote answers at once.
 * 2. With it, the attempt reads the task (`GetTask`).
 * 3. A completed task answers the call (its artifacts as text); `input-required` answers it
 *    with the question and the task id; failed, rejected, canceled, auth-required fail it
 *    (not retried: the model reads why). A task still working ends the attempt with a
 *    retryable failure whose `nextRetryDelay` is the poll interval: no worker waits meanwhile.
 *
 * Idempotency: the message's `messageId` is derived from the call's idempotency key (the turn's
 * id and the tool call's id), the same on every attempt. A2A servers need not deduplicate by it
 * (the SDK's `DefaultRequestHandler` does not), so a retried attempt that has no task id looks
 * for a task holding that message: `ListTasks` (tasks changed since the call was scheduled) for
 * a new task, `GetTask` of the task being answered for an answer (read before every send of an
 * answer, which also keeps the question being answered from being taken for a new one). A remote
 * that serves no `ListTasks` gets the message again, with the same `messageId` (turnpike's own
 * A2A server finds the task it started from it).
 */
import { createHash } from 'node:crypto';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { redactedFailure, workerSecrets } from '../providers/secret-redaction.js';
import type { Message, Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { importOptional } from '../../peers/optional-packages.js';
import type { ToolExecutionContext } from '../tools.js';
import type { A2aRemoteSettings } from './a2a-remote-settings.js';
import { checkedTask, MalformedRemoteAnswer, messageAnswer, verdictOf } from './a2a-task-result.js';

/** What the call keeps across attempts (the activity's heartbeat details). */
interface Followed {
  a2aTaskId: string;
  /** An answer's call: the status of the task it answers, as it was before the answer was sent. */
  staleStatus?: string;
}

/** Tasks changed this long before the call was scheduled are looked at too (clocks differ). */
const CLOCK_SKEW_MS = 60_000;
const LIST_PAGES = 10;

export type Sdk = Awaited<ReturnType<typeof loadSdk>>;

export function loadSdk() {
  return importOptional('A remote A2A agent tool', ['@a2a-js/sdk'], async () => {
    const [client, errors] = await Promise.all([import('@a2a-js/sdk/client'), import('@a2a-js/sdk/errors')]);
    return { ClientFactory: client.ClientFactory, JsonRpcTransportFactory: client.JsonRpcTransportFactory, A2AError: errors.A2AError, TaskNotFoundError: errors.TaskNotFoundError };
  });
}

/** One client per tool and worker, made from the card on first use (and again after a failure). */
const clients = new Map<A2aRemoteSettings, Promise<Client>>();

export function clientFor(settings: A2aRemoteSettings, sdk: Sdk): Promise<Client> {
  let client = clients.get(settings);
  if (!client) {
    const factory = new sdk.ClientFactory({ transports: [new sdk.JsonRpcTransportFactory(settings.fetch ? { fetchImpl: settings.fetch } : {})] });
    client = settings.card ? factory.createFromAgentCard(settings.card as never) : factory.createFromUrl(settings.url!);
    clients.set(settings, client);
    client.catch(() => clients.delete(settings));
  }
  return client;
}

/** The message's id: the same for every attempt of the call, and nothing of the turn's ids in clear. */
export function messageIdOf(idempotencyKey: string): string {
  return `turnpike-${createHash('sha256').update(idempotencyKey).digest('hex').slice(0, 32)}`;
}

export async function callRemoteAgent(settings: A2aRemoteSettings, input: unknown, context: ToolExecutionContext): Promise<string> {
  const activity = Context.current();
  const { attempt, scheduledTimestampMs, heartbeatDetails } = activity.info;
  const sdk = await loadSdk();
  const answering = typeof (input as { taskId?: unknown })?.taskId === 'string' ? (input as { taskId: string }).taskId : undefined;
  const messageId = messageIdOf(context.idempotencyKey);
  let followed = heartbeatDetails as Followed | undefined;
  let task: Task | undefined;
  try {
    const client = await clientFor(settings, sdk);
    if (followed?.a2aTaskId === undefined) {
      let staleStatus: string | undefined;
      if (answering !== undefined) {
        // The task being answered, read first: an unknown one is refused before anything is
        // sent, and its question, once answered, must not be taken for a new one.
        const current = checkedTask(await client.getTask({ tenant: '', id: answering }), answering);
        if (holdsMessage(current, messageId)) task = current;
        else staleStatus = statusMark(current);
      } else if (attempt > 1) {
        task = await findStarted(client, sdk, messageId, scheduledTimestampMs);
      }
      if (!task) {
        const answer = await client.sendMessage({
          tenant: '',
          message: userMessage(messageId, settings.prompt(input), answering),
          configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
          metadata: undefined,
        });
        if (isMessage(answer)) return messageAnswer(answer);
        task = checkedTask(answer, answering);
      }
      followed = { a2aTaskId: task.id, ...(staleStatus !== undefined ? { staleStatus } : {}) };
      activity.heartbeat(followed);
    } else {
      task = checkedTask(await client.getTask({ tenant: '', id: followed.a2aTaskId, historyLength: 0 }), followed.a2aTaskId);
    }
    const taskId = task.id;
    let verdict = verdictOf(task, settings.toolName);
    // The question this call answers, still shown until the remote takes the answer up.
    if (verdict.kind === 'question' && statusMark(task) === followed.staleStatus) verdict = { kind: 'working', state: 'input-required (the answer not yet taken up)' };
    if (verdict.kind === 'answer' || verdict.kind === 'question') return verdict.output;
    if (verdict.kind === 'ended') throw ApplicationFailure.nonRetryable(verdict.error, 'A2aTaskEnded');
    if (Date.now() + settings.pollIntervalMs - scheduledTimestampMs > settings.timeoutMs) {
      await client.cancelTask({ tenant: '', id: taskId, metadata: undefined }).catch(() => undefined);
      throw ApplicationFailure.nonRetryable(
        `The remote agent's task ${taskId} was still ${verdict.state} after ${Math.round(settings.timeoutMs / 1000)} s, this tool's timeout; it was asked to cancel.`,
        'A2aTaskTimeout',
      );
    }
    throw ApplicationFailure.create({
      message: `The remote agent's task ${taskId} is ${verdict.state}; read again in ${settings.pollIntervalMs} ms`,
      type: 'A2aTaskWorking',
      nextRetryDelay: settings.pollIntervalMs,
    });
  } catch (error) {
    // The remote's words (its refusal, its failed task's status) may echo a credential it was
    // sent: every secret the worker knows, and key-shaped tokens, are redacted before the
    // failure reaches the turn's history (providers/secret-redaction.ts).
    throw redactedFailure(failureOf(error, sdk, followed?.a2aTaskId ?? answering, Date.now() - scheduledTimestampMs > settings.timeoutMs), workerSecrets());
  }
}

/** A task's status as the remote last set it: its message's id and its time. */
function statusMark(task: Task): string {
  return `${task.status?.state ?? ''}|${task.status?.message?.messageId ?? ''}|${task.status?.timestamp ?? ''}`;
}

export function holdsMessage(task: Task, messageId: string): boolean {
  return Array.isArray(task.history) && task.history.some((message) => message?.messageId === messageId);
}

/**
 * The task an earlier attempt of this call may have started before it could record it: one whose
 * history holds a message with this call's `messageId`, among the tasks changed since the call
 * was first scheduled.
 */
export async function findStarted(client: Client, sdk: Sdk, messageId: string, since: number): Promise<Task | undefined> {
  let pageToken = '';
  for (let page = 0; page < LIST_PAGES; page++) {
    let listed;
    try {
      listed = await client.listTasks({
        tenant: '',
        contextId: '',
        status: 0,
        pageSize: 100,
        pageToken,
        statusTimestampAfter: new Date(since - CLOCK_SKEW_MS).toISOString(),
        includeArtifacts: true,
      } as Parameters<Client['listTasks']>[0]);
    } catch (error) {
      // A remote that does not list tasks refuses it: the message goes again, under the same id.
      if (error instanceof sdk.A2AError) return undefined;
      throw error;
    }
    const found = (Array.isArray(listed?.tasks) ? listed.tasks : []).find((task) => holdsMessage(task, messageId));
    if (found) return checkedTask(found, undefined);
    if (!listed?.nextPageToken) return undefined;
    pageToken = listed.nextPageToken;
  }
  return undefined;
}

function userMessage(messageId: string, text: string, taskId: string | undefined): Message {
  return {
    messageId,
    contextId: '',
    taskId: taskId ?? '',
    role: 1, // ROLE_USER
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

function isMessage(answer: Message | Task): answer is Message {
  return typeof answer === 'object' && answer !== null && 'messageId' in answer && !('status' in answer);
}

/**
 * How an attempt's error ends it. Turnpike's own failures pass; a malformed answer or the
 * remote's refusal (A2A's errors: unknown task, unsupported operation, …) fail the call for good;
 * anything else (the network, a 5xx) is retried within the tool's timeout.
 */
function failureOf(error: unknown, sdk: Sdk, taskId: string | undefined, pastTimeout: boolean): ApplicationFailure {
  if (error instanceof ApplicationFailure) return error;
  if (error instanceof SyntaxError) return ApplicationFailure.nonRetryable(`The remote agent's answer is malformed: it is not JSON (${error.message}).`, 'A2aMalformedAnswer');
  if (error instanceof MalformedRemoteAnswer) return ApplicationFailure.nonRetryable(`The remote agent's answer is malformed: ${error.message}.`, 'A2aMalformedAnswer');
  if (error instanceof sdk.TaskNotFoundError) {
    return ApplicationFailure.nonRetryable(`The remote agent has no task ${taskId ?? ''}: ${messageOf(error)}`, 'A2aTaskNotFound');
  }
  if (error instanceof sdk.A2AError) return ApplicationFailure.nonRetryable(`The remote agent refused the request: ${messageOf(error)}`, 'A2aRemoteRefused');
  const message = `The remote agent could not be reached: ${messageOf(error)}`;
  return pastTimeout ? ApplicationFailure.nonRetryable(message, 'A2aRemoteUnavailable') : ApplicationFailure.retryable(message, 'A2aRemoteUnavailable');
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
