/**
 * `turnpikeEvaluation`: an evaluation run as a workflow (docs/evaluations.md). It takes recorded
 * turns one by one, at most `concurrency` at once: an activity builds the evaluation turn's input
 * from the original and the change, the turn runs as a child on this run's own task queue (the
 * evaluation queue, whose worker answers tools from the original's records), and an activity
 * compares the two results into the report's row. Children are durable and their ids fixed by
 * position (`<evaluationId>/<index>`), so a worker killed mid-run loses and repeats nothing: the
 * run replays and waits for the children it had started. Past `turnsPerRun` turns it continues as
 * new with its rows; the `evaluationReport` query answers the report so far. A run given graders
 * (behind `GRADERS_PATCH`) runs `gradeEvaluationTurn` after each comparison; one without sends the
 * commands it sent before.
 */
import * as wf from '@temporalio/workflow';
import { AGENT_TURN_WORKFLOW } from '../messages/definitions.js';
import type { AgentTurnInput, AgentTurnResult } from '../types/index.js';
import { totalsOf } from './compare-turns.js';
import { evaluationReportQuery } from './evaluation-query.js';
import { EVALUATION_OF_MEMO_KEY, type EvaluationActivities, type EvaluationReport, type EvaluationRow, type EvaluationRunInput } from './evaluation-types.js';
import { GRADE_COMMENT_CHARS, graderName, GRADERS_PATCH, type EvaluationGrade } from './grader-types.js';

const DEFAULT_CONCURRENCY = 4;
const DEFAULT_TURNS_PER_RUN = 200;

/**
 * Both activities heartbeat while they read (activities/evaluation/evaluation-activities.ts): an
 * attempt lost with its worker (a SIGKILL) is tried again after 10 s, not after 2 minutes. No
 * patch: replay compares an activity's id and type, not its timeouts.
 */
const { prepareEvaluationTurn, compareEvaluationTurn } = wf.proxyActivities<EvaluationActivities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '10s',
  retry: { maximumAttempts: 5, initialInterval: '1s' },
});

/** Graders may call a model: longer, and fewer attempts (a grader's own failure is a grade, not a retry). It heartbeats too. */
const { gradeEvaluationTurn } = wf.proxyActivities<EvaluationActivities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '10s',
  retry: { maximumAttempts: 3, initialInterval: '2s' },
});

export async function turnpikeEvaluation(input: EvaluationRunInput): Promise<EvaluationReport> {
  const rows: EvaluationRow[] = [...(input.carried?.rows ?? [])];
  let next = input.carried?.next ?? 0;
  let startedThisRun = 0;
  let budgetSpent = false;
  const turnsPerRun = input.turnsPerRun ?? DEFAULT_TURNS_PER_RUN;
  // Asked once, in the run's first workflow task, and only by a run given graders.
  const graders = input.graders && input.graders.length > 0 && wf.patched(GRADERS_PATCH) ? input.graders : undefined;
  const report = (status: EvaluationReport['status']): EvaluationReport => ({ evaluationId: input.evaluationId, status, total: input.turnIds.length, rows, totals: totalsOf(rows) });
  wf.setHandler(evaluationReportQuery, () => report('running'));

  const spent = (): boolean => {
    const { usage } = totalsOf(rows).evaluated;
    return (input.budget?.tokens !== undefined && usage.tokens >= input.budget.tokens) || (input.budget?.costUsd !== undefined && (usage.costUsd ?? 0) >= input.budget.costUsd);
  };

  async function evaluateOne(index: number): Promise<EvaluationRow> {
    const turnId = input.turnIds[index];
    const evaluationTurnId = `${input.evaluationId}/${index}`;
    const prepared = await prepareEvaluationTurn({ turnId, change: input.change, fromStep: input.fromStep ?? 0 });
    if ('error' in prepared) return { turnId, evaluationTurnId, error: prepared.error };
    try {
      await wf.executeChild<(input: AgentTurnInput) => Promise<AgentTurnResult>>(AGENT_TURN_WORKFLOW, {
        workflowId: evaluationTurnId,
        args: [prepared.input],
        memo: { [EVALUATION_OF_MEMO_KEY]: { evaluationId: input.evaluationId, turnId } },
      });
    } catch (error) {
      if (wf.isCancellation(error)) throw error;
      const cause = error instanceof wf.ChildWorkflowFailure && error.cause ? error.cause.message : String(error);
      return { turnId, evaluationTurnId, error: `The evaluation turn failed: ${cause}` };
    }
    const row = await compareEvaluationTurn({ turnId, evaluationTurnId });
    if (!graders || row.error !== undefined) return row;
    return { ...row, grades: await grade(turnId, evaluationTurnId, row) };
  }

  /** The turn's grades; when the activity itself fails for good, an error grade per grader (the run goes on). */
  async function grade(turnId: string, evaluationTurnId: string, row: EvaluationRow): Promise<EvaluationGrade[]> {
    try {
      return await gradeEvaluationTurn({ turnId, evaluationTurnId, graders: graders!, row });
    } catch (error) {
      if (wf.isCancellation(error)) throw error;
      const cause = error instanceof wf.ActivityFailure && error.cause ? error.cause.message : String(error);
      return graders!.map((spec) => ({ grader: graderName(spec), error: `grading failed: ${cause}`.slice(0, GRADE_COMMENT_CHARS) }));
    }
  }

  const lane = async () => {
    while (next < input.turnIds.length && startedThisRun < turnsPerRun) {
      if (spent()) {
        budgetSpent = true;
        return;
      }
      const index = next++;
      startedThisRun++;
      rows.push(await evaluateOne(index));
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, input.concurrency ?? DEFAULT_CONCURRENCY) }, lane));
  if (!budgetSpent && next < input.turnIds.length) {
    await wf.continueAsNew<typeof turnpikeEvaluation>({ ...input, carried: { rows, next, runs: (input.carried?.runs ?? 0) + 1 } });
  }
  return report(budgetSpent ? 'budget-spent' : 'completed');
}
