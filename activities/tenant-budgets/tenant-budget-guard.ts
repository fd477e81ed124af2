/**
 * The tenant budget around one model step, inside the `callModel` activity: before the provider
 * is called, the tenant's spend in the period is read from the shared store; a limit reached (and
 * not covered by the turn's grant) answers the step without calling the provider, with
 * `tenantBudget` set, and the turn parks a budget approval (workflows/turn/tenant-budget-gate.ts).
 * After the call, the step's usage is recorded once under its activity's id, so a retried attempt
 * never counts twice. No extra Temporal action: one read and one write of the store per step.
 *
 * The tenant is the task's fairness key, which turnpike sets to the turn's tenant
 * (workflows/context/tenant-placement.ts); a turn without one is neither checked nor recorded.
 */
import type { Context } from '@temporalio/activity';
import type { ModelStepInput, ModelStepRequest, ModelStepResult, TenantBudgetLimits, TenantBudgetReached, TenantSpend, Usage } from '../../workflows/types/index.js';
import { TENANT_LIMITS, type CheckedTenantBudgets } from './tenant-budget-options.js';
import { periodKey, roundUsd } from './tenant-usage-store.js';

/** The limits a tenant's spend has reached. */
export function reachedTenantLimits(limits: TenantBudgetLimits, spent: TenantSpend): Array<keyof TenantBudgetLimits> {
  const used: Record<keyof TenantBudgetLimits, number> = {
    inputTokens: spent.inputTokens,
    outputTokens: spent.outputTokens,
    totalTokens: spent.inputTokens + spent.outputTokens,
    costUsd: spent.costUsd,
  };
  return TENANT_LIMITS.filter((key) => limits[key] !== undefined && used[key] >= limits[key]!);
}

/** What approving grants by default: `configured` for the limits reached, else a tenth of each (at least 1,000 tokens or $0.01). */
export function defaultTenantExtension(exceeded: ReadonlyArray<keyof TenantBudgetLimits>, limits: TenantBudgetLimits, configured: TenantBudgetLimits | undefined): TenantBudgetLimits {
  const extendBy: TenantBudgetLimits = {};
  for (const key of exceeded) {
    const limit = limits[key] ?? 0;
    extendBy[key] = configured?.[key] ?? (key === 'costUsd' ? Math.max(0.01, roundUsd(limit / 10)) : Math.max(1_000, Math.ceil(limit / 10)));
  }
  return extendBy;
}

/** The step's key in the store: its activity, the same for every attempt. */
function stepKey(context: Context): string {
  const { workflowExecution, activityId } = context.info;
  return `${workflowExecution?.workflowId ?? '-'}/${workflowExecution?.runId ?? '-'}/${activityId}`;
}

/** An answer that calls no model: empty, no usage, the tenant's budget reached. */
function refused(tenantBudget: TenantBudgetReached): ModelStepResult {
  return { message: { role: 'assistant', content: [] }, finishReason: 'other', usage: { inputTokens: 0, outputTokens: 0 }, tenantBudget };
}

export class TenantBudgetGuard {
  constructor(
    private readonly budgets: CheckedTenantBudgets,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  /** The tenant's limits, or undefined when it has none. */
  limitsOf(tenant: string): TenantBudgetLimits | undefined {
    const limits = Object.hasOwn(this.budgets.limits, tenant) ? this.budgets.limits[tenant] : this.budgets.default;
    return limits && TENANT_LIMITS.some((key) => limits[key] !== undefined) ? limits : undefined;
  }

  /**
   * Runs `call` unless the step's tenant has reached its budget; records the usage of a step that
   * ran. `costOf` prices a usage as the worker's price table does (undefined without a price).
   */
  async around(context: Context, request: ModelStepRequest, input: ModelStepInput, call: (input: ModelStepInput) => Promise<ModelStepResult>, costOf: (usage: Usage) => number | undefined): Promise<ModelStepResult> {
    const tenant = context.info.priority?.fairnessKey;
    if (!tenant) return call(input);
    const { store, period: periodKind } = this.budgets;
    const period = periodKey(periodKind, this.clock());
    const limits = this.limitsOf(tenant);
    if (limits) {
      const spent = await store.spent(tenant, period);
      // A limit the turn was granted more of (an approval) does not stop it while the grant lasts.
      const exceeded = reachedTenantLimits(limits, spent).filter((key) => !((request.tenantGrant?.[key] ?? 0) > 0));
      if (exceeded.length > 0) {
        context.metricMeter.createCounter('turnpike_tenant_budget_reached', 'steps', "Model steps not run because their tenant had reached its budget over time, by tenant").add(1, { tenant });
        return refused({ tenant, period, exceeded, spent, limits, extendBy: defaultTenantExtension(exceeded, limits, this.budgets.extendBy) });
      }
    }
    const result = await call(input);
    const costUsd = costOf(result.usage);
    await store.record({ tenant, period, key: stepKey(context), inputTokens: result.usage.inputTokens, outputTokens: result.usage.outputTokens, ...(costUsd !== undefined ? { costUsd } : {}) });
    return result;
  }
}
