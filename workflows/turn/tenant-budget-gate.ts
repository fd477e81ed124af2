/**
 * Budgets per tenant over time, in the turn. The worker checks them (activities/tenant-budgets/):
 * a model step whose tenant has reached a limit comes back without calling the model, with
 * `tenantBudget` set. The turn then parks a budget approval as for its own budget
 * (`budget-approval.ts`: `kind: 'budget'`, tool name `turnpike_budget`, a `budget-<n>` id), whose
 * input has `scope: 'tenant'`. Approving lets *this turn* spend `extendBy` (or the approver's
 * edit of it) beyond the tenant's limits it reached, counted from the approval; the tenant's
 * limits do not change, so its other turns still ask. The step is then asked again. Denying, or
 * no decision within `approvalTimeout`, ends the turn `budget-exceeded`.
 *
 * Behind `patched(TENANT_BUDGETS_PATCH)`, asked only when a step comes back with `tenantBudget`:
 * a turn whose tenant is within its budget (or that has none) sends exactly the commands it sent
 * before. The grant lives in the run: a turn handed over to a new run asks again when its tenant
 * is still over.
 */
import * as wf from '@temporalio/workflow';
import type { TurnContext } from '../context/turn-context.js';
import { askBudgetApproval } from './budget-approval.js';
import { finish } from './turn-endings.js';
import type { AgentTurnResult, BudgetApprovalInput, TenantBudgetLimits, TenantBudgetReached, Usage } from '../types/index.js';

export const TENANT_BUDGETS_PATCH = '0.5.0-tenant-budgets';

const LIMITS = ['inputTokens', 'outputTokens', 'totalTokens', 'costUsd'] as const;

function usedSince(usage: Usage, since: Usage): Record<keyof TenantBudgetLimits, number> {
  const input = usage.inputTokens - since.inputTokens;
  const output = usage.outputTokens - since.outputTokens;
  return { inputTokens: input, outputTokens: output, totalTokens: input + output, costUsd: (usage.costUsd ?? 0) - (since.costUsd ?? 0) };
}

/** What is left of the turn's grant (`ModelStepRequest.tenantGrant`), or undefined when it has none. */
export function remainingGrant(turn: TurnContext): TenantBudgetLimits | undefined {
  const grant = turn.tenantGrant;
  if (!grant) return undefined;
  const used = usedSince(turn.usage, grant.since);
  const left: TenantBudgetLimits = {};
  for (const key of LIMITS) {
    const allowed = grant.allowance[key];
    if (allowed !== undefined) left[key] = Math.max(0, Math.round((allowed - used[key]) * 1e8) / 1e8);
  }
  return left;
}

/**
 * The step came back with its tenant over budget: parks an approval. Resolves to the turn's
 * result when it ends here, or to undefined when it may ask the step again (under the same
 * number: the refused step is not counted). Undefined, without
 * awaiting, on a history recorded without the patch (which never has such a step).
 */
export function tenantBudgetGate(turn: TurnContext, reached: TenantBudgetReached, lastText: string): Promise<AgentTurnResult | undefined> | undefined {
  if (!wf.patched(TENANT_BUDGETS_PATCH)) return undefined;
  // The step did not run: the turn's steps, and the approval's, count those that did.
  turn.step--;
  return askTenantExtension(turn, reached, lastText);
}

function askTenantExtension(turn: TurnContext, reached: TenantBudgetReached, lastText: string): Promise<AgentTurnResult | undefined> {
  const { tenant, period, exceeded, spent, limits, extendBy } = reached;
  const input: BudgetApprovalInput = {
    exceeded,
    spent: { inputTokens: spent.inputTokens, outputTokens: spent.outputTokens, costUsd: spent.costUsd, wallTimeMs: 0, toolCalls: 0 },
    budget: limits,
    extendBy,
    scope: 'tenant',
    tenant: { name: tenant, period },
  };
  const reason = `Tenant "${tenant}" reached its budget for ${period} (${exceeded.join(', ')}): approve to let this turn spend extendBy beyond it, deny to stop the turn.`;
  return askBudgetApproval(turn, input, reason, (decided) => {
    if (decided.outcome === 'superseded') return finish(turn, 'cancelled', lastText);
    if (decided.outcome === 'stopped') return finish(turn, 'budget-exceeded', lastText);
    // Only the tenant's kinds of limit count.
    const allowance: TenantBudgetLimits = { ...remainingGrant(turn) };
    for (const key of LIMITS) if (decided.extendBy[key] !== undefined) allowance[key] = decided.extendBy[key];
    turn.tenantGrant = { allowance, since: { ...turn.usage } };
    return undefined;
  });
}
