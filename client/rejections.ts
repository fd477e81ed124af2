/**
 * How a refused or failed message reads to a caller of `TurnpikeClient`: the rejection the
 * workflow's validator gave (`TurnpikeRejectedError` with its type), a workflow that does not
 * exist (`TurnpikeNotFoundError`), or a message refused here before it is sent.
 */
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { messageProblem } from '../workflows/messages/field-limits.js';
import { isRejectionType } from '../workflows/messages/rejection-types.js';
import { TurnpikeNotFoundError, TurnpikeRejectedError } from './errors.js';

/** Temporal's words for an update that met a closed workflow, or one that closed while it waited. */
function isClosedMessage(message: string): boolean {
  return /already completed|aborted by closing workflow/i.test(message);
}

/** The rejection of a message that reached a turn once it had ended, or as it ended. */
export function turnEnded(): TurnpikeRejectedError {
  return new TurnpikeRejectedError('The turn has already ended; nothing in it is waiting for a decision or result', 'TurnAlreadyEnded');
}

/** Unwraps a failed update into the rejection the workflow's validator gave. */
export async function rejections<T>(promise: Promise<T>): Promise<T> {
  try {
    return await promise;
  } catch (error) {
    if (error instanceof WorkflowUpdateFailedError) {
      const cause = error.cause as { message?: string; type?: string } | undefined;
      // Temporal's own failure of an update the workflow accepted but had not answered when it closed.
      if (cause?.type === 'AcceptedUpdateCompletedWorkflow') throw turnEnded();
      const message = cause?.message ?? error.message;
      // A worker older or newer than this client may refuse with a type it does not know: keep that type in the message.
      if (isRejectionType(cause?.type)) throw new TurnpikeRejectedError(message, cause.type);
      throw new TurnpikeRejectedError(cause?.type ? `${cause.type}: ${message}` : message, 'Rejected');
    }
    // Updates on a workflow that does not exist, or no longer runs, come back as not found
    // (WorkflowNotFoundError, or gRPC NOT_FOUND = 5); "already completed" is a turn that ended,
    // and "aborted by closing workflow" one that ended while the update waited for it.
    const notFound = error instanceof WorkflowNotFoundError || (error as { code?: number })?.code === 5;
    if (notFound) {
      const message = (error as Error).message ?? 'not found';
      if (isClosedMessage(message)) throw turnEnded();
      throw new TurnpikeNotFoundError(message);
    }
    throw error;
  }
}

/**
 * Refuses a message over the turn's size limits before it is sent, as the turn would: the turn
 * refuses it too, but the SDK sends every update's request back with its answer, and a burst of
 * large ones can fail the turn's workflow task while they are in flight.
 */
export function refuseOversized(name: 'approveToolCall' | 'delegateApproval' | 'submitToolResult', message: unknown): void {
  const problem = messageProblem(name, message);
  if (problem) throw new TurnpikeRejectedError(problem, 'PayloadTooLarge');
}
