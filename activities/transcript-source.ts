/**
 * Turns the request a turn sends `callModel` into the whole model step the providers take:
 * a transcript sent by reference is completed from the worker's cache, or read from the turn
 * itself with the `transcript` query, through the worker's own Client (the activity context's,
 * with the worker's data converter), and checked against its hash (transcript-cache.ts).
 */
import { ApplicationFailure } from '@temporalio/common';
import type { Context } from '@temporalio/activity';
import { transcriptQuery } from '../workflows/definitions.js';
import type { Message, ModelStepInput, ModelStepRequest, ModelStepResult } from '../workflows/types.js';
import type { TranscriptCache, TranscriptSource } from './transcript-cache.js';

/** Runs `call` on the step `request` names, its transcript resolved. */
export async function resolveModelStep(
  request: ModelStepRequest,
  cache: TranscriptCache,
  context: Context,
  call: (input: ModelStepInput) => Promise<ModelStepResult>,
): Promise<ModelStepResult> {
  const { transcript, messages, ...step } = request;
  if (!transcript) {
    // A step of a turn recorded before history-by-reference: the whole transcript is inline.
    if (!Array.isArray(messages)) throw ApplicationFailure.nonRetryable('callModel needs messages or a transcript reference', 'InvalidModelStep');
    return call({ ...step, messages });
  }
  const run = context.info.workflowExecution;
  // A standalone activity has no turn to read the transcript from.
  if (!run) throw ApplicationFailure.nonRetryable('callModel with a transcript reference runs only in a turn', 'InvalidModelStep');
  const resolved = await cache.resolve(run.runId, transcript, readFromTurn(context, run));
  const result = await call({ ...step, messages: resolved });
  // A reply without tool calls ends the turn: its transcript will not be asked for again.
  if (!result.message.content.some((part) => part.type === 'tool-call')) cache.forget(run.runId);
  return result;
}

/** Reads messages from the activity's own workflow run, page by page. */
function readFromTurn(context: Context, { workflowId, runId }: { workflowId: string; runId: string }): TranscriptSource {
  return async (offset, to) => {
    const handle = context.client.workflow.getHandle(workflowId, runId);
    const messages: Message[] = [];
    while (offset + messages.length < to) {
      const start = offset + messages.length;
      const page = await handle.query(transcriptQuery, { offset: start, limit: to - start });
      if (!Array.isArray(page?.messages) || page.messages.length === 0) break;
      messages.push(...page.messages);
    }
    return messages;
  };
}
