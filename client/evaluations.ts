/**
 * `TurnpikeClient.evaluate` and `evaluationReport` (docs/evaluations.md): an evaluation run over
 * recorded turns, started as a `turnpikeEvaluation` workflow on the evaluation task queue, whose
 * worker (`createWorker({ evaluation })`) answers the turns' tools from their records.
 */
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import { evaluationReportQuery } from '../workflows/evaluation/evaluation-query.js';
import { defaultEvaluationQueue, EVALUATION_WORKFLOW, MAX_EVALUATION_TURNS, type EvaluationBudget, type EvaluationChange, type EvaluationReport, type EvaluationRunInput } from '../workflows/evaluation/evaluation-types.js';
import { gradersProblem, type GraderSpec } from '../workflows/evaluation/grader-types.js';
import { AGENT_TURN_WORKFLOW } from '../workflows/messages/definitions.js';
import type { turnpikeEvaluation } from '../workflows/registered-workflows.js';
import { TurnpikeNotFoundError, TurnpikeRejectedError } from './errors.js';
import { rejections } from './rejections.js';
import { STARTED_BY_MEMO_KEY } from './listings.js';
import { refuseWithoutTenantAttribute, startPlacement, type TurnPriority } from './tenants.js';

export interface EvaluateOptions {
  /** A visibility query naming the turns (e.g. `AgentTurnStatus="completed" AND StartTime > "…"`); only ended `agentTurn` runs not on the evaluation queue are taken. */
  query?: string;
  /** The turns, by id (instead of `query`). */
  turnIds?: string[];
  change: EvaluationChange;
  /** 0 (default): each turn again from its input messages; k ≥ 1: from after its step k, as `forkTurn`. */
  fromStep?: number;
  /** Evaluation turns at once (default 4). */
  concurrency?: number;
  /** Stop starting evaluation turns once those evaluated spent this much. */
  budget?: EvaluationBudget;
  /**
   * Graders of each evaluated turn (docs/evaluations.md, "Graders"): the name of a function
   * registered on the evaluation worker (`evaluation.graders`), or `{ name, rubric, model, passScore? }`
   * for a model that grades with a rubric. At most 4, names unique.
   */
  graders?: GraderSpec[];
  /** Most turns a query takes (default and most 1,000). */
  limit?: number;
  /** The run's id (default `eval-<time>-<random>`); no `/`. */
  evaluationId?: string;
  /** The evaluation task queue (default: the client's task queue with `-eval` after it, as `createWorker({ evaluation })`'s). */
  taskQueue?: string;
  /**
   * The tenant the run is for: its `TurnpikeTenant` search attribute, and Temporal's fairness key
   * on the run's tasks and, inherited, on its evaluation turns' (docs/tenants-and-capacity.md).
   */
  tenant?: string;
  /**
   * Temporal's priority of the run's tasks, inherited by its evaluation turns and their activities:
   * `batch` by default, so that an evaluation never goes before production turns on shared workers.
   */
  priority?: TurnPriority;
  /** Who starts the run, kept in its memo (`STARTED_BY_MEMO_KEY`): the HTTP API records its caller, and only that caller (or an admin) reads the report there. */
  startedBy?: string;
}

export interface EvaluateResult {
  evaluationId: string;
  turns: number;
}

function refuse(message: string): never {
  throw new TurnpikeRejectedError(`Invalid evaluate: ${message}`, 'InvalidRequest');
}

function checkedRun(options: EvaluateOptions): void {
  if (options === null || typeof options !== 'object') refuse('expected an object { query | turnIds, change, ... }');
  if ((options.query === undefined) === (options.turnIds === undefined)) refuse('give exactly one of query and turnIds');
  if (options.turnIds && (!Array.isArray(options.turnIds) || options.turnIds.some((id) => typeof id !== 'string' || id === ''))) refuse('turnIds must be an array of turn ids');
  if (options.change === null || typeof options.change !== 'object') refuse('change must be an object { model?, system?, tools?, output?, maxSteps? }');
  if (options.fromStep !== undefined && !(Number.isInteger(options.fromStep) && options.fromStep >= 0)) refuse(`fromStep must be a whole number of at least 0, not ${String(options.fromStep)}`);
  if (options.concurrency !== undefined && !(Number.isInteger(options.concurrency) && options.concurrency >= 1 && options.concurrency <= 100)) refuse(`concurrency must be a whole number from 1 to 100, not ${String(options.concurrency)}`);
  for (const key of ['tokens', 'costUsd'] as const) {
    const value = options.budget?.[key];
    if (value !== undefined && !(typeof value === 'number' && value > 0)) refuse(`budget.${key} must be a number above 0`);
  }
  if (options.graders !== undefined) {
    const problem = gradersProblem(options.graders);
    if (problem !== undefined) refuse(problem);
  }
  if (options.startedBy !== undefined && (typeof options.startedBy !== 'string' || options.startedBy === '')) refuse('startedBy must be a non-empty string');
  if (options.evaluationId !== undefined && (typeof options.evaluationId !== 'string' || options.evaluationId === '' || options.evaluationId.includes('/'))) refuse('evaluationId must be a non-empty string without "/"');
}

