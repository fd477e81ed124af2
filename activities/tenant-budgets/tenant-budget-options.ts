/**
 * The worker's `tenantBudgets` option: what each tenant may spend on model calls per period,
 * across the fleet, and the store the workers count it in. Checked with clear TypeErrors before
 * the worker connects anywhere; read from `TURNPIKE_TENANT_BUDGETS*` by `runWorker`.
 */
import type { TenantBudgetLimits, TenantBudgetPeriod } from '../../workflows/types/index.js';
import { PostgresTenantUsageStore } from './postgres-tenant-usage-store.js';
import { PERIODS, type TenantUsageStore } from './tenant-usage-store.js';

export interface TenantBudgetOptions {
  /** Where every worker counts what each tenant spent: the same store for the whole fleet (`PostgresTenantUsageStore`). */
  store: TenantUsageStore;
  /** Limits by tenant (the turn's `tenant`), e.g. `{ acme: { totalTokens: 1_000_000, costUsd: 50 } }`. */
  limits?: Record<string, TenantBudgetLimits>;
  /** The limits of a tenant not in `limits`. Default: none (such a tenant's spend is recorded, never stopped). */
  default?: TenantBudgetLimits;
  /** The period spend is counted in, UTC. Default `day`. */
  period?: TenantBudgetPeriod;
  /**
   * What a budget approval lets a turn spend beyond its tenant's limits, by default (the approver
   * may edit it). Default: a tenth of each limit reached (tokens rounded up).
   */
  extendBy?: TenantBudgetLimits;
}

/** The options checked, with their defaults. */
export interface CheckedTenantBudgets {
  store: TenantUsageStore;
  limits: Record<string, TenantBudgetLimits>;
  default?: TenantBudgetLimits;
  period: TenantBudgetPeriod;
  extendBy?: TenantBudgetLimits;
}

export const TENANT_LIMITS = ['inputTokens', 'outputTokens', 'totalTokens', 'costUsd'] as const satisfies ReadonlyArray<keyof TenantBudgetLimits>;

/** What is wrong with a set of limits (`field` names where it sits), or undefined. */
export function tenantLimitsProblem(limits: unknown, field: string): string | undefined {
  if (!limits || typeof limits !== 'object' || Array.isArray(limits)) return `${field} must be an object of limits (${TENANT_LIMITS.join(', ')})`;
  for (const [key, value] of Object.entries(limits as Record<string, unknown>)) {
    if (value === undefined) continue;
    if (!(TENANT_LIMITS as readonly string[]).includes(key)) return `${field}.${key} is not a tenant budget limit (${TENANT_LIMITS.join(', ')})`;
    if (key === 'costUsd') {
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) return `${field}.costUsd must be a non-negative number of USD (got ${String(value)})`;
    } else if (!Number.isInteger(value) || (value as number) < 0) {
      return `${field}.${key} must be a non-negative whole number of tokens (got ${String(value)})`;
    }
  }
  return undefined;
}

function refuse(problem: string | undefined): void {
  if (problem) throw new TypeError(`Invalid tenantBudgets: ${problem}`);
}

export function checkedTenantBudgets(options: TenantBudgetOptions): CheckedTenantBudgets {
  if (options === null || typeof options !== 'object') throw new TypeError('Invalid tenantBudgets: expected an object { store, limits?, default?, period?, extendBy? }');
  const { store, limits = {}, period = 'day', extendBy } = options;
  if (!store || typeof store.spent !== 'function' || typeof store.record !== 'function') {
    throw new TypeError('Invalid tenantBudgets.store: expected a TenantUsageStore (PostgresTenantUsageStore for a fleet, InMemoryTenantUsageStore for one process)');
  }
  if (!(PERIODS as readonly unknown[]).includes(period)) throw new TypeError(`Invalid tenantBudgets.period: expected ${PERIODS.join(' or ')} (got ${JSON.stringify(period)})`);
  if (!limits || typeof limits !== 'object' || Array.isArray(limits)) throw new TypeError('Invalid tenantBudgets.limits: expected limits by tenant, e.g. { acme: { totalTokens: 1000000 } }');
  for (const [tenant, tenantLimits] of Object.entries(limits)) {
    if (tenant.trim() === '') throw new TypeError('Invalid tenantBudgets.limits: a tenant name must be a non-empty string');
    refuse(tenantLimitsProblem(tenantLimits, `limits[${JSON.stringify(tenant)}]`));
  }
  if (options.default !== undefined) refuse(tenantLimitsProblem(options.default, 'default'));
  if (extendBy !== undefined) refuse(tenantLimitsProblem(extendBy, 'extendBy'));
  return { store, limits, period, ...(options.default !== undefined ? { default: options.default } : {}), ...(extendBy !== undefined ? { extendBy } : {}) };
}

/**
 * `tenantBudgets` from the environment, for `runWorker`: `TURNPIKE_TENANT_BUDGETS` (limits by
 * tenant, JSON: `{"acme":{"totalTokens":1000000,"costUsd":50}}`), `TURNPIKE_TENANT_BUDGETS_DEFAULT`
 * (JSON limits of other tenants), `TURNPIKE_TENANT_BUDGETS_PERIOD` (`day` or `month`) and
 * `TURNPIKE_TENANT_BUDGETS_POSTGRES_URL` (the store the fleet shares; needed with either limits).
 * Undefined when no limits are set. The store it opens is the caller's to close.
 */
export function tenantBudgetsFromEnvironment(environment: NodeJS.ProcessEnv = process.env): TenantBudgetOptions | undefined {
  const json = (name: string): unknown => {
    const value = environment[name];
    if (value === undefined || value.trim() === '') return undefined;
    try {
      return JSON.parse(value);
    } catch {
      throw new TypeError(`${name} must be JSON, e.g. {"acme":{"totalTokens":1000000,"costUsd":50}} (got ${JSON.stringify(value)})`);
    }
  };
  const limits = json('TURNPIKE_TENANT_BUDGETS');
  const fallback = json('TURNPIKE_TENANT_BUDGETS_DEFAULT');
  const period = environment.TURNPIKE_TENANT_BUDGETS_PERIOD || undefined;
  const url = environment.TURNPIKE_TENANT_BUDGETS_POSTGRES_URL || undefined;
  if (limits === undefined && fallback === undefined) {
    if (period !== undefined || url !== undefined) throw new TypeError('TURNPIKE_TENANT_BUDGETS_PERIOD and TURNPIKE_TENANT_BUDGETS_POSTGRES_URL need TURNPIKE_TENANT_BUDGETS or TURNPIKE_TENANT_BUDGETS_DEFAULT');
    return undefined;
  }
  if (url === undefined) throw new TypeError('TURNPIKE_TENANT_BUDGETS needs TURNPIKE_TENANT_BUDGETS_POSTGRES_URL: the PostgreSQL database every worker of the fleet counts in');
  // The store connects on first use: bad limits refused here leave nothing open.
  return checkedTenantBudgets({
    store: new PostgresTenantUsageStore({ connectionString: url }),
    ...(limits !== undefined ? { limits: limits as Record<string, TenantBudgetLimits> } : {}),
    ...(fallback !== undefined ? { default: fallback as TenantBudgetLimits } : {}),
    ...(period !== undefined ? { period: period as TenantBudgetPeriod } : {}),
  });
}
