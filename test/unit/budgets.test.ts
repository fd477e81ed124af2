/** The worker's price table and the budget arithmetic: pure functions, no workflow. */
import { describe, expect, it } from 'vitest';
import { checkedPrices, costOf, DEFAULT_PRICES, OPENAI_TOOL_PRICES, priceOf } from '../../activities/prices.js';
import { resolveHint } from '../../cli/format.js';
import { TurnpikePlugin } from '../../worker/plugin.js';
import { pendingMemo, readPendingMemo } from '../../workflows/context/pending-memo.js';
import {
  addSpend,
  budgetProblem,
  defaultExtension,
  extendedBudget,
  grantedExtension,
  NO_SPEND,
  reachedBeforeCalls,
  reachedBeforeModelStep,
  remainingBudget,
  budgetShare,
  spendOf,
} from '../../workflows/budgets/budget-spend.js';
import { addUsage } from '../../workflows/context/usage.js';
import type { TurnSpend, Usage } from '../../workflows/types/index.js';

describe('the price table', () => {
  it('finds a model by its key, a dated name by the key without its date, and openai-responses by openai', () => {
    expect(priceOf(DEFAULT_PRICES, { provider: 'openai', model: 'gpt-4o' })).toEqual({ ...DEFAULT_PRICES['openai:gpt-4o'], ...OPENAI_TOOL_PRICES });
    expect(priceOf(DEFAULT_PRICES, { provider: 'openai', model: 'gpt-4o-mini-2024-07-18' })).toEqual({ ...DEFAULT_PRICES['openai:gpt-4o-mini'], ...OPENAI_TOOL_PRICES });
    expect(priceOf(DEFAULT_PRICES, { provider: 'openai', model: 'gpt-4o-2024-08-06' })).toEqual({ ...DEFAULT_PRICES['openai:gpt-4o'], ...OPENAI_TOOL_PRICES });
    // Anthropic's models also price web searches, at Anthropic's $10 per 1,000 unless the table says otherwise.
    expect(priceOf(DEFAULT_PRICES, { provider: 'anthropic', model: 'claude-sonnet-4-5-20250929' })).toEqual({ ...DEFAULT_PRICES['anthropic:claude-sonnet-4-5'], webSearch: 10 });
    expect(priceOf(DEFAULT_PRICES, { provider: 'anthropic', model: 'claude-sonnet-4-20250514' })).toEqual({ ...DEFAULT_PRICES['anthropic:claude-sonnet-4'], webSearch: 10 });
    expect(priceOf({ 'anthropic:claude-x': { input: 1, output: 2, webSearch: 7 } }, { provider: 'anthropic', model: 'claude-x' })?.webSearch).toBe(7);
    // OpenAI's models price its hosted tools: web search, file search and code interpreter containers.
    expect(priceOf(DEFAULT_PRICES, { provider: 'openai-responses', model: 'gpt-5-mini' })).toEqual({ ...DEFAULT_PRICES['openai:gpt-5-mini'], webSearch: 10, fileSearch: 2.5, codeInterpreterContainer: 0.03 });
    expect(priceOf(DEFAULT_PRICES, { provider: 'azure-openai', model: 'gpt-4.1' })).toEqual({ ...DEFAULT_PRICES['openai:gpt-4.1'], webSearch: 10, fileSearch: 2.5, codeInterpreterContainer: 0.03 });
    expect(priceOf({ 'openai:x': { input: 1, output: 2, codeInterpreterContainer: 0.12 } }, { provider: 'openai-responses', model: 'x' })?.codeInterpreterContainer).toBe(0.12);
  });

  it("prices OpenAI's hosted tools per call and per container, on top of the tokens", () => {
    const price = priceOf(DEFAULT_PRICES, { provider: 'openai-responses', model: 'gpt-4.1' })!;
    const tokens = costOf(price, { inputTokens: 1_000, outputTokens: 100 })!;
    expect(tokens).toBeCloseTo(0.0028, 10);
    // 3 searches at $10 per 1,000, 4 file searches at $2.50 per 1,000, 2 containers at $0.03.
    expect(costOf(price, { inputTokens: 1_000, outputTokens: 100, webSearchRequests: 3, fileSearchRequests: 4, codeInterpreterContainers: 2 })).toBeCloseTo(tokens + 0.03 + 0.01 + 0.06, 10);
    const total: Usage = { inputTokens: 0, outputTokens: 0 };
    addUsage(total, { inputTokens: 1, outputTokens: 1, fileSearchRequests: 2, codeInterpreterContainers: 1 });
    addUsage(total, { inputTokens: 1, outputTokens: 1, codeInterpreterContainers: 1 });
    expect(total).toEqual({ inputTokens: 2, outputTokens: 2, fileSearchRequests: 2, codeInterpreterContainers: 2 });
    expect(() => checkedPrices({ 'openai:x': { input: 1, output: 1, codeInterpreterContainer: -1 } })).toThrow(/codeInterpreterContainer must be a non-negative number of USD per container/);
  });

  it('has no price for a model it does not know, nor for a name that only starts like a key', () => {
    expect(priceOf(DEFAULT_PRICES, { provider: 'openai', model: 'my-finetune' })).toBeUndefined();
    expect(priceOf(DEFAULT_PRICES, { provider: 'openai', model: 'gpt-4oxyz' })).toBeUndefined();
    // A newer model of a family is not priced as the family: its price is often not the same.
    expect(priceOf(DEFAULT_PRICES, { provider: 'anthropic', model: 'claude-opus-4-9' })).toBeUndefined();
    expect(priceOf(DEFAULT_PRICES, { provider: 'openai', model: 'gpt-4o-audio-preview' })).toBeUndefined();
    expect(priceOf(DEFAULT_PRICES, { provider: 'anthropic', model: 'gpt-4o' })).toBeUndefined();
    expect(costOf(undefined, { inputTokens: 10, outputTokens: 10 })).toBeUndefined();
  });

  it("lets a worker's table add and override prices", () => {
    const table = { ...DEFAULT_PRICES, ...checkedPrices({ 'openai:gpt-4o': { input: 1, output: 2 }, 'openai:my-finetune': { input: 3, output: 4 } }) };
    expect(priceOf(table, { provider: 'openai', model: 'gpt-4o-2024-08-06' })).toEqual({ input: 1, output: 2, ...OPENAI_TOOL_PRICES });
    expect(priceOf(table, { provider: 'openai', model: 'my-finetune' })).toEqual({ input: 3, output: 4, ...OPENAI_TOOL_PRICES });
  });

  it('refuses a table entry that is not a price, naming it', () => {
    expect(() => checkedPrices({ 'gpt-4o': { input: 1, output: 1 } })).toThrow(/prices key "gpt-4o" must be "provider:model"/);
    expect(() => checkedPrices({ 'openai:x': { input: -1, output: 1 } })).toThrow(/prices\["openai:x"\]\.input must be a non-negative number/);
    expect(() => checkedPrices({ 'openai:x': { input: 1 } as never })).toThrow(/prices\["openai:x"\]\.output/);
    expect(() => checkedPrices({ 'openai:x': { input: 1, output: 1, cachedInput: Number.NaN } })).toThrow(/cachedInput/);
  });

  it('refuses a plugin whose prices are not a price table', () => {
    expect(() => new TurnpikePlugin({ prices: { 'openai:x': { input: 1, output: -2 } } })).toThrow(TypeError);
    expect(() => new TurnpikePlugin({ prices: { 'openai:x': { input: 1, output: 2 } } })).not.toThrow();
  });

  it('prices cached and cache-written input tokens apart from plain input (OpenAI and Anthropic usage)', () => {
    // OpenAI: 1,000 input of which 400 cached, 200 output, gpt-4o.
    expect(costOf(DEFAULT_PRICES['openai:gpt-4o'], { inputTokens: 1000, cachedInputTokens: 400, outputTokens: 200 })).toBeCloseTo((600 * 2.5 + 400 * 1.25 + 200 * 10) / 1e6, 10);
    // Anthropic: input includes cache reads and writes; Sonnet 4.5.
    const usage: Usage = { inputTokens: 3000, cachedInputTokens: 1000, cacheWriteInputTokens: 1500, outputTokens: 100 };
    expect(costOf(DEFAULT_PRICES['anthropic:claude-sonnet-4-5'], usage)).toBeCloseTo((500 * 3 + 1000 * 0.3 + 1500 * 3.75 + 100 * 15) / 1e6, 10);
    // Without cache prices, cached tokens cost as input.
    expect(costOf({ input: 2, output: 4 }, { inputTokens: 10, cachedInputTokens: 5, outputTokens: 1 })).toBeCloseTo((10 * 2 + 4) / 1e6, 12);
  });

  it("sums step costs into the turn's usage, only from steps that had one", () => {
    const total: Usage = { inputTokens: 0, outputTokens: 0 };
    addUsage(total, { inputTokens: 1, outputTokens: 1 });
    expect(total.costUsd).toBeUndefined();
    addUsage(total, { inputTokens: 1, outputTokens: 1, costUsd: 0.1 });
    addUsage(total, { inputTokens: 1, outputTokens: 1, costUsd: 0.2 });
    expect(total.costUsd).toBe(0.3);
  });
});

