/**
 * Budget arithmetic: checking a budget, what a turn has spent, which limits it has reached, how
 * an approval extends them, and what a conversation has left. Pure functions of numbers: the
 * turn adds its model steps' usage (whose `costUsd` the worker priced; activities/prices.ts).
 */
import { msToNumber } from '@temporalio/common';
import type { JsonSchema, TurnBudget, TurnSpend, Usage } from '../types/index.js';

/** Every limit, in the order checks and messages list them. */
export const BUDGET_LIMITS = ['inputTokens', 'outputTokens', 'totalTokens', 'costUsd', 'wallTime', 'toolCalls'] as const;
export type BudgetLimit = (typeof BUDGET_LIMITS)[number];

/** A Temporal duration in ms, or undefined when it is not one. */
function durationMs(value: unknown): number | undefined {
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  try {
    const ms = msToNumber(value as Parameters<typeof msToNumber>[0]);
    return Number.isFinite(ms) && ms > 0 ? ms : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What is wrong with a budget (`field` names where it sits, e.g. `budget` or `extendBy`), or
 * undefined. Token and tool-call limits are integers (`toolCalls` may be 0: every call asks),
 * `costUsd` a non-negative number, `wallTime` a Temporal duration.
 */
export function budgetProblem(budget: unknown, field = 'budget'): string | undefined {
  if (!budget || typeof budget !== 'object' || Array.isArray(budget)) return `${field} must be an object of limits (${BUDGET_LIMITS.join(', ')})`;
  const entries = Object.entries(budget as Record<string, unknown>).filter(([, value]) => value !== undefined);
  for (const [key, value] of entries) {
    if (!(BUDGET_LIMITS as readonly string[]).includes(key)) return `${field}.${key} is not a budget limit (${BUDGET_LIMITS.join(', ')})`;
    if (key === 'wallTime') {
      if (durationMs(value) === undefined) return `${field}.wallTime must be a positive Temporal duration such as '10m'`;
    } else if (key === 'costUsd') {
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) return `${field}.costUsd must be a non-negative number of USD`;
    } else if (!Number.isInteger(value) || (value as number) < 0) {
      return `${field}.${key} must be a non-negative integer`;
    }
  }
  return undefined;
}

/** What a turn has spent: its usage, its tool calls so far, the time since it started. */
export function spendOf(usage: Usage, steps: number, toolCalls: number, wallTimeMs: number): TurnSpend {
  return {
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    ...(usage.costUsd !== undefined ? { costUsd: usage.costUsd } : {}),
    // Every model step of a turn runs on the same model: none priced means the worker has no price for it.
    ...(steps > 0 && usage.costUsd === undefined ? { costUnknown: true } : {}),
    wallTimeMs: Math.max(0, wallTimeMs),
    toolCalls,
  };
}

/** The limits a turn has reached before its next model step: tokens, cost (or a cost it cannot know), wall time. */
export function reachedBeforeModelStep(limits: TurnBudget, spent: TurnSpend): BudgetLimit[] {
  const reached: BudgetLimit[] = [];
  if (limits.inputTokens !== undefined && spent.inputTokens >= limits.inputTokens) reached.push('inputTokens');
  if (limits.outputTokens !== undefined && spent.outputTokens >= limits.outputTokens) reached.push('outputTokens');
  if (limits.totalTokens !== undefined && spent.inputTokens + spent.outputTokens >= limits.totalTokens) reached.push('totalTokens');
  if (limits.costUsd !== undefined && (spent.costUnknown || (spent.costUsd ?? 0) >= limits.costUsd)) reached.push('costUsd');
  if (limits.wallTime !== undefined && spent.wallTimeMs >= durationMs(limits.wallTime)!) reached.push('wallTime');
  return reached;
}

/** Whether running `calls` more tool calls would go over the `toolCalls` limit. */
export function reachedBeforeCalls(limits: TurnBudget, spent: TurnSpend, calls: number): BudgetLimit[] {
  return limits.toolCalls !== undefined && spent.toolCalls + calls > limits.toolCalls ? ['toolCalls'] : [];
}

/**
 * What approving adds by default: each reached limit's original size (what the turn was given),
 * and for `toolCalls` at least enough for the step's calls. A cost the worker cannot price has no
 * extension: approving it lifts the cost limit (see `extendedBudget`).
 */
export function defaultExtension(reached: readonly BudgetLimit[], original: TurnBudget, limits: TurnBudget, spent: TurnSpend, calls = 0): TurnBudget {
  const extendBy: TurnBudget = {};
  for (const key of reached) {
    if (key === 'costUsd' && spent.costUnknown) continue;
    if (key === 'wallTime') extendBy.wallTime = original.wallTime ?? limits.wallTime;
    else if (key === 'toolCalls') extendBy.toolCalls = Math.max(original.toolCalls ?? 0, spent.toolCalls + calls - (limits.toolCalls ?? 0), 1);
    else extendBy[key] = original[key] ?? limits[key];
  }
  return extendBy;
}

/**
 * The limits after an approval: each grows by `extendBy`. A reached cost limit the worker cannot
 * price is lifted (the approver accepted an unknown cost), unless `extendBy` extends it.
 */
export function extendedBudget(limits: TurnBudget, extendBy: TurnBudget, reached: readonly BudgetLimit[], costUnknown: boolean): TurnBudget {
  const next: TurnBudget = { ...limits };
  for (const key of BUDGET_LIMITS) {
    const more = extendBy[key];
    if (more === undefined || next[key] === undefined) continue;
    if (key === 'wallTime') next.wallTime = `${durationMs(next.wallTime)! + durationMs(more)!}ms`;
    else next[key] = (next[key] as number) + (more as number);
  }
  if (costUnknown && reached.includes('costUsd') && extendBy.costUsd === undefined) delete next.costUsd;
  return next;
}

/** The sum of two spends, e.g. a conversation's so far and its last turn's. */
export function addSpend(total: TurnSpend, turn: TurnSpend): TurnSpend {
  const costUsd = total.costUsd !== undefined || turn.costUsd !== undefined ? roundUsd((total.costUsd ?? 0) + (turn.costUsd ?? 0)) : undefined;
  return {
    inputTokens: total.inputTokens + turn.inputTokens,
    outputTokens: total.outputTokens + turn.outputTokens,
    ...(costUsd !== undefined ? { costUsd } : {}),
    ...(total.costUnknown || turn.costUnknown ? { costUnknown: true } : {}),
    wallTimeMs: total.wallTimeMs + turn.wallTimeMs,
    toolCalls: total.toolCalls + turn.toolCalls,
  };
}

export const NO_SPEND: TurnSpend = { inputTokens: 0, outputTokens: 0, wallTimeMs: 0, toolCalls: 0 };

/**
 * What is left of a budget after a spend: each limit less what was spent, at least 0 (a turn
 * given 0 asks before its first model step). A cost the worker could not price leaves the cost
 * limit as it was: the next turn asks about it again.
 */
export function remainingBudget(limits: TurnBudget, spent: TurnSpend): TurnBudget {
  const left: TurnBudget = {};
  const less = (limit: number, used: number) => Math.max(0, limit - used);
  if (limits.inputTokens !== undefined) left.inputTokens = less(limits.inputTokens, spent.inputTokens);
  if (limits.outputTokens !== undefined) left.outputTokens = less(limits.outputTokens, spent.outputTokens);
  if (limits.totalTokens !== undefined) left.totalTokens = less(limits.totalTokens, spent.inputTokens + spent.outputTokens);
  if (limits.costUsd !== undefined) left.costUsd = roundUsd(less(limits.costUsd, spent.costUsd ?? 0));
  if (limits.wallTime !== undefined) left.wallTime = `${Math.max(1, durationMs(limits.wallTime)! - spent.wallTimeMs)}ms`;
  if (limits.toolCalls !== undefined) left.toolCalls = less(limits.toolCalls, spent.toolCalls);
  return left;
}

/**
 * One child's share of what is left of a budget, when `claimants` children of the same step may
 * still start (this one included) and children already running hold `reserved` (the budgets they
 * were given): each counted limit (tokens, cost, tool calls) is what is left less the
 * reservations, divided evenly and rounded down, so the shares together never pass the budget
 * (what rounding leaves goes to the children that start later). Wall time is not divided:
 * children running side by side spend it together, so each gets what is left of it.
 */
export function budgetShare(limits: TurnBudget, spent: TurnSpend, reserved: readonly TurnBudget[], claimants: number): TurnBudget {
  const left = remainingBudget(limits, spent);
  const share: TurnBudget = {};
  for (const key of BUDGET_LIMITS) {
    if (key === 'wallTime') {
      if (left.wallTime !== undefined) share.wallTime = left.wallTime;
      continue;
    }
    const total = left[key];
    if (total === undefined) continue;
    const free = Math.max(0, total - reserved.reduce((sum, taken) => sum + (taken[key] ?? 0), 0));
    share[key] = key === 'costUsd' ? Math.floor((free / claimants) * 1e8) / 1e8 : Math.floor(free / claimants);
  }
  return share;
}

/** What a turn's extensions added: its final limits less the limits it was given. */
export function grantedExtension(given: TurnBudget, final: TurnBudget): TurnBudget {
  const granted: TurnBudget = {};
  for (const key of BUDGET_LIMITS) {
    const before = given[key];
    const after = final[key];
    if (before === undefined || after === undefined) continue;
    if (key === 'wallTime') {
      const more = durationMs(after)! - durationMs(before)!;
      if (more > 0) granted.wallTime = `${more}ms`;
    } else if ((after as number) > (before as number)) {
      granted[key] = key === 'costUsd' ? roundUsd((after as number) - (before as number)) : (after as number) - (before as number);
    }
  }
  return granted;
}

function roundUsd(value: number): number {
  return Math.round(value * 1e8) / 1e8;
}

/**
 * The schema a budget approval's edited input must fit (the edit-before-approve path of
 * `approveToolCall`): `extendBy`, limits of the same kinds as the budget's.
 */
export const BUDGET_APPROVAL_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    extendBy: {
      type: 'object',
      properties: {
        inputTokens: { type: 'integer', minimum: 0 },
        outputTokens: { type: 'integer', minimum: 0 },
        totalTokens: { type: 'integer', minimum: 0 },
        costUsd: { type: 'number', minimum: 0 },
        wallTime: { type: 'string', pattern: '^\\s*\\d+(\\.\\d+)?\\s*(ms|s|m|h|d)\\s*$' },
        toolCalls: { type: 'integer', minimum: 0 },
      },
      additionalProperties: false,
    },
  },
  required: ['extendBy'],
};

