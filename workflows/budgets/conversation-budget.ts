/**
 * A conversation's budget: one set of limits over all its turns, kept across continue-as-new.
 * Each turn is given what remains; when it ends, its spend is added, and whatever its budget
 * approvals granted it grows the conversation's limits too. Numbers only: no command.
 */
import { addSpend, extendedBudget, grantedExtension, NO_SPEND, remainingBudget } from './budget-spend.js';
import type { AgentConversationInput, ConversationBudgetState, ConversationCarryOver, TurnBudget, TurnFinishedInput } from '../types/index.js';

/** The conversation's budget state: carried, or its input's limits with nothing spent yet. */
function stateOf(input: AgentConversationInput, carried: ConversationCarryOver): ConversationBudgetState | undefined {
  if (!input.budget) return undefined;
  return carried.budget ?? { limits: { ...input.budget }, spent: { ...NO_SPEND } };
}

/** What the next turn may spend: what is left of the conversation's budget (none without one). */
export function budgetForTurn(input: AgentConversationInput, carried: ConversationCarryOver): TurnBudget | undefined {
  const budget = stateOf(input, carried);
  return budget ? remainingBudget(budget.limits, budget.spent) : undefined;
}

/**
 * Counts a finished turn: its spend, and the extensions its approvals granted. A failed turn
 * reports them with its failure (up to the step it failed in).
 */
export function absorbTurnSpend(input: AgentConversationInput, carried: ConversationCarryOver, finished: TurnFinishedInput): void {
  const budget = stateOf(input, carried);
  const result = finished.result ?? finished;
  if (!budget || !result.spend) return;
  // The turn was given what remained before it; nothing else ran meanwhile.
  const given = remainingBudget(budget.limits, budget.spent);
  const granted = result.budget ? grantedExtension(given, result.budget) : {};
  carried.budget = { limits: extendedBudget(budget.limits, granted, [], false), spent: addSpend(budget.spent, result.spend) };
}

/** `conversationState().budget`, with a budget. */
export function conversationBudgetState(input: AgentConversationInput, carried: ConversationCarryOver): { budget?: ConversationBudgetState } {
  const budget = stateOf(input, carried);
  return budget ? { budget: { limits: budget.limits, spent: budget.spent } } : {};
}
