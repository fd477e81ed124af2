/**
 * Turns the request a turn sends `callModel` into the whole model step the providers take:
 * a transcript sent by reference is completed from the worker's cache, or read from the turn
 * itself with the `transcript` query, through the worker's own Client (the activity context's,
 * with the worker's data converter), and checked against its hash (transcript-cache.ts); so is
 * a tool list sent by its hash (`modelTools` query, tool-set-cache.ts).
 */
import { ApplicationFailure, WorkflowNotFoundError } from '@temporalio/common';
import type { Context } from '@temporalio/activity';
import { modelToolsQuery, transcriptQuery } from '../workflows/messages/definitions.js';
import { readTranscript, type TranscriptQuery } from '../workflows/context/fork-transcript.js';
import { extendTranscriptHash, TRANSCRIPT_HASH_START } from '../workflows/context/transcript-hash.js';
import type { ForkReference, ModelStepInput, ModelStepRequest, ModelStepResult, ModelToolSpec } from '../workflows/types/index.js';
import type { ToolSetCache } from './tool-set-cache.js';
import { TRANSCRIPT_MISMATCH, type TranscriptCache, type TranscriptSource } from './transcript-cache.js';

/**
 * Error type of a fork's model step whose prefix cannot be read: the turn it was forked from is
 * gone (deleted, or past the namespace's retention), or no longer answers the messages the fork
 * was made from. Not retried: the fork cannot go on without them.
 */
export const FORK_ORIGINAL_GONE = 'ForkOriginalGone';

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
    caches.transcripts.resolve(run.runId, transcript, readFromTurn(context, run, transcript.prefix)),
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

/**
 * Reads messages from the activity's own workflow run, page by page; a fork's prefix from the run
 * it was forked from (fork-transcript.ts), checked against the fork's `prefixHash`.
 */
function readFromTurn(context: Context, run: { workflowId: string; runId: string }, prefix?: ForkReference): TranscriptSource {
  const query: TranscriptQuery = async (workflowId, runId, request) => {
    try {
      return await context.client.workflow.getHandle(workflowId, runId).query(transcriptQuery, request);
    } catch (error) {
      if (prefix && workflowId !== run.workflowId && error instanceof WorkflowNotFoundError) throw originalGone(prefix, `it is gone (${error.message})`);
      throw error;
    }
  };
  return async (offset, to) => {
    const messages = await readTranscript(query, run.workflowId, run.runId, offset, to);
    if (!prefix || offset >= prefix.prefixLength) return messages;
    const wanted = Math.min(to, prefix.prefixLength) - offset;
    if (messages.length < wanted) throw originalGone(prefix, `it answered ${messages.length} of the ${wanted} messages asked for`);
    if (offset === 0 && extendTranscriptHash(TRANSCRIPT_HASH_START, messages.slice(0, prefix.prefixLength)).hash !== prefix.prefixHash) {
      throw ApplicationFailure.nonRetryable(`The messages read from turn ${prefix.workflowId} (run ${prefix.runId}) do not match the prefix this fork was made from; the model was not called.`, TRANSCRIPT_MISMATCH);
    }
    return messages;
  };
}

function originalGone(prefix: ForkReference, why: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(
    `This turn is a fork of turn ${prefix.workflowId} at step ${prefix.atStep} and reads its first ${prefix.prefixLength} messages from that turn's run ${prefix.runId}, but ${why}; the model was not called.`,
    FORK_ORIGINAL_GONE,
  );
}