/** The visibility query of the turns an evaluation takes from `query`: ended `agentTurn` runs, not on the evaluation queue. */
export function evaluableTurnsQuery(query: string, evaluationQueue: string): string {
  return `(${query}) AND WorkflowType = "${AGENT_TURN_WORKFLOW}" AND ExecutionStatus = "Completed" AND TaskQueue != "${evaluationQueue.replace(/"/g, '\\"')}"`;
}

/** The ended turns a visibility query names, oldest first, at most `limit`; evaluation turns left out. */
export async function turnsOfQuery(client: Client, query: string, evaluationQueue: string, limit: number): Promise<string[]> {
  const full = evaluableTurnsQuery(query, evaluationQueue);
  const found: Array<{ id: string; at: number }> = [];
  for await (const execution of client.workflow.list({ query: full })) {
    found.push({ id: execution.workflowId, at: execution.startTime.getTime() });
    if (found.length > limit) refuse(`the query names more than ${limit} turns; narrow it or raise limit (at most ${MAX_EVALUATION_TURNS})`);
  }
  return found.sort((a, b) => a.at - b.at).map((turn) => turn.id);
}

export async function evaluate(starter: { client: Client; taskQueue: string; tenantWeights?: Readonly<Record<string, number>> }, options: EvaluateOptions): Promise<EvaluateResult> {
  checkedRun(options);
  const placement = startPlacement('evaluate', { ...(options.tenant !== undefined ? { tenant: options.tenant } : {}), priority: options.priority ?? 'batch' }, starter.tenantWeights);
  const taskQueue = options.taskQueue ?? defaultEvaluationQueue(starter.taskQueue);
  const limit = Math.min(options.limit ?? MAX_EVALUATION_TURNS, MAX_EVALUATION_TURNS);
  const turnIds = options.turnIds ? [...new Set(options.turnIds)] : await turnsOfQuery(starter.client, options.query!, taskQueue, limit);
  if (turnIds.length === 0) refuse('no turns to evaluate');
  if (turnIds.length > MAX_EVALUATION_TURNS) refuse(`at most ${MAX_EVALUATION_TURNS} turns per evaluation, not ${turnIds.length}`);
  const evaluationId = options.evaluationId ?? `eval-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  const input: EvaluationRunInput = {
    evaluationId,
    turnIds,
    change: options.change,
    ...(options.fromStep !== undefined ? { fromStep: options.fromStep } : {}),
    ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
    ...(options.budget !== undefined ? { budget: options.budget } : {}),
    ...(options.graders !== undefined && options.graders.length > 0 ? { graders: options.graders } : {}),
  };
  await starter.client.workflow.start<typeof turnpikeEvaluation>(EVALUATION_WORKFLOW, {
    taskQueue,
    workflowId: evaluationId,
    args: [input],
    ...placement,
    ...(options.startedBy !== undefined ? { memo: { [STARTED_BY_MEMO_KEY]: options.startedBy } } : {}),
  }).catch(refuseWithoutTenantAttribute('evaluate'));
  return { evaluationId, turns: turnIds.length };
}

/** An evaluation's report: its result once done, the report so far while it runs. */
export async function evaluationReport(client: Client, evaluationId: string): Promise<EvaluationReport> {
  const handle = client.workflow.getHandle<typeof turnpikeEvaluation>(evaluationId);
  try {
    const described = await handle.describe();
    if (described.type !== EVALUATION_WORKFLOW) throw new TurnpikeNotFoundError(`Evaluation ${evaluationId} not found`);
    if (described.status.name === 'COMPLETED') return await handle.result();
    if (described.status.name !== 'RUNNING' && described.status.name !== 'CONTINUED_AS_NEW') throw new TurnpikeRejectedError(`Evaluation ${evaluationId} ended without a report (${described.status.name})`, 'InvalidRequest');
    return await rejections(handle.query(evaluationReportQuery));
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) throw new TurnpikeNotFoundError(`Evaluation ${evaluationId} not found`);
    throw error;
  }
}
