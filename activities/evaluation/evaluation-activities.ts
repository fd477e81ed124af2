/**
 * The activities of an evaluation run (workflows/evaluation/evaluation-run.ts), on the evaluation
 * worker: building an evaluation turn's input from its original and the change, comparing the
 * two turns' results into the report's row, and grading it (./graders.ts). They only read, through
 * the worker's own client (`Context.current().client`: its connection, namespace and data
 * converter), so a retry is harmless (a model grader's model is asked again).
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import { readTranscript } from '../../workflows/context/fork-transcript.js';
import { forkReferenceOf } from '../../workflows/context/fork-reference.js';
import { transcriptQuery } from '../../workflows/messages/definitions.js';
import { compareTurns, type ComparedTurn } from '../../workflows/evaluation/compare-turns.js';
import type { EvaluationActivities, EvaluationRow, GradeEvaluationTurnInput, PrepareEvaluationTurnInput, PreparedEvaluationTurn } from '../../workflows/evaluation/evaluation-types.js';
import type { EvaluationGrade } from '../../workflows/evaluation/grader-types.js';
import type { AgentTurnInput, AgentTurnResult, Message } from '../../workflows/types/index.js';
import { gradeTurn, type GradingContext } from './graders.js';


/** A turn's input, from its latest run's start event; undefined when there is no such turn. */
async function turnInput(client: Client, turnId: string): Promise<AgentTurnInput | undefined> {
  let history;
  try {
    history = await client.workflow.getHandle(turnId).fetchHistory();
  } catch (error) {
    if (error instanceof Error && error.name === 'WorkflowNotFoundError') return undefined;
    throw error;
  }
  const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
  if (!started) return undefined;
  const { payloadConverter, payloadCodecs } = client.options.loadedDataConverter;
  let payloads = (started.input?.payloads ?? []) as Payload[];
  for (const codec of [...payloadCodecs].reverse()) payloads = await codec.decode(payloads);
  return payloadConverter.fromPayload<AgentTurnInput>(payloads[0]);
}

/**
 * The original's settings with the change: from step 0 its input messages again, from step k a
 * fork after step k. What would send it elsewhere or park it for reasons of its own is left out:
 * its model queue (its model calls run on the evaluation worker, which answers their tool calls),
 * its conversation, parent and budget (a budget reached would park for a person).
 */
export async function prepareEvaluationTurn(client: Client, { turnId, change, fromStep }: PrepareEvaluationTurnInput): Promise<PreparedEvaluationTurn> {
  const input = await turnInput(client, turnId);
  if (!input) return { error: `Turn ${turnId} not found` };
  const { runId } = await client.workflow.getHandle(turnId).describe();
  const { carried: _c, parentTurn: _p, notifyParent: _n, conversationId: _v, modelTaskQueue: _q, budget: _b, budgetIncrement: _i, ...settings } = input;
  const base: AgentTurnInput = { ...settings, notifyParent: false };
  if (fromStep > 0) {
    const transcript = await readTranscript((workflowId, run, request) => client.workflow.getHandle(workflowId, run).query(transcriptQuery, request), turnId, runId);
    const reference = forkReferenceOf(turnId, runId, input, transcript, fromStep);
    if (!reference) return { error: `Turn ${turnId} has no step ${fromStep} ending in tool results to fork after` };
    base.forkOf = reference;
    base.messages = [];
  }
  const { output, ...rest } = change;
  const changed: AgentTurnInput = { ...base, ...rest };
  if (output === null) delete changed.output;
  else if (output !== undefined) changed.output = output;
  return { input: changed };
}

/** A turn's result and how long its latest run took (start to close). */
async function readTurn(client: Client, turnId: string): Promise<ComparedTurn> {
  const handle = client.workflow.getHandle(turnId);
  const result = (await handle.result()) as AgentTurnResult;
  const described = await handle.describe();
  const latencyMs = described.closeTime ? described.closeTime.getTime() - described.startTime.getTime() : undefined;
  return { turnId, result, ...(latencyMs !== undefined ? { latencyMs } : {}) };
}

