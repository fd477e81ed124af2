/**
 * Budgets a person can extend. A turn given a `budget` checks it before each model step (tokens,
 * cost, wall time) and before a step's tool calls run (`toolCalls`). A limit reached parks a
 * *budget approval* (`budget-approval.ts`). Approving extends
 * the limits by `input.extendBy` (or the approver's edit of it); denying it, or no decision
 * within `approvalTimeout`, ends the turn `budget-exceeded`, every call it made with its result.
 *
 * Behind `patched(BUDGETS_PATCH)`, asked only when a limit is reached: a turn without a budget,
 * or within it, sends exactly the commands it sent before.
 */
import * as wf from '@temporalio/workflow';
import { defaultExtension, extendedBudget, reachedBeforeCalls, reachedBeforeModelStep, type BudgetLimit } from '../budgets/budget-spend.js';
import { errorSettlement } from '../calls/tool-results.js';
import { turnSpend } from '../budgets/turn-budget.js';
import type { TurnContext } from '../context/turn-context.js';
import { askBudgetApproval } from './budget-approval.js';
import { finish } from './turn-endings.js';
import type { AgentTurnResult, BudgetApprovalInput, ToolCallPart } from '../types/index.js';

export const BUDGETS_PATCH = '0.2.0-budgets';

type Outcome = 'extended' | 'stopped' | 'superseded';

/**
 * Keeps the turn within its budget at a step boundary: before the model step (no `calls`), or
 * before `calls` run. Undefined, decided without awaiting, when the turn has no budget or is
 * within it. Else resolves to the turn's result when it ends here (stopped, or superseded while
 * its budget approval waited before a model step), or to undefined when it goes on.
 */
export function budgetGate(turn: TurnContext, lastText: string, calls?: ToolCallPart[]): Promise<AgentTurnResult | undefined> | undefined {
  if (!turn.budgetLimits || turn.superseded || reached(turn, calls).length === 0 || !wf.patched(BUDGETS_PATCH)) return undefined;
  return keepWithin(turn, lastText, calls);
}

function reached(turn: TurnContext, calls: ToolCallPart[] | undefined): BudgetLimit[] {
  const spent = turnSpend(turn);
  return calls ? reachedBeforeCalls(turn.budgetLimits!, spent, calls.length) : reachedBeforeModelStep(turn.budgetLimits!, spent);
}

async function keepWithin(turn: TurnContext, lastText: string, calls: ToolCallPart[] | undefined): Promise<AgentTurnResult | undefined> {
  // A cancellation while the approval waits answers the step's calls (here, then turn-endings.ts).
  if (calls) turn.openStep = calls;
  try {
    for (let exceeded = reached(turn, calls); exceeded.length > 0; exceeded = reached(turn, calls)) {
      const outcome = await askToExtend(turn, exceeded, calls?.length ?? 0);
      if (outcome === 'stopped') return stop(turn, lastText, calls);
      // Superseded: the step's calls are answered as superseded by settling them as usual.
      if (outcome === 'superseded') return calls ? undefined : finish(turn, 'cancelled', lastText);
    }
  } catch (error) {
    if (wf.isCancellation(error)) notRun(turn, calls ?? [], `The turn was cancelled while its budget approval waited; "%s" did not run.`);
    throw error;
  }
  return undefined;
}

/** Parks a budget approval and applies its decision. */
function askToExtend(turn: TurnContext, exceeded: BudgetLimit[], calls: number): Promise<Outcome> {
  const limits = turn.budgetLimits!;
  const spent = turnSpend(turn);
  const input: BudgetApprovalInput = { exceeded, spent, budget: limits, extendBy: defaultExtension(exceeded, { ...turn.input.budget, ...turn.input.budgetIncrement }, limits, spent, calls) };
  const costUnknown = exceeded.includes('costUsd') && spent.costUnknown === true;
  const { provider, model } = turn.input.model;
  const reason = costUnknown
    ? `The worker has no price for ${provider}:${model}, so the turn's cost is unknown: approve to go on without a cost limit, deny to stop.`
    : `The turn reached its budget (${exceeded.join(', ')}): approve to extend it by extendBy, deny to stop the turn.`;
  return askBudgetApproval(turn, input, reason, (decided): Outcome => {
    if (decided.outcome !== 'approved') return decided.outcome;
    turn.budgetLimits = extendedBudget(limits, decided.extendBy, exceeded, spent.costUnknown === true);
    return 'extended';
  });
}

/** The turn stops over budget; calls the step made and that did not run each get a result saying why. */
function stop(turn: TurnContext, lastText: string, calls: ToolCallPart[] | undefined): Promise<AgentTurnResult> {
  if (calls) {
    notRun(turn, calls, `The turn's budget stopped before "%s" ran; the tool did not run.`);
    turn.records.push(...calls.map((call) => turn.ledger.record(call.toolCallId)));
    turn.appended.push({ role: 'tool', content: calls.map((call) => turn.ledger.resultPart(call.toolCallId)) });
    turn.openStep = undefined;
  }
  return finish(turn, 'budget-exceeded', lastText);
}

/** Each of the step's calls gets its one result: it did not run (`%s` is the tool's name). */
function notRun(turn: TurnContext, calls: ToolCallPart[], message: string): void {
  for (const call of calls) {
    const entry = turn.ledger.add(call, 'other');
    turn.ledger.settle(entry, 'cancelled');
    entry.settlement = errorSettlement('cancelled', message.replace('%s', call.toolName));
    turn.publisher.publishResult(turn.step, call, entry.settlement);
  }
}
