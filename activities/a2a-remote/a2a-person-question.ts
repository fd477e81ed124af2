/**
 * A remote task's question (`input-required`) put to a person, for a tool defined with
 * `inputRequired: 'person'` (a2a-agent-tool.ts). It uses the turn's question machinery that MCP
 * servers' questions use (workflows/calls/elicitations.ts): the call's attempt parks the question
 * with the internal `parkElicitation` update, and the person answers it like any question, by
 * `submitToolResult` with the call's `toolCallId` and `output: { action: 'accept', content:
 * { answer } } | { action: 'decline' } | { action: 'cancel' }`.
 *
 * Unlike an MCP call, no attempt waits for the answer: the attempt that parks the question ends
 * (a retryable failure whose `nextRetryDelay` is the poll interval, as while the remote task works),
 * and each later attempt reads the answer once with the `elicitationAnswer` query. The question's
 * id travels in the heartbeat details with the remote task's; no worker slot is held while the
 * person thinks, and a worker that stops meanwhile loses nothing.
 */
import type { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { elicitationAnswerQuery, parkElicitationUpdate } from '../../workflows/messages/definitions.js';
import type { ElicitationAnswerState } from '../../workflows/types/elicitations.js';
import type { JsonSchema } from '../../workflows/types/index.js';

/** What the person is asked for: one line of text, sent to the remote task as its next message. */
export const PERSON_ANSWER_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    answer: { type: 'string', title: 'Answer', description: 'Sent to the remote agent as the next message of its task.', minLength: 1 },
  },
  required: ['answer'],
};

/** The person's answer as the call takes it. */
export type PersonsAnswer =
  | { kind: 'waiting' }
  | { kind: 'accept'; text: string }
  | { kind: 'refused'; action: 'decline' | 'cancel' }
  /** The question no longer waits and has no answer (replaced, or unknown to the turn): ask it again. */
  | { kind: 'gone' };

/**
 * Parks the remote agent's question in the turn, as a question for a person; returns its id.
 * `taken`, the question whose answer this call already sent: a retried attempt that asks the
 * same words again must not get that answer back (the turn hands an earlier attempt's answer to
 * an identical question), so the question is parked once more, as a new one.
 */
export async function parkQuestion(context: Context, toolCallId: string, question: string, taken: string | undefined): Promise<string> {
  const workflowId = context.info.workflowExecution?.workflowId;
  if (!workflowId) throw ApplicationFailure.nonRetryable('A remote agent question can only be put to a person from a turn', 'A2aQuestionRefused');
  const turn = context.client.workflow.getHandle(workflowId);
  const park = () =>
    turn.executeUpdate(parkElicitationUpdate, {
      args: [{ toolCallId, attempt: context.info.attempt, message: question, requestedSchema: PERSON_ANSWER_SCHEMA }],
    });
  try {
    let parked = await park();
    if (parked.elicitationId === taken) parked = await park();
    return parked.elicitationId;
  } catch (error) {
    // The turn refused it (the call no longer runs): nobody can answer. Anything else is retried.
    if (error instanceof WorkflowUpdateFailedError) {
      throw ApplicationFailure.nonRetryable(`The turn refused the remote agent's question: ${error.cause?.message ?? error.message}`, 'A2aQuestionRefused');
    }
    throw ApplicationFailure.retryable(`The remote agent's question could not be parked in the turn: ${messageOf(error)}`, 'A2aQuestionUnasked');
  }
}

/** The answer to a parked question, read once (the `elicitationAnswer` query). */
export async function readAnswer(context: Context, elicitationId: string): Promise<PersonsAnswer> {
  const workflowId = context.info.workflowExecution!.workflowId;
  let state: ElicitationAnswerState;
  try {
    state = await context.client.workflow.getHandle(workflowId).query(elicitationAnswerQuery, elicitationId);
  } catch (error) {
    throw ApplicationFailure.retryable(`The answer to the remote agent's question could not be read from the turn: ${messageOf(error)}`, 'A2aQuestionUnread');
  }
  if (state.state === 'open') return { kind: 'waiting' };
  if (state.state === 'gone') return { kind: 'gone' };
  const answer = state.answer;
  if (answer.action !== 'accept') return { kind: 'refused', action: answer.action };
  // The turn checked the content against PERSON_ANSWER_SCHEMA before it took the answer.
  return { kind: 'accept', text: String((answer.content as { answer?: unknown }).answer ?? '') };
}

/** The call's failure once the person declined or cancelled (or nobody answered in time: `cancel`). */
export function refusedFailure(action: 'decline' | 'cancel', taskId: string): ApplicationFailure {
  const who = action === 'decline' ? 'The person declined to answer' : 'The person cancelled (or nobody answered in time)';
  return ApplicationFailure.nonRetryable(
    `${who} the remote agent's question on its task ${taskId}; the remote task was asked to cancel.`,
    'A2aInputDeclined',
  );
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
