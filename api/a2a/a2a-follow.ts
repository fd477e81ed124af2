/**
 * Following a task as its turn runs, from the turn's event stream (`TurnpikeClient.turnEvents`,
 * which any API process can read): a streaming call's updates, and the wait of a blocking
 * `SendMessage` until the task is terminal or waits for input. Each event that can change what
 * the task shows (a call parked, an approval's progress, a call's result, the end) reads the task
 * again; the others (deltas, steps, tool calls) do not, so a reader costs the turn a query per
 * call rather than per event. An MCP server's question publishes no event of its own: `GetTask`
 * shows it at once, a stream or a blocking send at the next event.
 * Reading ends with the turn's `turn-finished` event or when the caller goes.
 */
import type { StreamResponse, Task } from '@a2a-js/sdk';
import type { TurnpikeClient } from '../../client/turnpike-client.js';
import type { TurnEvent } from '../../workflows/types/turn-events.js';
import { isSettled, isTerminal, readTask, shownOf as shown } from './a2a-task-view.js';

const CHANGES: ReadonlySet<TurnEvent['type']> = new Set(['approval-requested', 'budget-requested', 'client-tool-requested', 'approval-progress', 'tool-result']);

/** The task after each event that may have changed it; the last is read after the turn ended. */
async function* taskChanges(client: TurnpikeClient, taskId: string, signal?: AbortSignal): AsyncGenerator<Task, void, undefined> {
  for await (const record of client.turnEvents(taskId, { ...(signal ? { signal } : {}) })) {
    if (record.event.type === 'turn-finished') break;
    if (!CHANGES.has(record.event.type)) continue;
    yield await readTask(client, taskId);
  }
  if (signal?.aborted) return;
  await client.turnResult(taskId);
  yield await readTask(client, taskId);
}

/** A blocking `SendMessage`: the task once it is terminal or interrupted (input-required). */
export async function settledTask(client: TurnpikeClient, taskId: string, signal?: AbortSignal): Promise<Task> {
  const now = await readTask(client, taskId);
  if (isSettled(now)) return now;
  for await (const task of taskChanges(client, taskId, signal)) if (isSettled(task)) return task;
  return readTask(client, taskId);
}

/**
 * A stream of the task: its snapshot first (as A2A asks), then a status update whenever its state
 * or waiting message changes, and at the end its artifacts and the final status.
 */
export async function* followTask(client: TurnpikeClient, taskId: string, signal?: AbortSignal): AsyncGenerator<StreamResponse, void, undefined> {
  let task = await readTask(client, taskId);
  yield { payload: { $case: 'task', value: task } };
  if (isTerminal(task)) return;
  let last = shown(task);
  for await (const next of taskChanges(client, taskId, signal)) {
    task = next;
    if (isTerminal(task)) break;
    if (shown(task) === last) continue;
    last = shown(task);
    yield { payload: { $case: 'statusUpdate', value: { taskId, contextId: task.contextId, status: task.status, metadata: undefined } } };
  }
  if (!isTerminal(task)) return;
  for (const artifact of task.artifacts) {
    yield { payload: { $case: 'artifactUpdate', value: { taskId, contextId: task.contextId, artifact, append: false, lastChunk: true, metadata: undefined } } };
  }
  yield { payload: { $case: 'statusUpdate', value: { taskId, contextId: task.contextId, status: task.status, metadata: undefined } } };
}
