/**
 * A budgeted parent's budget among its agent tools' child turns. A child is given a share of what
 * is left of its parent's budget, so that the children of one step together stay within it:
 *
 * - what is left is the parent's limits (as extended so far) less what it has spent, the calls of
 *   the step in progress included (they passed the budget's check before they ran), less what
 *   the step's children already running were given (their reservations);
 * - that is divided evenly among the step's agent tool calls that may still start a child, this
 *   one included: a call that waits for its approval keeps its share until it is decided;
 * - a child that ends gives back its reservation, and its spend is counted in the parent instead,
 *   so what it did not spend goes to the step's children that start after it;
 * - wall time is not divided (children running side by side spend it together).
 *
 * Numbers only, read as a child starts: no command. A child's extension, approved in the child,
 * is the child's; once it ends the parent counts what it spent and asks again if it went over.
 */
import { budgetShare } from '../budgets/budget-spend.js';
import { turnSpend } from '../budgets/turn-budget.js';
import type { TurnContext } from '../context/turn-context.js';
import type { AgentTurnInput, TurnBudget } from '../types/index.js';

/** A step's calls that may start a child: each waits for its share (only a budgeted turn keeps count). */
export function openChildShares(turn: TurnContext, toolCallIds: readonly string[]): void {
  turn.childShares.clear();
  if (!turn.budgetLimits) return;
  for (const id of toolCallIds) turn.childShares.set(id, null);
}

/**
 * The budget of the child that `toolCallId` starts now, and its default extension (the parent's
 * `budgetIncrement`, else its `budget`); nothing when the parent has no budget. The share is
 * reserved until `closeChildShare`.
 */
export function takeChildShare(turn: TurnContext, toolCallId: string): Pick<AgentTurnInput, 'budget' | 'budgetIncrement'> {
  if (!turn.budgetLimits) return {};
  const spent = turnSpend(turn);
  const stepCalls = turn.openStep?.length ?? 0;
  const others = [...turn.childShares].filter(([id]) => id !== toolCallId);
  const reserved = others.map(([, given]) => given).filter((given): given is TurnBudget => given !== null);
  const claimants = 1 + others.filter(([, given]) => given === null).length;
  const budget = budgetShare(turn.budgetLimits, { ...spent, toolCalls: spent.toolCalls + stepCalls }, reserved, claimants);
  turn.childShares.set(toolCallId, budget);
  return { budget, budgetIncrement: { ...turn.input.budget, ...turn.input.budgetIncrement } };
}

/** The call is over (its child ended, or it never started one): its share is no longer held. */
export function closeChildShare(turn: TurnContext, toolCallId: string): void {
  turn.childShares.delete(toolCallId);
}
