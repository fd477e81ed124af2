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

/**
 * What a budget approval shows (`PendingToolCall.input` of `kind: 'budget'`): of the turn's own
 * budget, or, with `scope: 'tenant'`, of its tenant's budget over time (docs/tenants-and-capacity.md).
 */
export interface BudgetApprovalInput {
  /** The limits reached, e.g. `['totalTokens']`. */
  exceeded: Array<keyof TurnBudget>;
  /** What the turn has spent; for `scope: 'tenant'`, what the tenant spent in the period (no wall time, no tool calls). */
  spent: TurnSpend;
  /** The limits now; for `scope: 'tenant'`, the tenant's limits in the period. */
  budget: TurnBudget;
  /**
   * What approving adds to the limits: by default, the exceeded limits' original sizes. Edit it to
   * extend by something else. For `scope: 'tenant'`: what this turn may spend beyond the tenant's
   * limits (the tenant's limits themselves do not change; other turns of the tenant still ask).
   */
  extendBy: TurnBudget;
  /** `tenant` when the tenant's budget over time was reached; absent for the turn's own budget. */
  scope?: 'tenant';
  /** With `scope: 'tenant'`: the tenant and the period whose spend reached the limits, e.g. `{ name: 'acme', period: '2026-12-02' }`. */
  tenant?: { name: string; period: string };
}
