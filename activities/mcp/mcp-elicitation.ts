/**
 * An MCP server's question (`elicitation/create`) while one of its tools runs, put to the turn
 * that made the call: parked there like a client tool, and answered by a person. The call's
 * activity asks it; the answer goes back to the server on the call's own connection.
 */
import type { Context } from '@temporalio/activity';
import { WorkflowUpdateStage, type WorkflowHandle } from '@temporalio/client';
import type { ElicitRequest, ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { awaitElicitationAnswerUpdate, elicitationAnswerQuery, parkElicitationUpdate } from '../../workflows/messages/definitions.js';
import type { ElicitationAnswerState } from '../../workflows/calls/elicitations.js';
import type { ExecuteToolInput, JsonSchema } from '../../workflows/types/index.js';

/** How often a call waiting for an answer asks its turn: an answer reaches the server within this. */
const ELICITATION_POLL_MS = 500;

/**
 * A question from the server while this call runs: parked in the turn (the `parkElicitation`
 * update), then awaited (the `awaitElicitationAnswer` update, a long poll; or, when the turn
 * refuses it, by polling `elicitationAnswer`) while the call keeps heartbeating. The MCP
 * request stays open meanwhile; if this worker dies, so does the connection, and the retried
 * call asks again (see workflows/calls/elicitations.ts).
 */
export async function askTheTurn(context: Context, request: ExecuteToolInput, params: ElicitRequest['params'], signal: AbortSignal): Promise<ElicitResult> {
  // `context` is this call's, passed in: the MCP client runs this handler in the async context
  // of whichever activity opened the connection, so `Context.current()` here would be wrong.
  const workflowId = context.info.workflowExecution?.workflowId;
  if (!('requestedSchema' in params) || !workflowId) return { action: 'decline' };
  const turn = context.client.workflow.getHandle(workflowId);
  const parked = await turn.executeUpdate(parkElicitationUpdate, {
    args: [{ toolCallId: request.toolCallId, attempt: context.info.attempt, message: params.message, requestedSchema: params.requestedSchema as JsonSchema }],
  });
  if (parked.answer) return parked.answer as ElicitResult;
  const awaited = await awaitAnswer(turn, parked.elicitationId, context.cancellationSignal, signal);
  if (awaited === 'stopped') return stopped(context);
  if (awaited) return answerOf(awaited);
  for (;;) {
    if (context.cancellationSignal.aborted || signal.aborted) return stopped(context);
    // A query that fails (the server is briefly unreachable) is asked again at the next poll.
    const answer = await turn.query(elicitationAnswerQuery, parked.elicitationId).catch(() => undefined);
    if (answer && answer.state !== 'open') return answerOf(answer);
    await context.sleep(ELICITATION_POLL_MS).catch(() => undefined);
  }
}

/**
 * The answer by long poll, or `undefined` when the turn refused to wait that way (enough calls
 * already do, or it runs workflow code from before the update) or the poll failed: then the
 * caller polls. `stopped` when this attempt or the server's request ended first.
 */
async function awaitAnswer(
  turn: WorkflowHandle,
  elicitationId: string,
  cancellation: AbortSignal,
  request: AbortSignal,
): Promise<ElicitationAnswerState | 'stopped' | undefined> {
  // Refused or failed, at its start or later: undefined, and the caller polls.
  const waiting = turn
    .startUpdate(awaitElicitationAnswerUpdate, { args: [elicitationId], waitForStage: WorkflowUpdateStage.ACCEPTED })
    .then((update) => update.result())
    .catch(() => undefined);
  let onAbort!: () => void;
  const stopped = new Promise<'stopped'>((resolve) => {
    onAbort = () => resolve('stopped');
    if (cancellation.aborted || request.aborted) onAbort();
    cancellation.addEventListener('abort', onAbort, { once: true });
    request.addEventListener('abort', onAbort, { once: true });
  });
  try {
    // The update itself completes when the call ends, which closes the question.
    return await Promise.race([waiting, stopped]);
  } finally {
    cancellation.removeEventListener('abort', onAbort);
    request.removeEventListener('abort', onAbort);
  }
}

/**
 * This attempt is ending (the turn was cancelled, the worker shuts down): answer nothing — the
 * server must not take "cancel" for the person's answer, and a retried call asks again. Else
 * the server withdrew its question, and `cancel` goes nowhere.
 */
function stopped(context: Context): ElicitResult {
  if (context.cancellationSignal.aborted) throw context.cancellationSignal.reason;
  return { action: 'cancel' };
}

/** What the server is told once the question is answered, expired (`cancel`) or gone (`cancel`). */
function answerOf(state: ElicitationAnswerState): ElicitResult {
  return state.state === 'answered' ? (state.answer as ElicitResult) : { action: 'cancel' };
}
