/**
 * A remote A2A agent's call cancelled with its turn (`defineA2aAgentTool`'s `cancel`, run by the
 * `cancelToolCall` activity): the remote task the call follows is asked to cancel (`CancelTask`).
 *
 * The task's id is in the call's heartbeat details, which Temporal drops once the turn cancels the
 * call's activity; so it is found again as a retried attempt finds it (a2a-remote-call.ts): the
 * task holding the call's message (its `messageId` comes from the call's idempotency key), among
 * the tasks changed since the call started (`ListTasks`); for an answer, the task answered, when
 * it holds the answer (one the answer never reached still waits for it, and is left alone).
 *
 * Best effort: a remote that serves no `ListTasks`, a task already ended, or one the remote says it
 * cannot cancel ends the cancellation with a note; only a remote that cannot be reached fails the
 * attempt (the turn tries a few times, then gives up).
 */
import { ApplicationFailure } from '@temporalio/common';
import type { Task } from '@a2a-js/sdk';
import { redactedFailure, redactText, workerSecrets } from '../providers/secret-redaction.js';
import type { ToolCancelContext } from '../tools.js';
import type { A2aRemoteSettings } from './a2a-remote-settings.js';
import { clientFor, findStarted, holdsMessage, loadSdk, messageIdOf } from './a2a-remote-call.js';
import { A2A_STATE, checkedTask, MalformedRemoteAnswer, stateName } from './a2a-task-result.js';

const ENDED: readonly number[] = [A2A_STATE.COMPLETED, A2A_STATE.FAILED, A2A_STATE.CANCELED, A2A_STATE.REJECTED];

/** Asks the remote to cancel the call's task; says what became of it. */
export async function cancelRemoteCall(settings: A2aRemoteSettings, input: unknown, context: ToolCancelContext): Promise<string> {
  const sdk = await loadSdk();
  const answering = typeof (input as { taskId?: unknown })?.taskId === 'string' ? (input as { taskId: string }).taskId : undefined;
  const messageId = messageIdOf(context.idempotencyKey);
  try {
    const client = await clientFor(settings, sdk);
    let task: Task | undefined;
    if (answering !== undefined) {
      const answered = checkedTask(await client.getTask({ tenant: '', id: answering }), answering);
      if (!holdsMessage(answered, messageId)) return `The remote task ${answering} did not receive this call's answer; it was left as it is (${stateName(answered)}).`;
      task = answered;
    } else {
      task = await findStarted(client, sdk, messageId, context.startedAtMs);
      if (!task) return "No remote task holding this call's message was found (or the remote agent does not list its tasks); nothing was cancelled.";
    }
    if (ENDED.includes(task.status?.state as number)) return `The remote task ${task.id} had already ended ${stateName(task)}.`;
    const canceled = checkedTask(await client.cancelTask({ tenant: '', id: task.id, metadata: undefined }), task.id);
    return `The remote task ${task.id} was asked to cancel; it is ${stateName(canceled)}.`;
  } catch (error) {
    // The remote's refusal (not cancelable, no such task, a malformed answer) is an answer: noted, not retried.
    if (error instanceof sdk.A2AError || error instanceof SyntaxError || error instanceof MalformedRemoteAnswer) {
      return redactText(`The remote agent did not cancel the call's task: ${error.message}`, workerSecrets());
    }
    const message = `The remote agent could not be reached to cancel the call's task: ${error instanceof Error ? error.message : String(error)}`;
    throw redactedFailure(ApplicationFailure.retryable(message, 'A2aRemoteUnavailable'), workerSecrets());
  }
}
