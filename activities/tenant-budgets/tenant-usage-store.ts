/**
 * Where the fleet counts what each tenant spends on model calls per period: the store's
 * interface, the period keys (UTC), and the in-memory store (one process only). The PostgreSQL
 * store, which every worker of a fleet shares, is `postgres-tenant-usage-store.ts`.
 */
import type { TenantBudgetPeriod, TenantSpend } from '../../workflows/types/index.js';

/** One model step's usage, recorded once under `key` however often its activity is retried. */
export interface TenantUsageRecord {
  tenant: string;
  /** The period's key (`periodKey`). */
  period: string;
  /** The step's activity: `<workflowId>/<runId>/<activityId>`, the same for every attempt. */
  key: string;
  inputTokens: number;
  outputTokens: number;
  /** USD; absent when the worker has no price for the model. */
  costUsd?: number;
}

/**
 * What tenant budgets need of a store. Every worker that checks a tenant's budget must use the
 * same store for the limit to hold across them.
 */
export interface TenantUsageStore {
  /** What the tenant spent in the period (zeros when nothing was recorded). */
  spent(tenant: string, period: string): Promise<TenantSpend>;
  /** Adds a step's usage to its tenant's period, once per `key`: true when added, false when the key was recorded before. */
  record(step: TenantUsageRecord): Promise<boolean>;
  /** Releases connections; a store given to a worker is its owner's to close. */
  close?(): Promise<void>;
}

export const PERIODS: readonly TenantBudgetPeriod[] = ['day', 'month'];

/** The key of the period `at` falls in, UTC: `2026-12-02` for a day, `2026-12` for a month. */
export function periodKey(period: TenantBudgetPeriod, at: Date): string {
  const day = at.toISOString().slice(0, 10);
  return period === 'day' ? day : day.slice(0, 7);
}

export const NO_TENANT_SPEND: TenantSpend = { inputTokens: 0, outputTokens: 0, costUsd: 0, steps: 0 };

/** USD to 8 decimals, as the budgets round (workflows/budgets/budget-spend.ts). */
export function roundUsd(value: number): number {
  return Math.round(value * 1e8) / 1e8;
}

/**
 * Counts in this process's memory: for tests and a single worker in development. Two workers
 * with their own in-memory stores each count only their own calls, so a tenant could spend the
 * limit once per worker: a fleet uses `PostgresTenantUsageStore`.
 */
export class InMemoryTenantUsageStore implements TenantUsageStore {
  readonly #totals = new Map<string, TenantSpend>();
  readonly #recorded = new Set<string>();

  async spent(tenant: string, period: string): Promise<TenantSpend> {
    return { ...(this.#totals.get(JSON.stringify([tenant, period])) ?? NO_TENANT_SPEND) };
  }

  async record(step: TenantUsageRecord): Promise<boolean> {
    if (this.#recorded.has(step.key)) return false;
    this.#recorded.add(step.key);
    const id = JSON.stringify([step.tenant, step.period]);
    const total = this.#totals.get(id) ?? NO_TENANT_SPEND;
    this.#totals.set(id, {
      inputTokens: total.inputTokens + step.inputTokens,
      outputTokens: total.outputTokens + step.outputTokens,
      costUsd: roundUsd(total.costUsd + (step.costUsd ?? 0)),
      steps: total.steps + 1,
    });
    return true;
  }
}
