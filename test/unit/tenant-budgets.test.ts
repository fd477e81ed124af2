/** Budgets per tenant over time, worker side: period keys, the in-memory store, the limits reached, the options and the environment. */
import { describe, expect, it } from 'vitest';
import { checkedTenantBudgets, tenantBudgetsFromEnvironment } from '../../activities/tenant-budgets/tenant-budget-options.js';
import { defaultTenantExtension, reachedTenantLimits } from '../../activities/tenant-budgets/tenant-budget-guard.js';
import { InMemoryTenantUsageStore, periodKey } from '../../activities/tenant-budgets/tenant-usage-store.js';
import { PostgresTenantUsageStore } from '../../activities/tenant-budgets/postgres-tenant-usage-store.js';

const store = new InMemoryTenantUsageStore();

describe('period keys', () => {
  it('are UTC days or months: the last millisecond of a day and the first of the next fall in different days', () => {
    expect(periodKey('day', new Date('2026-12-02T23:59:59.999Z'))).toBe('2026-12-02');
    expect(periodKey('day', new Date('2026-12-03T00:00:00.000Z'))).toBe('2026-12-03');
    // 00:30 in Berlin on the 3rd is still the 2nd in UTC.
    expect(periodKey('day', new Date('2026-12-03T00:30:00+01:00'))).toBe('2026-12-02');
    expect(periodKey('month', new Date('2026-12-31T23:59:59.999Z'))).toBe('2026-12');
    expect(periodKey('month', new Date('2027-01-01T00:00:00.000Z'))).toBe('2027-01');
  });
});

describe('the in-memory store', () => {
  it('adds a step once per key, by tenant and period', async () => {
    const memory = new InMemoryTenantUsageStore();
    expect(await memory.spent('acme', '2026-12-02')).toEqual({ inputTokens: 0, outputTokens: 0, costUsd: 0, steps: 0 });
    expect(await memory.record({ tenant: 'acme', period: '2026-12-02', key: 'w/r/1', inputTokens: 100, outputTokens: 20, costUsd: 0.001 })).toBe(true);
    // The same step again (a retried attempt): not counted.
    expect(await memory.record({ tenant: 'acme', period: '2026-12-02', key: 'w/r/1', inputTokens: 100, outputTokens: 20, costUsd: 0.001 })).toBe(false);
    expect(await memory.record({ tenant: 'acme', period: '2026-12-02', key: 'w/r/2', inputTokens: 5, outputTokens: 5 })).toBe(true);
    expect(await memory.record({ tenant: 'acme', period: '2026-12-03', key: 'w/r/3', inputTokens: 7, outputTokens: 1, costUsd: 0.5 })).toBe(true);
    expect(await memory.record({ tenant: 'globex', period: '2026-12-02', key: 'v/r/1', inputTokens: 9, outputTokens: 9 })).toBe(true);
    expect(await memory.spent('acme', '2026-12-02')).toEqual({ inputTokens: 105, outputTokens: 25, costUsd: 0.001, steps: 2 });
    expect(await memory.spent('acme', '2026-12-03')).toEqual({ inputTokens: 7, outputTokens: 1, costUsd: 0.5, steps: 1 });
    expect(await memory.spent('globex', '2026-12-02')).toEqual({ inputTokens: 9, outputTokens: 9, costUsd: 0, steps: 1 });
  });
});

describe('the limits a tenant has reached', () => {
  const spent = { inputTokens: 600, outputTokens: 400, costUsd: 0.25, steps: 3 };
  it('are those its spend is at or over', () => {
    expect(reachedTenantLimits({ totalTokens: 1000 }, spent)).toEqual(['totalTokens']);
    expect(reachedTenantLimits({ totalTokens: 1001 }, spent)).toEqual([]);
    expect(reachedTenantLimits({ inputTokens: 600, outputTokens: 401, costUsd: 0.25 }, spent)).toEqual(['inputTokens', 'costUsd']);
    expect(reachedTenantLimits({ totalTokens: 0 }, { inputTokens: 0, outputTokens: 0, costUsd: 0, steps: 0 })).toEqual(['totalTokens']);
  });
  it('extend by default by a tenth of each limit reached (at least 1,000 tokens or $0.01), or by what the worker was given', () => {
    expect(defaultTenantExtension(['totalTokens', 'costUsd'], { totalTokens: 1_000_001, costUsd: 50 }, undefined)).toEqual({ totalTokens: 100_001, costUsd: 5 });
    expect(defaultTenantExtension(['totalTokens', 'costUsd'], { totalTokens: 10, costUsd: 0 }, undefined)).toEqual({ totalTokens: 1_000, costUsd: 0.01 });
    expect(defaultTenantExtension(['costUsd'], { totalTokens: 10, costUsd: 3 }, { costUsd: 1, totalTokens: 5 })).toEqual({ costUsd: 1 });
  });
});

