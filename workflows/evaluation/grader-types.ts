/**
 * Graders of an evaluation run (docs/evaluations.md, "Graders"): a function the user registers on
 * the evaluation worker by name, or a model asked to grade with a rubric. Each evaluated turn gets
 * a grade per grader in its report row; the totals give each grader's mean score, passes, fails
 * and errors. Pure types, constants, checks and totals: the workflow, the worker and the client share them.
 * What a function grader is given and answers (`GraderInput`, `GraderVerdict`, `Grader`) is in
 * ./evaluation-types.ts, beside the row it holds.
 */
import { MODEL_PROVIDERS } from '../messages/model-providers.js';
import type { ModelSettings } from '../types/model.js';

/**
 * Asked once as a run starts, only by a run given graders: it then runs `gradeEvaluationTurn`
 * after each turn's comparison. A run without graders sends the commands it sent before.
 */
export const GRADERS_PATCH = '0.5.0-evaluation-graders';

/** Most graders one evaluation run takes (their grades are carried with the rows across continue-as-new). */
export const MAX_GRADERS = 4;

/** A grade's comment is cut to this many characters in the report. */
export const GRADE_COMMENT_CHARS = 160;

/** A grader's name: letters, digits, `_`, `-`, `.`, 1 to 64 of them. */
export const GRADER_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** The score at or above which a grade passes when its grader does not say (`pass`), by default. */
export const DEFAULT_PASS_SCORE = 0.5;

/** A grader run by a model: asked with the rubric to answer `{ score, reason }`. */
export interface ModelGraderSpec {
  /** The name it is reported under (letters, digits, `_`, `-`, `.`; unique in the run). */
  name: string;
  /** What the model grades by: what a good evaluated turn does, and how to score it from 0 to 1. */
  rubric: string;
  /** The model that grades, called as a turn's model is (the evaluation worker's providers and endpoints). */
  model: ModelSettings;
  /** A score at or above this passes (default 0.5). */
  passScore?: number;
}

/** A grader of a run: the name of a function registered on the evaluation worker, or a model with a rubric. */
export type GraderSpec = string | ModelGraderSpec;

/** One grader's grade of one turn: a verdict, or why there is none (the grader threw, the model answered no verdict). */
export interface EvaluationGrade {
  /** The grader's name. */
  grader: string;
  /** From 0 to 1; absent with an `error`. */
  score?: number;
  /** Whether the turn passes; absent with an `error`. */
  pass?: boolean;
  /** The grader's comment, a model grader's reason (at most 160 characters). */
  comment?: string;
  /** Why there is no verdict: the grader threw or is not registered, the model answered none or its call failed. */
  error?: string;
  /** A model grader's tokens (input plus output). */
  tokens?: number;
}

/** One grader over the run's rows: its mean score over the turns it graded, passes, fails and errors. */
export interface GraderTotals {
  /** Turns it gave a score (errors not counted). */
  graded: number;
  /** Rounded to 4 decimals; absent while no turn got a score from it. */
  meanScore?: number;
  /** Scored turns that passed. */
  passes: number;
  /** Scored turns that did not pass. */
  fails: number;
  /** Turns it gave no verdict. */
  errors: number;
  /** A model grader's tokens over the run (0 for a function). */
  tokens: number;
}

/** The name a grader is reported under. */
export const graderName = (spec: GraderSpec): string => (typeof spec === 'string' ? spec : spec.name);

/** Why `graders` is not a valid list of grader specs, naming the field; undefined when it is. */
export function gradersProblem(graders: unknown): string | undefined {
  if (!Array.isArray(graders)) return 'graders must be an array of grader names and { name, rubric, model, passScore? }';
  if (graders.length > MAX_GRADERS) return `at most ${MAX_GRADERS} graders per evaluation, not ${graders.length}`;
  const seen = new Set<string>();
  for (const [index, spec] of graders.entries()) {
    const at = `graders[${index}]`;
    const name: unknown = typeof spec === 'string' ? spec : (spec as { name?: unknown } | null)?.name;
    if (typeof spec !== 'string' && (spec === null || typeof spec !== 'object' || Array.isArray(spec))) return `${at} must be a grader's name or { name, rubric, model, passScore? }`;
    if (typeof name !== 'string' || !GRADER_NAME.test(name)) return `${at}: a grader's name must match ${GRADER_NAME.source} (got ${JSON.stringify(name)})`;
    if (seen.has(name)) return `${at}: the grader name "${name}" is used twice`;
    seen.add(name);
    if (typeof spec === 'string') continue;
    const { rubric, model, passScore, ...rest } = spec as Partial<ModelGraderSpec>;
    const unknown = Object.keys(rest).filter((key) => key !== 'name');
    if (unknown.length > 0) return `${at}: unknown field ${unknown.join(', ')} (a model grader is { name, rubric, model, passScore? })`;
    if (typeof rubric !== 'string' || rubric.trim() === '' || rubric.length > 16_000) return `${at}.rubric must be a non-empty string of at most 16,000 characters`;
    if (model === null || typeof model !== 'object' || typeof model.model !== 'string' || model.model === '') return `${at}.model must be { provider, model }`;
    if (!(MODEL_PROVIDERS as readonly unknown[]).includes(model.provider)) return `${at}.model.provider must be one of ${MODEL_PROVIDERS.join(', ')} (got ${JSON.stringify(model.provider)})`;
    if (passScore !== undefined && !(typeof passScore === 'number' && passScore >= 0 && passScore <= 1)) return `${at}.passScore must be a number from 0 to 1`;
  }
  return undefined;
}

/** Each grader's totals over the rows that have grades; undefined when none has. */
export function graderTotalsOf(rows: ReadonlyArray<{ grades?: EvaluationGrade[] }>): Record<string, GraderTotals> | undefined {
  const totals: Record<string, GraderTotals & { sum: number }> = {};
  for (const grade of rows.flatMap((row) => row.grades ?? [])) {
    const total = (totals[grade.grader] ??= { graded: 0, passes: 0, fails: 0, errors: 0, tokens: 0, sum: 0 });
    total.tokens += grade.tokens ?? 0;
    if (grade.error !== undefined || grade.score === undefined) {
      total.errors++;
      continue;
    }
    total.graded++;
    total.sum += grade.score;
    if (grade.pass) total.passes++;
    else total.fails++;
  }
  const names = Object.keys(totals);
  if (names.length === 0) return undefined;
  return Object.fromEntries(
    names.map((name) => {
      const { sum, ...total } = totals[name];
      return [name, { ...total, ...(total.graded > 0 ? { meanScore: Math.round((sum / total.graded) * 10_000) / 10_000 } : {}) }];
    }),
  );
}
