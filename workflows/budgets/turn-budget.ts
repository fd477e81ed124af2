/**
 * What a turn with a budget shows of it: its limits and spend in `turnState`, in its result, and
 * at a hand-over. Reads the turn; sends no command. How the turn keeps to it is `turn/budget-gate.ts`.
 */
import * as wf from '@temporalio/workflow';
import { spendOf } from './budget-spend.js';
import type { TurnContext } from '../context/turn-context.js';
import type { TurnBudget, TurnSpend } from '../types/index.js';

/**
 * When the turn started, in ms since the epoch: the start of its first run. Temporal's
 * `workflowInfo().startTime` is the start of the current run (a continued run starts anew), so a
 * hand-over carries the first run's start on (`TurnCarryOver.startedAtMs`). A run handed over to
 * before that was carried counts from its own start, as it did when it ran.
 */
export function turnStartedAtMs(turn: TurnContext): number {
  return turn.input.carried?.startedAtMs ?? wf.workflowInfo().startTime.getTime();
}

/**
 * What the turn has spent; its wall time runs from the start of its first run (hand-overs and
 * the time between runs included), its tool calls are its own and those of its agent tools'
 * child turns that ended.
 */
export function turnSpend(turn: TurnContext): TurnSpend {
  return spendOf(turn.usage, turn.step, turn.records.length + turn.childToolCalls, Date.now() - turnStartedAtMs(turn));
}

/** The result's `spend` and `budget` (final limits), when the turn has a budget. */
export function budgetResult(turn: TurnContext): { spend?: TurnSpend; budget?: TurnBudget } {
  return turn.budgetLimits ? { spend: turnSpend(turn), budget: turn.budgetLimits } : {};
}

/** `turnState().budget`, when the turn has one. */
export function budgetState(turn: TurnContext): { budget?: { limits: TurnBudget; spent: TurnSpend } } {
  return turn.budgetLimits ? { budget: { limits: turn.budgetLimits, spent: turnSpend(turn) } } : {};
}
