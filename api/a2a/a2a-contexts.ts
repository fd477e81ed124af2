/**
 * An A2A context that spans several tasks: the first task of a context is a turn like any other
 * (its id `a2a-<agent>-<hash>`, which is also the context's id), and each later task of the
 * context is a turn of its own, `<contextId>/turn-<n>` (n = 2, 3, …), started with the history
 * its previous task ended with (that turn's whole transcript) and the new user message. So each
 * task is still a turn — read, streamed, cancelled, answered and notified as every task is — and
 * nothing is kept in the API process: the context's tasks are found by their ids, and the message
 * a later task was started for by its memo (`turnpikeA2aMessage`, a hash of the caller and the
 * messageId), so a retried message finds its task and starts nothing.
 *
 * A message to a context whose last task has not ended (it runs or waits for input) is refused
 * rather than queued: a queued task would have no turn to read until the earlier one ended, and
 * its history would depend on how that one ends. Two messages that race for the same next task
 * are told apart the same way: the one whose memo the turn does not carry is refused.
 *
 * A context is bounded, so that no length of it reaches Temporal's limits: at most
 * {@link MAX_CONTEXT_TASKS} tasks (finding the next one reads each earlier task's description),
 * and a history of at most {@link MAX_CONTEXT_HISTORY_BYTES} (each later task carries the whole
 * history in its input, and a start's payload is at most 2 MB). A message past either is refused
 * with `UnsupportedOperationError`, naming the bound: the caller starts a new context.
 */
import { createHash } from 'node:crypto';
import { WorkflowNotFoundError } from '@temporalio/client';
import { TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import type { Message } from '../../workflows/types/index.js';
import { isTurnEnded } from '../../workflows/types/turn-statuses.js';
import type { Caller } from '../auth.js';
import type { RouteContext } from '../route-context.js';

/** The memo field of a context's later task: which caller's message started it. */
export const A2A_MESSAGE_MEMO_KEY = 'turnpikeA2aMessage';

/** Starts a context's next task as a turn with the given history before the message. */
export type StartInContext = (taskId: string, history: Message[], memo: Record<string, string>) => Promise<void>;

/** Tasks in one context at most. */
export const MAX_CONTEXT_TASKS = 50;
/** The history a context's next task may start with, at most (bytes of JSON; images and documents of 128 KiB or more are references). */
export const MAX_CONTEXT_HISTORY_BYTES = 1_000_000;

/** The context of a task (shared with the worker's push notifications, which name it too). */
export { contextOf } from '../../activities/a2a-push/a2a-task-view.js';

/** The memo key of a caller's message. */
export function messageKey(identity: string, messageId: string): string {
  return createHash('sha256').update(`${identity}\n${messageId}`).digest('hex').slice(0, 40);
}

/**
 * The task of a message that names a `contextId`: the one it already started (a retry), or the
 * context's next task, started here. A context that is not a first task of this agent started by
 * this caller is not found, whoever else may read it.
 */
export async function taskInContext(routes: RouteContext, agent: string, caller: Caller, contextId: string, messageId: string, start: StartInContext): Promise<string> {
  const notFound = () => new TaskNotFoundError({ message: `Context not found: ${contextId}` });
  if (!new RegExp(`^a2a-${agent}-[0-9a-f]{40}$`).test(contextId)) throw notFound();
  const first = await routes.client.describeStart(contextId);
  if (!first || first.startedBy !== caller.identity) throw notFound();
  const key = messageKey(caller.identity, messageId);
  // The first task's own message, sent again with its contextId.
  if (contextId.endsWith(`-${key}`)) return contextId;
  let previous = contextId;
  for (let n = 2; ; n++) {
    const taskId = `${contextId}/turn-${n}`;
    if (n > MAX_CONTEXT_TASKS) throw new UnsupportedOperationError({ message: `Context ${contextId} has ${MAX_CONTEXT_TASKS} tasks, the most one context holds: start a new context (a message without contextId)` });
    const memo = await memoOf(routes, taskId);
    if (memo?.[A2A_MESSAGE_MEMO_KEY] === key) return taskId;
    if (memo !== undefined) {
      previous = taskId;
      continue;
    }
    const state = await routes.client.turnState(previous);
    if (!isTurnEnded(state.status)) {
      throw new UnsupportedOperationError({ message: `Task ${previous}, the last of context ${contextId}, has not ended (${state.status}): answer it with its taskId, or wait for it to end, before the context's next message` });
    }
    const history = await routes.client.turnTranscript(previous);
    const bytes = Buffer.byteLength(JSON.stringify(history));
    if (bytes > MAX_CONTEXT_HISTORY_BYTES) {
      throw new UnsupportedOperationError({ message: `Context ${contextId}'s history is ${bytes} bytes, over the ${MAX_CONTEXT_HISTORY_BYTES} a task may start with: start a new context (a message without contextId)` });
    }
    await start(taskId, history, { [A2A_MESSAGE_MEMO_KEY]: key });
    // Another message may have started this task first (the start finds the running turn).
    if ((await memoOf(routes, taskId))?.[A2A_MESSAGE_MEMO_KEY] !== key) {
      throw new UnsupportedOperationError({ message: `Another message to context ${contextId} started its next task (${taskId}) at the same time: send this one once that task has ended` });
    }
    return taskId;
  }
}

/** A workflow's memo, or undefined when there is no such workflow. */
async function memoOf(routes: RouteContext, workflowId: string): Promise<Record<string, unknown> | undefined> {
  try {
    return (await routes.client.client.workflow.getHandle(workflowId).describe()).memo ?? {};
  } catch (error) {
    if (error instanceof WorkflowNotFoundError || (error as { code?: number })?.code === 5) return undefined;
    throw error;
  }
}
