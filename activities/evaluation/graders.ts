/**
 * The `gradeEvaluationTurn` activity's work (docs/evaluations.md, "Graders"): every grader of the
 * run on one evaluated turn beside its original. A function grader is looked up by name among those
 * registered on the evaluation worker (`evaluation.graders`) and called; a model grader asks its
 * model through the worker's own `callModel` (providers, endpoints, prices, scripted models).
 * A grader that throws, answers no valid verdict or is not registered gets an `error` grade; the
 * run goes on. Only a model call's retryable failure fails the activity, so Temporal tries it again;
 * on its last attempt, that too is an error grade.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { Grader, GraderInput } from '../../workflows/evaluation/evaluation-types.js';
import type { EvaluationGrade, GraderSpec, ModelGraderSpec } from '../../workflows/evaluation/grader-types.js';
import { DEFAULT_PASS_SCORE, GRADE_COMMENT_CHARS, graderName } from '../../workflows/evaluation/grader-types.js';
import type { ModelStepRequest, ModelStepResult } from '../../workflows/types/index.js';
import { gradingRequest, modelGrade } from './model-grader.js';

export interface GradingContext {
  /** The functions registered on the evaluation worker, by name. */
  graders: Readonly<Record<string, Grader>>;
  /** The worker's model step (its `callModel` activity's function). */
  callModel: (request: ModelStepRequest) => Promise<ModelStepResult>;
  /** Whether this is the activity's last attempt: a model call's retryable failure is then a grade. */
  lastAttempt: boolean;
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));
const errorGrade = (grader: string, error: string, tokens?: number): EvaluationGrade => ({ grader, error: error.slice(0, GRADE_COMMENT_CHARS), ...(tokens !== undefined ? { tokens } : {}) });

async function functionGrade(name: string, input: GraderInput, context: GradingContext): Promise<EvaluationGrade> {
  const grader = Object.hasOwn(context.graders, name) ? context.graders[name] : undefined;
  if (typeof grader !== 'function') {
    const registered = Object.keys(context.graders);
    return errorGrade(name, `no grader named "${name}" is registered on the evaluation worker (${registered.length > 0 ? `registered: ${registered.join(', ')}` : 'none is'})`);
  }
  let verdict: unknown;
  try {
    verdict = await grader(structuredClone(input));
  } catch (error) {
    return errorGrade(name, `the grader threw: ${messageOf(error)}`);
  }
  const { score, pass, comment } = (verdict ?? {}) as { score?: unknown; pass?: unknown; comment?: unknown };
  if (typeof score !== 'number' || !(score >= 0 && score <= 1)) return errorGrade(name, `the grader returned score ${JSON.stringify(score)}, not a number from 0 to 1`);
  if (pass !== undefined && typeof pass !== 'boolean') return errorGrade(name, `the grader returned pass ${JSON.stringify(pass)}, not a boolean`);
  return {
    grader: name,
    score,
    pass: pass ?? score >= DEFAULT_PASS_SCORE,
    ...(comment !== undefined ? { comment: String(comment).slice(0, GRADE_COMMENT_CHARS) } : {}),
  };
}

async function modelGraderGrade(spec: ModelGraderSpec, input: GraderInput, context: GradingContext): Promise<EvaluationGrade> {
  let result: ModelStepResult;
  try {
    result = await context.callModel(gradingRequest(spec, input));
  } catch (error) {
    const retryable = !(error instanceof ApplicationFailure && error.nonRetryable);
    if (retryable && !context.lastAttempt) throw error;
    return errorGrade(spec.name, `the model call failed: ${messageOf(error)}`);
  }
  return modelGrade(spec, result);
}

/** A grade per grader, in the run's order. */
export async function gradeTurn(specs: readonly GraderSpec[], input: GraderInput, context: GradingContext): Promise<EvaluationGrade[]> {
  return Promise.all(specs.map((spec) => (typeof spec === 'string' ? functionGrade(spec, input, context) : modelGraderGrade(spec, input, context)).then((grade) => ({ ...grade, grader: graderName(spec) }))));
}