describe('budget arithmetic', () => {
  const spent = (fields: Partial<TurnSpend>): TurnSpend => ({ ...NO_SPEND, ...fields });

  it('names what is wrong with a budget', () => {
    expect(budgetProblem({ totalTokens: 100, costUsd: 0.5, wallTime: '10m', toolCalls: 0 })).toBeUndefined();
    expect(budgetProblem('100')).toMatch(/budget must be an object/);
    expect(budgetProblem([])).toMatch(/budget must be an object/);
    expect(budgetProblem({ totalTokens: 1.5 })).toBe('budget.totalTokens must be a non-negative integer');
    expect(budgetProblem({ costUsd: Number.POSITIVE_INFINITY })).toBe('budget.costUsd must be a non-negative number of USD');
    expect(budgetProblem({ wallTime: '0s' })).toMatch(/budget\.wallTime must be a positive Temporal duration/);
    expect(budgetProblem({ steps: 3 })).toMatch(/budget\.steps is not a budget limit/);
  });

  it("says what a turn spent; a model without a price makes its cost unknown", () => {
    expect(spendOf({ inputTokens: 10, outputTokens: 5, costUsd: 0.01 }, 2, 3, 1500)).toEqual({ inputTokens: 10, outputTokens: 5, costUsd: 0.01, wallTimeMs: 1500, toolCalls: 3 });
    expect(spendOf({ inputTokens: 10, outputTokens: 5 }, 1, 0, 0)).toEqual({ inputTokens: 10, outputTokens: 5, costUnknown: true, wallTimeMs: 0, toolCalls: 0 });
    expect(spendOf({ inputTokens: 0, outputTokens: 0 }, 0, 0, 0)).not.toHaveProperty('costUnknown');
  });

  it('finds the limits reached before a model step, and before calls', () => {
    const limits = { inputTokens: 100, outputTokens: 50, totalTokens: 120, costUsd: 1, wallTime: '1m', toolCalls: 2 };
    expect(reachedBeforeModelStep(limits, spent({ inputTokens: 99, outputTokens: 20 }))).toEqual([]);
    expect(reachedBeforeModelStep(limits, spent({ inputTokens: 100, outputTokens: 20 }))).toEqual(['inputTokens', 'totalTokens']);
    expect(reachedBeforeModelStep(limits, spent({ outputTokens: 50, costUsd: 1, wallTimeMs: 60_000 }))).toEqual(['outputTokens', 'costUsd', 'wallTime']);
    expect(reachedBeforeModelStep({ costUsd: 5 }, spent({ costUnknown: true }))).toEqual(['costUsd']);
    expect(reachedBeforeCalls(limits, spent({ toolCalls: 1 }), 1)).toEqual([]);
    expect(reachedBeforeCalls(limits, spent({ toolCalls: 1 }), 2)).toEqual(['toolCalls']);
    expect(reachedBeforeCalls({}, spent({ toolCalls: 100 }), 2)).toEqual([]);
  });

  it("extends by the reached limits' original sizes by default, and by enough for the step's calls", () => {
    const original = { totalTokens: 1000, wallTime: '5m', toolCalls: 2, costUsd: 0.5 };
    const limits = { totalTokens: 2000, wallTime: '10m', toolCalls: 2, costUsd: 0.5 };
    expect(defaultExtension(['totalTokens', 'wallTime'], original, limits, NO_SPEND)).toEqual({ totalTokens: 1000, wallTime: '5m' });
    expect(defaultExtension(['toolCalls'], original, limits, spent({ toolCalls: 2 }), 5)).toEqual({ toolCalls: 5 });
    expect(defaultExtension(['costUsd'], original, limits, spent({ costUnknown: true }))).toEqual({});
    expect(defaultExtension(['toolCalls'], { toolCalls: 0 }, { toolCalls: 0 }, NO_SPEND, 1)).toEqual({ toolCalls: 1 });
  });

  it('grows limits by an extension; an approved unknown cost lifts the cost limit', () => {
    const limits = { totalTokens: 100, wallTime: '1m', costUsd: 0.5 };
    expect(extendedBudget(limits, { totalTokens: 50, wallTime: '30s', costUsd: 0.25, toolCalls: 3 }, ['totalTokens'], false)).toEqual({ totalTokens: 150, wallTime: '90000ms', costUsd: 0.75 });
    expect(extendedBudget(limits, {}, ['costUsd'], true)).toEqual({ totalTokens: 100, wallTime: '1m' });
    expect(extendedBudget(limits, { costUsd: 1 }, ['costUsd'], true)).toEqual({ totalTokens: 100, wallTime: '1m', costUsd: 1.5 });
  });

  it("adds spends, leaves what remains of a conversation's budget, and tells what a turn was granted", () => {
    const a = spent({ inputTokens: 10, outputTokens: 5, costUsd: 0.1, wallTimeMs: 100, toolCalls: 1 });
    const b = spent({ inputTokens: 1, outputTokens: 2, costUsd: 0.2, costUnknown: true, wallTimeMs: 50, toolCalls: 2 });
    expect(addSpend(a, b)).toEqual({ inputTokens: 11, outputTokens: 7, costUsd: 0.3, costUnknown: true, wallTimeMs: 150, toolCalls: 3 });
    expect(addSpend(NO_SPEND, NO_SPEND)).toEqual(NO_SPEND);
    const limits = { inputTokens: 100, totalTokens: 12, costUsd: 0.25, wallTime: '1s', toolCalls: 1 };
    expect(remainingBudget(limits, addSpend(a, b))).toEqual({ inputTokens: 89, totalTokens: 0, costUsd: 0, wallTime: '850ms', toolCalls: 0 });
    expect(grantedExtension({ totalTokens: 10, wallTime: '1s', costUsd: 0.1 }, { totalTokens: 30, wallTime: '3s', costUsd: 0.3 })).toEqual({ totalTokens: 20, wallTime: '2000ms', costUsd: 0.2 });
    expect(grantedExtension({ costUsd: 0.1 }, {})).toEqual({});
  });

  it("shares what is left among a step's children: evenly, less what running siblings hold, wall time undivided", () => {
    const limits = { totalTokens: 75, costUsd: 0.3, wallTime: '10s', toolCalls: 9 };
    const used = spent({ inputTokens: 10, outputTokens: 5, costUsd: 0.0, wallTimeMs: 1000, toolCalls: 3 });
    // Three children may start: each gets a third of the 60 tokens, 0.3 USD and 6 calls left.
    const first = budgetShare(limits, used, [], 3);
    expect(first).toEqual({ totalTokens: 20, costUsd: 0.1, wallTime: '9000ms', toolCalls: 2 });
    // The second starts while the first runs: a half of what the first does not hold.
    const second = budgetShare(limits, used, [first], 2);
    expect(second).toEqual(first);
    // The last gets all that is left, what rounding left over included.
    expect(budgetShare({ toolCalls: 7 }, used, [{ toolCalls: 1 }], 2)).toEqual({ toolCalls: 1 });
    expect(budgetShare({ toolCalls: 7 }, used, [{ toolCalls: 1 }, { toolCalls: 1 }], 1)).toEqual({ toolCalls: 2 });
    // Together the shares never pass the budget; a child that went over leaves its siblings nothing.
    expect(budgetShare({ totalTokens: 10 }, used, [{ totalTokens: 4 }], 1)).toEqual({ totalTokens: 0 });
    expect(budgetShare({ totalTokens: 100 }, used, [], 1)).toEqual(remainingBudget({ totalTokens: 100 }, used));
  });
});

describe('listings', () => {
  it('reads a budget approval back from the pending memo', () => {
    const call = { kind: 'budget', approvalId: 'apr_1', toolCallId: 'budget-1', toolName: 'turnpike_budget', input: { exceeded: ['totalTokens'] }, inputHash: 'sha256:x', requestedAt: 'a', expiresAt: 'b' } as const;
    expect(readPendingMemo(JSON.parse(JSON.stringify(pendingMemo([call]))))?.calls).toEqual([call]);
  });
});

describe('the CLI', () => {
  it('tells how to extend or stop a budget approval', () => {
    const call = { kind: 'budget', approvalId: 'apr_1', toolCallId: 'budget-1', toolName: 'turnpike_budget', input: {}, inputHash: 'sha256:x', requestedAt: '', expiresAt: '' } as const;
    expect(resolveHint('t-1', call)).toBe(`turnpike approve t-1 apr_1 --as <you> [--input '{"extendBy":{…}}']   (extends the budget; deny … stops the turn)`);
  });
});
