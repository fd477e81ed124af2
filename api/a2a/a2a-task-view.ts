/**
 * Reading a turn as an A2A task through the TurnpikeClient, so any API process answers for any
 * task. The mapping itself (states, status message, answer artifact) is shared with the push
 * notifications the worker sends: activities/a2a-push/a2a-task-view.ts, which gives a context's
 * later task its context's id (a2a-contexts.ts) for both.
 */
import type { Task } from '@a2a-js/sdk';
import type { TurnpikeClient } from '../../client/turnpike-client.js';
import { isTurnEnded } from '../../workflows/types/turn-statuses.js';
import type { TurnState } from '../../workflows/types/index.js';
import { taskFrom } from '../../activities/a2a-push/a2a-task-view.js';

export { agentMessage, dataPart, isSettled, isTerminal, shownOf, taskFrom, textPart } from '../../activities/a2a-push/a2a-task-view.js';

/** Reads the task of a turn: its state (or the one given, just read), and its result once it ended. */
export async function readTask(client: TurnpikeClient, taskId: string, read?: TurnState): Promise<Task> {
  const state = read ?? (await client.turnState(taskId));
  return taskFrom(taskId, state, isTurnEnded(state.status) ? await client.turnResult(taskId) : undefined);
}
