/**
 * Budgets per tenant over time, in the turn. The worker checks them (activities/tenant-budgets/):
 * a model step whose tenant has reached a limit comes back without calling the model, with
 * `tenantBudget` set. The turn then parks a budget approval as for its own budget
 * (`budget-gate.ts`: `kind: 'budget'`, tool name `turnpike_budget`, a `budget-<n>` id), whose
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
import { msToNumber } from '@temporalio/common';
import * as wf from '@temporalio/workflow';
import { inputHash } from '../messages/input-hash.js';
import { DEFAULT_PARK_TIMEOUT, type TurnContext } from '../context/turn-context.js';
import { BUDGET_SPEC, BUDGET_TOOL_NAME, budgetApprovalCancelled, nextBudgetId } from './budget-gate.js';
import { park, personsDecision } from './parking.js';
import { finish } from './turn-endings.js';
import type { AgentTurnResult, BudgetApprovalInput, PendingToolCall, TenantBudgetLimits, TenantBudgetReached, ToolCallPart, Usage } from '../types/index.js';

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

async function askTenantExtension(turn: TurnContext, reached: TenantBudgetReached, lastText: string): Promise<AgentTurnResult | undefined> {
  const { tenant, period, exceeded, spent, limits, extendBy } = reached;
  const input: BudgetApprovalInput = {
    exceeded,
    spent: { inputTokens: spent.inputTokens, outputTokens: spent.outputTokens, costUsd: spent.costUsd, wallTimeMs: 0, toolCalls: 0 },
    budget: limits,
    extendBy,
    scope: 'tenant',
    tenant: { name: tenant, period },
  };
  const call: ToolCallPart = { type: 'tool-call', toolCallId: nextBudgetId(turn), toolName: BUDGET_TOOL_NAME, input };
  const entry = turn.ledger.add(call, 'other');
  const timeout = turn.input.approvalTimeout ?? DEFAULT_PARK_TIMEOUT;
  const view = tenantBudgetView(turn, call, input, timeout);
  turn.nudges.send(turn.nudgeContext(), view, 'parked');
  const { kind: _kind, approvers: _approvers, approverGroups: _groups, ...shown } = view;
  turn.publisher.publish({ type: 'budget-requested', step: turn.step, ...shown, approvalId: view.approvalId!, input });
  let arrived: boolean;
  try {
    arrived = await park(turn, entry, view, BUDGET_SPEC, timeout);
  } catch (error) {
    if (wf.isCancellation(error)) budgetApprovalCancelled(turn, entry, view);
    throw error;
  }
  const decision = { approvalId: view.approvalId!, toolCallId: call.toolCallId, toolName: BUDGET_TOOL_NAME, inputHash: view.inputHash, decidedAt: new Date().toISOString() };
  const resolution = entry.resolution;
  if (resolution?.kind === 'superseded') {
    turn.ledger.settle(entry, 'superseded');
    turn.noteDecision(view, { ...decision, outcome: 'superseded', approved: false, automatic: true });
    return finish(turn, 'cancelled', lastText);
  }
  if (!arrived || resolution?.kind !== 'decision') {
    turn.ledger.settle(entry, 'expired');
    turn.noteDecision(view, { ...decision, outcome: 'expired', approved: false, automatic: true, reason: `no decision within ${timeout}` });
    return finish(turn, 'budget-exceeded', lastText);
  }
  const { request, decidedAt } = resolution;
  turn.noteDecision(view, personsDecision(decision, request, decidedAt));
  if (!request.approved) return finish(turn, 'budget-exceeded', lastText);
  // The edit was checked against BUDGET_APPROVAL_SCHEMA when it arrived; only the tenant's kinds of limit count.
  const granted = request.input !== undefined ? (request.input as Pick<BudgetApprovalInput, 'extendBy'>).extendBy : extendBy;
  const allowance: TenantBudgetLimits = { ...remainingGrant(turn) };
  for (const key of LIMITS) if (granted[key] !== undefined) allowance[key] = granted[key];
  turn.tenantGrant = { allowance, since: { ...turn.usage } };
  return undefined;
}

/** What the approval shows in `turnState`, the memo, listings and nudges. */
function tenantBudgetView(turn: TurnContext, call: ToolCallPart, input: BudgetApprovalInput, timeout: string): PendingToolCall {
  const now = Date.now();
  const { name, period } = input.tenant!;
  return {
    kind: 'budget',
    approvalId: turn.newApprovalId(),
    toolCallId: call.toolCallId,
    toolName: BUDGET_TOOL_NAME,
    input,
    inputHash: inputHash(input),
    requestedAt: new Date(now).toISOString(),
    expiresAt: new Date(now + msToNumber(timeout)).toISOString(),
    reason: `Tenant "${name}" reached its budget for ${period} (${input.exceeded.join(', ')}): approve to let this turn spend extendBy beyond it, deny to stop the turn.`,
  };
}