describe('the tenantBudgets option', () => {
  it('is checked with clear TypeErrors', () => {
    const bad = (options: unknown) => () => checkedTenantBudgets(options as Parameters<typeof checkedTenantBudgets>[0]);
    expect(bad(undefined)).toThrow(/Invalid tenantBudgets: expected an object/);
    expect(bad({ limits: {} })).toThrow(/tenantBudgets.store: expected a TenantUsageStore/);
    expect(bad({ store, limits: { acme: { totalTokens: -1 } } })).toThrow('Invalid tenantBudgets: limits["acme"].totalTokens must be a non-negative whole number of tokens (got -1)');
    expect(bad({ store, limits: { acme: { costUsd: Number.NaN } } })).toThrow('Invalid tenantBudgets: limits["acme"].costUsd must be a non-negative number of USD (got NaN)');
    expect(bad({ store, limits: { acme: { totalTokens: 1.5 } } })).toThrow(/whole number of tokens \(got 1.5\)/);
    expect(bad({ store, limits: { acme: { wallTime: '1h' } } })).toThrow('Invalid tenantBudgets: limits["acme"].wallTime is not a tenant budget limit (inputTokens, outputTokens, totalTokens, costUsd)');
    expect(bad({ store, limits: { acme: 5 } })).toThrow(/limits\["acme"\] must be an object of limits/);
    expect(bad({ store, period: 'week' })).toThrow('Invalid tenantBudgets.period: expected day or month (got "week")');
    expect(bad({ store, default: { costUsd: -2 } })).toThrow(/default.costUsd must be a non-negative number/);
    expect(bad({ store, extendBy: { totalTokens: Infinity } })).toThrow(/extendBy.totalTokens must be a non-negative whole number/);
    expect(checkedTenantBudgets({ store, limits: { acme: { totalTokens: 0 } } })).toEqual({ store, limits: { acme: { totalTokens: 0 } }, period: 'day' });
  });

  it('comes from the environment with a PostgreSQL store, or not at all', () => {
    expect(tenantBudgetsFromEnvironment({})).toBeUndefined();
    const fromEnvironment = tenantBudgetsFromEnvironment({
      TURNPIKE_TENANT_BUDGETS: '{"acme":{"totalTokens":1000000,"costUsd":50}}',
      TURNPIKE_TENANT_BUDGETS_DEFAULT: '{"costUsd":5}',
      TURNPIKE_TENANT_BUDGETS_PERIOD: 'month',
      TURNPIKE_TENANT_BUDGETS_POSTGRES_URL: 'postgresql://turnpike:secret@db:5432/turnpike',
    })!;
    expect(fromEnvironment.limits).toEqual({ acme: { totalTokens: 1_000_000, costUsd: 50 } });
    expect(fromEnvironment.default).toEqual({ costUsd: 5 });
    expect(fromEnvironment.period).toBe('month');
    expect(fromEnvironment.store).toBeInstanceOf(PostgresTenantUsageStore);
    // The password never shows.
    expect((fromEnvironment.store as PostgresTenantUsageStore).description).toBe('postgresql://turnpike@db:5432/turnpike (table turnpike_tenant_usage)');
    expect(JSON.stringify(fromEnvironment.store)).not.toContain('secret');
    expect(() => tenantBudgetsFromEnvironment({ TURNPIKE_TENANT_BUDGETS: '{"acme":{"totalTokens":1}}' })).toThrow(/needs TURNPIKE_TENANT_BUDGETS_POSTGRES_URL/);
    expect(() => tenantBudgetsFromEnvironment({ TURNPIKE_TENANT_BUDGETS: 'acme:5', TURNPIKE_TENANT_BUDGETS_POSTGRES_URL: 'postgresql://db/x' })).toThrow(/TURNPIKE_TENANT_BUDGETS must be JSON/);
    expect(() => tenantBudgetsFromEnvironment({ TURNPIKE_TENANT_BUDGETS: '{"acme":{"totalTokens":-5}}', TURNPIKE_TENANT_BUDGETS_POSTGRES_URL: 'postgresql://db/x' })).toThrow(/totalTokens must be a non-negative whole number/);
    expect(() => tenantBudgetsFromEnvironment({ TURNPIKE_TENANT_BUDGETS: '{"acme":{"totalTokens":5}}', TURNPIKE_TENANT_BUDGETS_PERIOD: 'hour', TURNPIKE_TENANT_BUDGETS_POSTGRES_URL: 'postgresql://db/x' })).toThrow(/period: expected day or month \(got "hour"\)/);
    expect(() => tenantBudgetsFromEnvironment({ TURNPIKE_TENANT_BUDGETS_POSTGRES_URL: 'postgresql://db/x' })).toThrow(/need TURNPIKE_TENANT_BUDGETS/);
    expect(() => new PostgresTenantUsageStore({ connectionString: 'postgresql://db/x', table: 'usage; drop' })).toThrow(/table must be an SQL identifier/);
  });
});
