/**
 * One attempt of a remote A2A agent's call (`defineA2aAgentTool`), inside `executeTool`:
 *
 * 1. The remote task's id, once known, is in the activity's heartbeat details (Temporal keeps
 *    them from one attempt to the next, on any worker). Without it, a retried attempt first
 *    looks for the task an earlier attempt may have started before it could record it (below),
 *    and only then sends the message, with `returnImmediately` so the remote answers at once.
 * 2. With it, the attempt reads the task (`GetTask`).
 * 3. A completed task answers the call (its artifacts as text); `input-required` answers it
 *    with the question and the task id (or, with `inputRequired: 'person'`, parks the question
 *    in the turn for a person, see a2a-person-question.ts); failed, rejected, canceled,
 *    auth-required fail it (not retried: the model reads why). A task still working, or a
 *    question still waiting for its person, ends the attempt with a retryable failure whose
 *    `nextRetryDelay` is the poll interval: no worker waits meanwhile.
 * 4. With a person's question parked (its id in the heartbeat details too), the attempt reads its
 *    answer from the turn first, and sends a given answer to the remote task.
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
import { parkQuestion, readAnswer, refusedFailure } from './a2a-person-question.js';
import { checkedTask, MalformedRemoteAnswer, messageAnswer, statusText, verdictOf, type TaskVerdict } from './a2a-task-result.js';

/** What the call keeps across attempts (the activity's heartbeat details). */
interface Followed {
  a2aTaskId: string;
  /** An answer's call: the status of the task it answers, as it was before the answer was sent. */
  staleStatus?: string;
  /** `inputRequired: 'person'`: the question parked in the turn, and the remote status it asks about. */
  asked?: { elicitationId: string; status: string };
  /** `inputRequired: 'person'`: the last question whose answer was sent. */
  taken?: string;
}

type Asking = Followed & { asked: NonNullable<Followed['asked']> };

const WAITING_FOR_PERSON = "input-required (waiting for a person's answer)";

/** Tasks changed this long before the call was scheduled are looked at too (clocks differ). */
const CLOCK_SKEW_MS = 60_000;
const LIST_PAGES = 10;
/** How long a request to cancel the remote task is waited for. */
const CANCEL_WAIT_MS = 5_000;

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
        const answer = await client.sendMessage(sendRequest(messageId, settings.prompt(input), answering));
        if (isMessage(answer)) return messageAnswer(answer);
        task = checkedTask(answer, answering);
      }
      followed = { a2aTaskId: task.id, ...(staleStatus !== undefined ? { staleStatus } : {}) };
      activity.heartbeat(followed);
    } else if (followed.asked) {
      // A person's question is parked: its answer, once given, goes to the remote task.
      const taken = await takePersonsAnswer(client, activity, followed as Asking, context.idempotencyKey);
      if (typeof taken === 'string') return taken;
      followed = taken.followed;
      task = taken.task;
      if (followed !== heartbeatDetails) activity.heartbeat(followed);
    }
    const taskId = followed.a2aTaskId;
    if (!task && !followed.asked) task = checkedTask(await client.getTask({ tenant: '', id: taskId, historyLength: 0 }), taskId);
    let verdict: TaskVerdict = task ? verdictOf(task, settings.toolName) : { kind: 'working', state: WAITING_FOR_PERSON };
    // The question this call answers, still shown until the remote takes the answer up.
    if (task && verdict.kind === 'question' && statusMark(task) === followed.staleStatus) verdict = { kind: 'working', state: 'input-required (the answer not yet taken up)' };
    if (task && verdict.kind === 'question' && settings.inputRequired === 'person') {
      const elicitationId = await parkQuestion(activity, context.toolCallId, statusText(task), followed.taken);
      followed = { ...followed, asked: { elicitationId, status: statusMark(task) } };
      activity.heartbeat(followed);
      verdict = { kind: 'working', state: WAITING_FOR_PERSON };
    }
    if (verdict.kind === 'answer' || verdict.kind === 'question') return verdict.output;
    if (verdict.kind === 'ended') throw ApplicationFailure.nonRetryable(verdict.error, 'A2aTaskEnded');
    if (Date.now() + settings.pollIntervalMs - scheduledTimestampMs > settings.timeoutMs) {
      await askToCancel(client, taskId);
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

/**
 * The answer to the person's question, read once: none yet (the call keeps waiting); declined or
 * cancelled (the remote task is asked to cancel, and the call fails); gone (asked again); or
 * given, and then sent to the remote task as its next message, once: its `messageId` is derived
 * from the call's and the question's ids, and the task is read first, so an attempt that sent it
 * and died is not followed by a second send.
 */
async function takePersonsAnswer(client: Client, activity: Context, followed: Asking, idempotencyKey: string): Promise<{ followed: Followed; task?: Task } | string> {
  const { a2aTaskId, asked, taken } = followed;
  const answer = await readAnswer(activity, asked.elicitationId);
  if (answer.kind === 'waiting') return { followed };
  if (answer.kind === 'refused') {
    await askToCancel(client, a2aTaskId);
    throw refusedFailure(answer.action, a2aTaskId);
  }
  if (answer.kind === 'gone') return { followed: { a2aTaskId, ...(taken !== undefined ? { taken } : {}) } };
  const answerId = messageIdOf(`${idempotencyKey}/${asked.elicitationId}`);
  let task = checkedTask(await client.getTask({ tenant: '', id: a2aTaskId }), a2aTaskId);
  // Not sent when the remote moved on meanwhile (its question is no longer the one asked).
  if (!holdsMessage(task, answerId) && statusMark(task) === asked.status) {
    const sent = await client.sendMessage(sendRequest(answerId, answer.text, a2aTaskId));
    if (isMessage(sent)) return messageAnswer(sent);
    task = checkedTask(sent, a2aTaskId);
  }
  return { followed: { a2aTaskId, staleStatus: asked.status, taken: asked.elicitationId }, task };
}

/** Best effort, and bounded: a remote that does not answer a cancel does not hold the attempt. */
async function askToCancel(client: Client, taskId: string): Promise<void> {
  await client.cancelTask({ tenant: '', id: taskId, metadata: undefined }, { signal: AbortSignal.timeout(CANCEL_WAIT_MS) }).catch(() => undefined);
}

function sendRequest(messageId: string, text: string, taskId: string | undefined): Parameters<Client['sendMessage']>[0] {
  return {
    tenant: '',
    message: userMessage(messageId, text, taskId),
    configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
    metadata: undefined,
  };
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
  // The turn not reached to park or read a person's question: retried, as the remote is, until the timeout.
  if (error instanceof ApplicationFailure && pastTimeout && !error.nonRetryable && (error.type === 'A2aQuestionUnasked' || error.type === 'A2aQuestionUnread')) {
    return ApplicationFailure.nonRetryable(error.message, error.type);
  }
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
