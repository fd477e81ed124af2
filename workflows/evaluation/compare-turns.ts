/**
 * The report's comparison of an evaluation turn with its original (docs/evaluations.md): what
 * changed in the final text and typed answer, how the tool calls pair up, what was answered from
 * the record, not run, would ask a person or was denied, and what each spent. Pure functions of
 * the two turns' results, shared by the `compareEvaluationTurn` activity and the unit tests.
 */
import { canonicalJson, inputHash } from '../messages/input-hash.js';
import type { AgentTurnResult, ToolCallRecord, Usage } from '../types/index.js';
import { graderTotalsOf } from './grader-types.js';
import { NOT_RUN_PREFIX, WOULD_ASK_REASON, type EvaluationRow, type EvaluationTotals, type TurnSpendRow } from './evaluation-types.js';

/** A turn's result and how long it took. */
export interface ComparedTurn {
  turnId: string;
  result: AgentTurnResult;
  latencyMs?: number;
}

/** The key a recorded call is matched by: its tool's name and its input's hash. */
export function callKey(toolName: string, input: unknown): string {
  return `${toolName}\u0000${inputHash(input)}`;
}

function spendOf(usage: Usage | undefined): TurnSpendRow {
  return { tokens: (usage?.inputTokens ?? 0) + (usage?.outputTokens ?? 0), ...(usage?.costUsd !== undefined ? { costUsd: usage.costUsd } : {}) };
}

/**
 * The evaluation turn's calls paired with the original's: first those of the same tool and input
 * (same), then, in order, those of the same tool (different input); the rest are new or missing.
 */
export function pairToolCalls(original: readonly ToolCallRecord[], evaluated: readonly ToolCallRecord[]): NonNullable<EvaluationRow['toolCalls']> {
  const left = [...original];
  const unpaired: ToolCallRecord[] = [];
  let same = 0;
  for (const call of evaluated) {
    const index = left.findIndex((other) => callKey(other.toolName, other.input) === callKey(call.toolName, call.input));
    if (index === -1) unpaired.push(call);
    else {
      left.splice(index, 1);
      same++;
    }
  }
  let differentInput = 0;
  let added = 0;
  for (const call of unpaired) {
    const index = left.findIndex((other) => other.toolName === call.toolName);
    if (index === -1) added++;
    else {
      left.splice(index, 1);
      differentInput++;
    }
  }
  return { same, differentInput, new: added, missing: left.length };
}

/** The top-level fields of two typed answers whose values differ (every field when either is not an object). */
export function changedFields(original: unknown, evaluated: unknown): string[] {
  const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);
  if (!isObject(original) || !isObject(evaluated)) return canonicalJson(original) === canonicalJson(evaluated) ? [] : ['(whole answer)'];
  const keys = [...new Set([...Object.keys(original), ...Object.keys(evaluated)])].sort();
  return keys.filter((key) => canonicalJson(original[key]) !== canonicalJson(evaluated[key]));
}

const isNotRun = (call: ToolCallRecord) => call.isError && typeof call.output === 'string' && call.output.startsWith(NOT_RUN_PREFIX);
const isWouldAsk = (call: ToolCallRecord) => call.outcome === 'denied' && call.approval?.reason === WOULD_ASK_REASON;
/** Outcomes whose output came from running the tool (or from the client). */
const RESULT_OUTCOMES = new Set(['executed', 'approved', 'client', 'error']);

/**
 * One row of the report: the evaluation turn beside its original. `carried`: the ids of the
 * original's calls an evaluation turn forked after step k starts with (its prefix's); they are
 * left out of the original's side, since the evaluation turn's result holds only its own calls.
 */
