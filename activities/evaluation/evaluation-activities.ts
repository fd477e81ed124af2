/**
 * The activities of an evaluation run (workflows/evaluation/evaluation-run.ts), on the evaluation
 * worker: building an evaluation turn's input from its original and the change, and comparing the
 * two turns' results into the report's row. Both only read, through the worker's own client
 * (`Context.current().client`: its connection, namespace and data converter), so a retry is harmless.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import { forkReferenceAt, originalInput } from '../../client/turn-fork.js';
import { TurnpikeNotFoundError, TurnpikeRejectedError } from '../../client/errors.js';
import { compareTurns, type ComparedTurn } from '../../workflows/evaluation/compare-turns.js';
import type { EvaluationChange, EvaluationRow } from '../../workflows/evaluation/evaluation-types.js';
import type { AgentTurnInput, AgentTurnResult } from '../../workflows/types/index.js';

export interface PrepareEvaluationTurnInput {
  turnId: string;
  change: EvaluationChange;
  fromStep: number;
}

/** The evaluation turn's input, or why the original cannot be evaluated (a row's error, not a retry). */
export type PreparedEvaluationTurn = { input: AgentTurnInput } | { error: string };

/**
 * The original's settings with the change: from step 0 its input messages again, from step k a
 * fork after step k. What would send it elsewhere or park it for reasons of its own is left out:
 * its model queue (its model calls run on the evaluation worker, which answers their tool calls),
 * its conversation, parent and budget (a budget reached would park for a person).
 */
export async function prepareEvaluationTurn(client: Client, { turnId, change, fromStep }: PrepareEvaluationTurnInput): Promise<PreparedEvaluationTurn> {
  let input: AgentTurnInput;
  let runId: string;
  try {
    input = await originalInput({ client }, turnId);
    ({ runId } = await client.workflow.getHandle(turnId).describe());
  } catch (error) {
    if (error instanceof TurnpikeNotFoundError || (error instanceof Error && error.name === 'WorkflowNotFoundError')) return { error: `Turn ${turnId} not found` };
    throw error;
  }
  const { carried: _c, parentTurn: _p, notifyParent: _n, conversationId: _v, modelTaskQueue: _q, budget: _b, budgetIncrement: _i, ...settings } = input;
  const base: AgentTurnInput = { ...settings, notifyParent: false };
  if (fromStep > 0) {
    try {
      base.forkOf = await forkReferenceAt(client, turnId, runId, input, fromStep);
      base.messages = [];
    } catch (error) {
      if (error instanceof TurnpikeRejectedError) return { error: error.message };
      throw error;
    }
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
  const forkOf = (await originalInput({ client }, evaluationTurnId)).forkOf;
  return compareTurns(original, evaluated, new Set(forkOf?.workflowId === turnId ? (forkOf.toolCallIds ?? []) : []));
}

/** The two activities, bound to the running activity's client. */
export function createEvaluationActivities() {
  const client = () => {
    try {
      return Context.current().client;
    } catch (error) {
      throw ApplicationFailure.nonRetryable(`An evaluation activity needs the worker's client: ${String(error)}`, 'EvaluationWithoutClient');
    }
  };
  return {
    prepareEvaluationTurn: (input: PrepareEvaluationTurnInput) => prepareEvaluationTurn(client(), input),
    compareEvaluationTurn: (input: { turnId: string; evaluationTurnId: string }) => compareEvaluationTurn(client(), input),
  };
}

export type EvaluationActivities = ReturnType<typeof createEvaluationActivities>;
