/**
 * Turns the request a turn sends `callModel` into the whole model step the providers take:
 * a transcript sent by reference is completed from the worker's cache, or read from the turn
 * itself with the `transcript` query, through the worker's own Client (the activity context's,
 * with the worker's data converter), and checked against its hash (transcript-cache.ts); so is
 * a tool list sent by its hash (`modelTools` query, tool-set-cache.ts).
 */
import { ApplicationFailure } from '@temporalio/common';
import type { Context } from '@temporalio/activity';
import { modelToolsQuery, transcriptQuery } from '../workflows/messages/definitions.js';
import type { Message, ModelStepInput, ModelStepRequest, ModelStepResult, ModelToolSpec } from '../workflows/types/index.js';
import type { ToolSetCache } from './tool-set-cache.js';
import type { TranscriptCache, TranscriptSource } from './transcript-cache.js';

/** The worker's caches a model step is resolved from. */
export interface ModelStepCaches {
  transcripts: TranscriptCache;
  toolSets: ToolSetCache;
}

/** Runs `call` on the step `request` names, its transcript and tools resolved. */
export async function resolveModelStep(
  request: ModelStepRequest,
  caches: ModelStepCaches,
  context: Context,
  call: (input: ModelStepInput) => Promise<ModelStepResult>,
): Promise<ModelStepResult> {
  const { transcript, messages, tools, toolsHash, ...step } = request;
  const run = context.info.workflowExecution;
  if (!transcript) {
    // A step run outside a turn: the whole transcript is inline.
    if (!Array.isArray(messages)) throw ApplicationFailure.nonRetryable('callModel needs messages or a transcript reference', 'InvalidModelStep');
    return call({ ...step, messages, tools: await resolveTools(tools, toolsHash, caches.toolSets, context, run) });
  }
  // A standalone activity has no turn to read the transcript from.
  if (!run) throw ApplicationFailure.nonRetryable('callModel with a transcript reference runs only in a turn', 'InvalidModelStep');
  const [resolved, offered] = await Promise.all([
    caches.transcripts.resolve(run.runId, transcript, readFromTurn(context, run)),
    resolveTools(tools, toolsHash, caches.toolSets, context, run),
  ]);
  const result = await call({ ...step, messages: resolved, tools: offered });
  // A reply without tool calls ends the turn (unless it is a typed answer the turn may send back
  // for correction): its transcript will not be asked for again.
  if (!step.output && !result.message.content.some((part) => part.type === 'tool-call')) caches.transcripts.forget(run.runId);
  return result;
}

/** The step's tools: inline (every turn before tools by reference), or by hash. */
async function resolveTools(
  tools: ModelToolSpec[] | undefined,
  hash: string | undefined,
  cache: ToolSetCache,
  context: Context,
  run: { workflowId: string; runId: string } | undefined,
): Promise<ModelToolSpec[]> {
  if (hash === undefined) {
    if (!Array.isArray(tools)) throw ApplicationFailure.nonRetryable('callModel needs tools or a toolsHash', 'InvalidModelStep');
    return tools;
  }
  if (tools !== undefined && !Array.isArray(tools)) throw ApplicationFailure.nonRetryable('callModel: tools must be a list', 'InvalidModelStep');
  return cache.resolve(hash, tools, async () => {
    if (!run) throw ApplicationFailure.nonRetryable('callModel with a toolsHash and no tools runs only in a turn', 'InvalidModelStep');
    return context.client.workflow.getHandle(run.workflowId, run.runId).query(modelToolsQuery);
  });
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