export function compareTurns(original: ComparedTurn, evaluated: ComparedTurn, carried: ReadonlySet<string> = new Set()): EvaluationRow {
  const before = carried.size === 0 ? original.result : withoutCarried(original.result, carried);
  const after = evaluated.result;
  const recorded = new Set(before.toolCalls.filter((call) => RESULT_OUTCOMES.has(call.outcome) && call.executedBy !== 'provider').map((call) => callKey(call.toolName, call.input)));
  let replayed = 0;
  let ranSafe = 0;
  let notRun = 0;
  for (const call of after.toolCalls) {
    if (call.executedBy === 'provider' || !RESULT_OUTCOMES.has(call.outcome)) continue;
    if (isNotRun(call)) notRun++;
    else if (recorded.has(callKey(call.toolName, call.input))) replayed++;
    // An error may be an input refused before anything ran: only results count as run.
    else if (call.outcome !== 'error') ranSafe++;
  }
  const typed = [before, after].some((result) => result.output !== undefined || result.outputErrors !== undefined || result.status === 'invalid-output');
  const personDecisions = (before.decisions ?? []).filter((decision) => !decision.automatic);
  return {
    turnId: original.turnId,
    evaluationTurnId: evaluated.turnId,
    status: { original: before.status, evaluated: after.status },
    textChanged: before.text !== after.text,
    ...(typed ? { output: { valid: after.status !== 'invalid-output' && after.output !== undefined, changedFields: changedFields(before.output, after.output) } } : {}),
    toolCalls: pairToolCalls(before.toolCalls, after.toolCalls),
    replayed,
    ranSafe,
    notRun,
    wouldAsk: after.toolCalls.filter(isWouldAsk).length,
    denials: after.toolCalls.filter((call) => call.outcome === 'denied' && !isWouldAsk(call)).length,
    original: {
      approvalsAsked: personDecisions.length,
      denials: before.toolCalls.filter((call) => call.outcome === 'denied').length,
      usage: spendOf(before.usage),
      ...(original.latencyMs !== undefined ? { latencyMs: original.latencyMs } : {}),
    },
    evaluated: { usage: spendOf(after.usage), ...(evaluated.latencyMs !== undefined ? { latencyMs: evaluated.latencyMs } : {}) },
  };
}

function withoutCarried(result: AgentTurnResult, carried: ReadonlySet<string>): AgentTurnResult {
  return {
    ...result,
    toolCalls: result.toolCalls.filter((call) => !carried.has(call.toolCallId)),
    ...(result.decisions ? { decisions: result.decisions.filter((decision) => !carried.has(decision.toolCallId)) } : {}),
  };
}

const addSpend = (total: TurnSpendRow, row: TurnSpendRow | undefined): TurnSpendRow => ({
  tokens: total.tokens + (row?.tokens ?? 0),
  ...(total.costUsd !== undefined || row?.costUsd !== undefined ? { costUsd: (total.costUsd ?? 0) + (row?.costUsd ?? 0) } : {}),
});

/** The report's totals over its rows. */
export function totalsOf(rows: readonly EvaluationRow[]): EvaluationTotals {
  const totals: EvaluationTotals = {
    turns: rows.length,
    errors: 0,
    textChanged: 0,
    outputInvalid: 0,
    toolCalls: { same: 0, differentInput: 0, new: 0, missing: 0 },
    replayed: 0,
    ranSafe: 0,
    notRun: 0,
    wouldAsk: 0,
    denials: 0,
    original: { approvalsAsked: 0, denials: 0, usage: { tokens: 0 } },
    evaluated: { usage: { tokens: 0 } },
  };
  for (const row of rows) {
    if (row.error !== undefined) totals.errors++;
    if (row.textChanged) totals.textChanged++;
    if (row.output && !row.output.valid) totals.outputInvalid++;
    for (const key of ['same', 'differentInput', 'new', 'missing'] as const) totals.toolCalls[key] += row.toolCalls?.[key] ?? 0;
    for (const key of ['replayed', 'ranSafe', 'notRun', 'wouldAsk', 'denials'] as const) totals[key] += row[key] ?? 0;
    totals.original.approvalsAsked += row.original?.approvalsAsked ?? 0;
    totals.original.denials += row.original?.denials ?? 0;
    totals.original.usage = addSpend(totals.original.usage, row.original?.usage);
    totals.evaluated.usage = addSpend(totals.evaluated.usage, row.evaluated?.usage);
  }
  const graders = graderTotalsOf(rows);
  return graders ? { ...totals, graders } : totals;
}
