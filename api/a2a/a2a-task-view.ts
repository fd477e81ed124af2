/**
 * Reading a turn as an A2A task through the TurnpikeClient, so any API process answers for any
 * task. The mapping itself (states, status message, answer artifact) is shared with the push
 * notifications the worker sends: activities/a2a-push/a2a-task-view.ts. A context's later task
 * is read here with its context's id (a2a-contexts.ts).
 */
import type { Task } from '@a2a-js/sdk';
import type { TurnpikeClient } from '../../client/turnpike-client.js';
import { isTurnEnded } from '../../workflows/types/turn-statuses.js';
import type { TurnState } from '../../workflows/types/index.js';
import { taskFrom } from '../../activities/a2a-push/a2a-task-view.js';
import { contextOf } from './a2a-contexts.js';

export { agentMessage, dataPart, isSettled, isTerminal, shownOf, taskFrom, textPart } from '../../activities/a2a-push/a2a-task-view.js';

/** Reads the task of a turn: its state (or the one given, just read), and its result once it ended. */
export async function readTask(client: TurnpikeClient, taskId: string, read?: TurnState): Promise<Task> {
  const state = read ?? (await client.turnState(taskId));
  return inContext(taskFrom(taskId, state, isTurnEnded(state.status) ? await client.turnResult(taskId) : undefined));
}

/** A context's later task carries its context's id (a2a-contexts.ts), and so does its status message. */
function inContext(task: Task): Task {
  const contextId = contextOf(task.id);
  if (contextId === task.contextId) return task;
  const message = task.status?.message ? { ...task.status.message, contextId } : undefined;
  return { ...task, contextId, ...(task.status ? { status: { ...task.status, message } } : {}) };
}
