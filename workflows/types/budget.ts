/**
 * Budgets a person can extend: the limits of a turn (or a conversation) and what it has spent.
 * Pure types: nothing here runs. How a turn keeps to them is `workflows/turn/budget-gate.ts`.
 */

/**
 * A turn's limits; each is optional. Token and cost limits are checked before each model step,
 * wall time (since the turn started, across hand-overs) too, and `toolCalls` before a step's
 * calls run. A limit reached parks a budget approval: a person extends it or stops the turn.
 */
export interface TurnBudget {
  inputTokens?: number;
  outputTokens?: number;
  /** Input and output tokens together. */
  totalTokens?: number;
  /** USD, from the worker's price table (see docs/budgets.md). */
  costUsd?: number;
  /** A Temporal duration, e.g. `'10m'`. */
  wallTime?: string;
  /** Tool calls the model made, and those of its agent tools' child turns once each ends. */
  toolCalls?: number;
}

/** What a turn (or a conversation) has spent. */
export interface TurnSpend {
  inputTokens: number;
  outputTokens: number;
  /** USD, of the model steps the worker had a price for. */
  costUsd?: number;
  /** Set when a model step's model had no price on its worker: `costUsd` is then partial or absent. */
  costUnknown?: boolean;
  wallTimeMs: number;
  toolCalls: number;
}

/** What a budget approval shows (`PendingToolCall.input` of `kind: 'budget'`). */
export interface BudgetApprovalInput {
  /** The limits reached, e.g. `['totalTokens']`. */
  exceeded: Array<keyof TurnBudget>;
  spent: TurnSpend;
  /** The limits now. */
  budget: TurnBudget;
  /** What approving adds to the limits: by default, the exceeded limits' original sizes. Edit it to extend by something else. */
  extendBy: TurnBudget;
}
