/**
 * Budgets a person can extend. A turn given a `budget` checks it before each model step (tokens,
 * cost, wall time) and before a step's tool calls run (`toolCalls`). A limit reached parks a
 * *budget approval*: decided, listed and audited like a tool approval (`kind: 'budget'`, tool
 * name `turnpike_budget`, a `budget-<n>` id that is never a call of the model). Approving extends
 * the limits by `input.extendBy` (or the approver's edit of it); denying it, or no decision
 * within `approvalTimeout`, ends the turn `budget-exceeded`, every call it made with its result.
 *
 * Behind `patched(BUDGETS_PATCH)`, asked only when a limit is reached: a turn without a budget,
 * or within it, sends exactly the commands it sent before.
 */
import { msToNumber } from '@temporalio/common';
import * as wf from '@temporalio/workflow';
import { BUDGET_APPROVAL_SCHEMA, defaultExtension, extendedBudget, reachedBeforeCalls, reachedBeforeModelStep, type BudgetLimit } from '../budgets/budget-spend.js';
import type { CallEntry } from '../calls/call-ledger.js';
import { inputHash } from '../messages/input-hash.js';
import { park, personsDecision } from './parking.js';
import { errorSettlement } from '../calls/tool-results.js';
import { turnSpend } from '../budgets/turn-budget.js';
import { DEFAULT_PARK_TIMEOUT, type TurnContext } from '../context/turn-context.js';
import { finish } from './turn-endings.js';
import type { AgentTurnResult, BudgetApprovalInput, PendingToolCall, ToolCallPart, ToolSpec } from '../types/index.js';

export const BUDGETS_PATCH = '0.2.0-budgets';
/** The tool name budget approvals show under; never offered to the model. */
export const BUDGET_TOOL_NAME = 'turnpike_budget';

/** What a budget approval's edited input is checked against (`approveToolCall` with `input`). */
export const BUDGET_SPEC: ToolSpec = {
  name: BUDGET_TOOL_NAME,
  description: "Extend the turn's budget by `extendBy`, or deny to stop the turn.",
  inputSchema: BUDGET_APPROVAL_SCHEMA,
  kind: 'server',
  approval: 'always',
};

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
async function askToExtend(turn: TurnContext, exceeded: BudgetLimit[], calls: number): Promise<Outcome> {
  const limits = turn.budgetLimits!;
  const spent = turnSpend(turn);
  const input: BudgetApprovalInput = { exceeded, spent, budget: limits, extendBy: defaultExtension(exceeded, { ...turn.input.budget, ...turn.input.budgetIncrement }, limits, spent, calls) };
  const call: ToolCallPart = { type: 'tool-call', toolCallId: nextBudgetId(turn), toolName: BUDGET_TOOL_NAME, input };
  const entry = turn.ledger.add(call, 'other');
  const timeout = turn.input.approvalTimeout ?? DEFAULT_PARK_TIMEOUT;
  const view = budgetView(turn, call, input, timeout, exceeded.includes('costUsd') && spent.costUnknown === true);
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
    return 'superseded';
  }
  if (!arrived || resolution?.kind !== 'decision') {
    turn.ledger.settle(entry, 'expired');
    turn.noteDecision(view, { ...decision, outcome: 'expired', approved: false, automatic: true, reason: `no decision within ${timeout}` });
    return 'stopped';
  }
  const { request, decidedAt } = resolution;
  turn.noteDecision(view, personsDecision(decision, request, decidedAt));
  if (!request.approved) return 'stopped';
  // The edit was checked against BUDGET_APPROVAL_SCHEMA when it arrived.
  const extendBy = request.input !== undefined ? (request.input as Pick<BudgetApprovalInput, 'extendBy'>).extendBy : input.extendBy;
  turn.budgetLimits = extendedBudget(limits, extendBy, exceeded, spent.costUnknown === true);
  return 'extended';
}

/** `budget-<n>`, the first such id the turn has not used. */
export function nextBudgetId(turn: TurnContext): string {
  let n = turn.decisions.filter((decision) => decision.toolName === BUDGET_TOOL_NAME).length + 1;
  while (turn.ledger.get(`budget-${n}`)) n++;
  return `budget-${n}`;
}

/** What the budget approval shows in `turnState`, the memo, listings and nudges. */
function budgetView(turn: TurnContext, call: ToolCallPart, input: BudgetApprovalInput, timeout: string, costUnknown: boolean): PendingToolCall {
  const now = Date.now();
  const { provider, model } = turn.input.model;
  return {
    kind: 'budget',
    approvalId: turn.newApprovalId(),
    toolCallId: call.toolCallId,
    toolName: BUDGET_TOOL_NAME,
    input,
    inputHash: inputHash(input),
    requestedAt: new Date(now).toISOString(),
    expiresAt: new Date(now + msToNumber(timeout)).toISOString(),
    reason: costUnknown
      ? `The worker has no price for ${provider}:${model}, so the turn's cost is unknown: approve to go on without a cost limit, deny to stop.`
      : `The turn reached its budget (${input.exceeded.join(', ')}): approve to extend it by extendBy, deny to stop the turn.`,
  };
}

/** A cancellation while the budget approval waited: recorded, and no longer pending. */
export function budgetApprovalCancelled(turn: TurnContext, entry: CallEntry, view: PendingToolCall): void {
  if (!entry.resolution) {
    const { approvalId, toolCallId, toolName, inputHash: shownHash } = view;
    turn.noteDecision(view, { approvalId: approvalId!, toolCallId, toolName, outcome: 'cancelled', approved: false, automatic: true, decidedAt: new Date().toISOString(), inputHash: shownHash });
  }
  turn.ledger.settle(entry, 'cancelled');
  turn.ledger.unpark(entry);
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