export async function compareEvaluationTurn(client: Client, { turnId, evaluationTurnId }: { turnId: string; evaluationTurnId: string }): Promise<EvaluationRow> {
  let original: ComparedTurn;
  try {
    original = await readTurn(client, turnId);
  } catch (error) {
    // An original that failed, was terminated or is gone has no result to compare with.
    return { turnId, evaluationTurnId, error: `The original turn has no result: ${error instanceof Error ? error.message : String(error)}` };
  }
  const evaluated = await readTurn(client, evaluationTurnId);
  // A fork's calls of steps 1..k are the original's own, carried: compared are those after them.
  const forkOf = (await turnInput(client, evaluationTurnId))?.forkOf;
  return compareTurns(original, evaluated, new Set(forkOf?.workflowId === turnId ? (forkOf.toolCallIds ?? []) : []));
}

/** The latest user message of a transcript, as text. */
function lastUserText(messages: readonly Message[] | undefined): string | undefined {
  const message = messages?.findLast((candidate) => candidate.role === 'user');
  if (!message) return undefined;
  if (typeof message.content === 'string') return message.content;
  return message.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n');
}

export async function gradeEvaluationTurn(client: Client, { turnId, evaluationTurnId, graders, row }: GradeEvaluationTurnInput, context: GradingContext): Promise<EvaluationGrade[]> {
  const [original, evaluated, input] = await Promise.all([readTurn(client, turnId), readTurn(client, evaluationTurnId), turnInput(client, turnId)]);
  const request = lastUserText(input?.messages);
  return gradeTurn(graders, { turnId, evaluationTurnId, ...(request !== undefined ? { request } : {}), original: original.result, evaluated: evaluated.result, row }, context);
}

/** What grading needs of the worker: its registered graders and its model step. */
export type EvaluationGrading = Omit<GradingContext, 'lastAttempt'>;

/** How often the run's activities heartbeat: well inside their heartbeat timeout (10 s, workflows/evaluation/evaluation-run.ts). */
export const EVALUATION_HEARTBEAT_MS = 2_000;

/**
 * Runs `read` with the running activity's client, heartbeating meanwhile: an attempt whose worker
 * died is tried again after the heartbeat timeout, not after the whole start-to-close timeout
 * (its lane of the run waits for it).
 */
async function alive<T>(read: (client: Client) => Promise<T>): Promise<T> {
  let context: Context;
  let client: Client;
  try {
    context = Context.current();
    client = context.client;
  } catch (error) {
    throw ApplicationFailure.nonRetryable(`An evaluation activity needs the worker's client: ${String(error)}`, 'EvaluationWithoutClient');
  }
  const keepAlive = setInterval(() => context.heartbeat(), EVALUATION_HEARTBEAT_MS);
  try {
    return await read(client);
  } finally {
    clearInterval(keepAlive);
  }
}

/** The activities, bound to the running activity's client. */
export function createEvaluationActivities(grading: EvaluationGrading): EvaluationActivities {
  return {
    prepareEvaluationTurn: (input: PrepareEvaluationTurnInput) => alive((client) => prepareEvaluationTurn(client, input)),
    compareEvaluationTurn: (input: { turnId: string; evaluationTurnId: string }) => alive((client) => compareEvaluationTurn(client, input)),
    gradeEvaluationTurn: (input: GradeEvaluationTurnInput) => {
      const { attempt, retryPolicy } = Context.current().info;
      const lastAttempt = retryPolicy?.maximumAttempts !== undefined && retryPolicy.maximumAttempts > 0 && attempt >= retryPolicy.maximumAttempts;
      return alive((client) => gradeEvaluationTurn(client, input, { ...grading, lastAttempt }));
    },
  };
}
