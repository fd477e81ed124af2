/**
 * Budgets per tenant over time: what a tenant may spend on model calls in a period (a UTC day or
 * month), across every worker of the fleet, and what a model step reports when the tenant has
 * reached it. Pure types: nothing here runs. The worker side is `activities/tenant-budgets/`, the
 * turn's `workflows/turn/tenant-budget-gate.ts`; docs/tenants-and-capacity.md.
 */

/** A tenant's limits in a period; each is optional. Tokens are whole numbers, cost USD from the worker's price table. */
export interface TenantBudgetLimits {
  inputTokens?: number;
  outputTokens?: number;
  /** Input and output tokens together. */
  totalTokens?: number;
  costUsd?: number;
}

/** The period a tenant's spend is counted in, UTC: `day` (`2026-12-02`) or `month` (`2026-12`). */
export type TenantBudgetPeriod = 'day' | 'month';

/** What a tenant spent in a period: the model steps the store recorded. */
export interface TenantSpend {
  inputTokens: number;
  outputTokens: number;
  /** USD, of the steps whose model had a price on its worker (a step without one adds no cost). */
  costUsd: number;
  /** Model steps recorded. */
  steps: number;
}

/**
 * `ModelStepResult.tenantBudget`: the tenant had reached a limit of its budget when the step was
 * to call the model, so the provider was not called (the step's message is empty and its usage 0).
 */
export interface TenantBudgetReached {
  tenant: string;
  /** The period's key, e.g. `2026-12-02`. */
  period: string;
  /** The limits reached that the turn has no grant left for. */
  exceeded: Array<keyof TenantBudgetLimits>;
  spent: TenantSpend;
  limits: TenantBudgetLimits;
  /** What approving lets the turn spend beyond the limits, by default (the worker's `extendBy`). */
  extendBy: TenantBudgetLimits;
}
