/**
 * An evaluation run (docs/evaluations.md): recorded turns re-run with a change, their tools
 * answered from what the originals recorded, and a report beside the originals. Pure types and
 * constants: nothing here runs, so the workflow, the worker and the client share them.
 */
import type { ModelSettings } from '../types/model.js';
import type { AgentTurnInput, AgentTurnResult, TurnOutputSpec } from '../types/turn.js';
import type { EvaluationGrade, GraderSpec, GraderTotals } from './grader-types.js';

/** The workflow type of an evaluation run. */
export const EVALUATION_WORKFLOW = 'turnpikeEvaluation';

/** The evaluation task queue beside a turns' task queue, unless one is named: `<task queue>-eval`. */
export function defaultEvaluationQueue(turnTaskQueue: string): string {
  return `${turnTaskQueue}-eval`;
}

/** The memo key of an evaluation turn: `{ evaluationId, turnId }`, the run and the original turn. */
export const EVALUATION_OF_MEMO_KEY = 'turnpike.evaluationOf';

/** The reason of the denial an evaluation turn gets where the original would have parked for a person with no recorded decision. */
export const WOULD_ASK_REASON = 'evaluation: would ask a person';

/** How the error result of a call an evaluation turn did not run starts. */
export const NOT_RUN_PREFIX = 'not run in evaluation';

/** Most turns one evaluation run takes (its rows are carried across continue-as-new). */
export const MAX_EVALUATION_TURNS = 1_000;

/** What an evaluation turn changes of the original's settings; what is absent stays the original's. */
export interface EvaluationChange {
  model?: ModelSettings;
  system?: string;
  /** Tool names offered. */
  tools?: string[];
  /** A typed final answer's schema; `null` asks for none. */
  output?: TurnOutputSpec | null;
  maxSteps?: number;
}

/** When to stop starting evaluation turns: once the turns evaluated so far spent this much. */
export interface EvaluationBudget {
  tokens?: number;
  costUsd?: number;
}

export interface EvaluationRunInput {
  evaluationId: string;
  turnIds: string[];
  change: EvaluationChange;
  /** 0: the original's input again; k ≥ 1: a fork after step k (as `forkTurn`). Default 0. */
  fromStep?: number;
  /** Evaluation turns at once; default 4. */
  concurrency?: number;
  budget?: EvaluationBudget;
  /** Graders of each evaluated turn (grader-types.ts): registered functions by name, models with a rubric. */
  graders?: GraderSpec[];
  /** Set by the run itself when it continues as new. */
  carried?: { rows: EvaluationRow[]; next: number; runs: number };
  /** Turns started per run before it continues as new (default 200; for tests). */
  turnsPerRun?: number;
}

/** The usage of one turn. */
export interface TurnSpendRow {
  tokens: number;
  costUsd?: number;
}

/** One turn, evaluated, beside its original. */
export interface EvaluationRow {
  turnId: string;
  evaluationTurnId: string;
  /** Why there is no comparison (the original could not be read, the evaluation turn failed). */
  error?: string;
  status?: { original: string; evaluated: string };
  textChanged?: boolean;
  /** Present when either turn has a typed answer or an invalid one. */
  output?: { valid: boolean; changedFields: string[] };
  /** The evaluation turn's calls beside the original's, paired by tool name and input hash. */
  toolCalls?: { same: number; differentInput: number; new: number; missing: number };
  /** Calls answered from the original's recorded result, not run. */
  replayed?: number;
  /** Calls with no recorded result that ran because their tool is marked safe. */
  ranSafe?: number;
  /** Calls with no recorded result that were not run (their tool is not safe, or a client tool). */
  notRun?: number;
  /** Calls that would have parked for a person, with no recorded decision. */
  wouldAsk?: number;
  /** Calls denied (by a recorded decision or a policy). */
  denials?: number;
  original?: { approvalsAsked: number; denials: number; usage: TurnSpendRow; latencyMs?: number };
  evaluated?: { usage: TurnSpendRow; latencyMs?: number };
  /** One per grader of the run, in the run's order; absent without graders and on a row with an `error`. */
  grades?: EvaluationGrade[];
}

export interface EvaluationTotals {
  turns: number;
  errors: number;
  textChanged: number;
  outputInvalid: number;
  toolCalls: { same: number; differentInput: number; new: number; missing: number };
  replayed: number;
  ranSafe: number;
  notRun: number;
  wouldAsk: number;
  denials: number;
  original: { approvalsAsked: number; denials: number; usage: TurnSpendRow };
  evaluated: { usage: TurnSpendRow };
  /** By grader name, once a row has grades. */
  graders?: Record<string, GraderTotals>;
}

export interface EvaluationReport {
  evaluationId: string;
  /** `running` while turns are evaluated; `completed` once done; `budget-spent` when the budget stopped it early. */
  status: 'running' | 'completed' | 'budget-spent';
  /** Turns asked for. */
  total: number;
  rows: EvaluationRow[];
  totals: EvaluationTotals;
}

export interface PrepareEvaluationTurnInput {
  turnId: string;
  change: EvaluationChange;
  fromStep: number;
}

/** The evaluation turn's input, or why the original cannot be evaluated (a row's error, not a retry). */
export type PreparedEvaluationTurn = { input: AgentTurnInput } | { error: string };

/** The evaluation run's activities, on the evaluation worker (activities/evaluation/evaluation-activities.ts). */
export interface EvaluationActivities {
  prepareEvaluationTurn(input: PrepareEvaluationTurnInput): Promise<PreparedEvaluationTurn>;
  compareEvaluationTurn(input: { turnId: string; evaluationTurnId: string }): Promise<EvaluationRow>;
  /** A grade per grader of the run; a grader that throws gets an `error` grade. */
  gradeEvaluationTurn(input: GradeEvaluationTurnInput): Promise<EvaluationGrade[]>;
}

export interface GradeEvaluationTurnInput {
  turnId: string;
  evaluationTurnId: string;
  graders: GraderSpec[];
  /** The comparison the graders are given. */
  row: EvaluationRow;
}

/** What a grader is given: the two turns' results and the report's row that compares them. */
export interface GraderInput {
  /** The original turn's id. */
  turnId: string;
  /** The evaluation turn's id (`<evaluationId>/<index>`). */
  evaluationTurnId: string;
  /** The original's latest user message, as text (absent when its input has none). */
  request?: string;
  /** The original turn's result: final text, typed output, tool calls with their outcomes, decisions, usage. */
  original: AgentTurnResult;
  /** The evaluation turn's result. */
  evaluated: AgentTurnResult;
  /** The comparison of the two (without grades). */
  row: EvaluationRow;
}

/** What a grader answers: a score from 0 to 1; `pass` when it decides itself (default: score ≥ 0.5). */
export interface GraderVerdict {
  /** From 0 to 1. */
  score: number;
  /** Whether the turn passes; default: score ≥ 0.5. */
  pass?: boolean;
  /** Why (cut to 160 characters in the report). */
  comment?: string;
}

/** A grader the user writes, registered by name on the evaluation worker (`evaluation.graders`). */
export type Grader = (input: GraderInput) => GraderVerdict | Promise<GraderVerdict>;
