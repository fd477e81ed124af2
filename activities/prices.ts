/**
 * The worker's price table: what a model step costs, in USD, from its token usage. The model
 * step activity writes the cost into the step's `usage.costUsd`, so history records it and the
 * turn only adds numbers (workflows/turn/budget-gate.ts).
 *
 * Prices are USD per million tokens, keyed `provider:model`. A dated model name also matches the
 * key it extends with its date (`gpt-4o-2024-08-06` → `gpt-4o`, `claude-sonnet-4-5-20250929` →
 * `claude-sonnet-4-5`), and nothing else: `claude-opus-4-9` is not priced as `claude-opus-4`, since a
 * new model's price is often not its family's. `openai-responses` and `azure-openai` fall back to `openai`'s prices,
 * `anthropic-bedrock` and `anthropic-vertex` to `anthropic`'s.
 * A model with no price gets no `costUsd`.
 */
import type { ModelSettings, Usage } from '../workflows/types/index.js';

/** USD per million tokens. */
export interface ModelPrice {
  /** Input tokens not read from (or written to) the prompt cache. */
  input: number;
  /** Input tokens read from the prompt cache (default: `input`). */
  cachedInput?: number;
  /** Input tokens written to the prompt cache (Anthropic; default: `input`). */
  cacheWriteInput?: number;
  /** Output tokens, reasoning included. */
  output: number;
  /**
   * USD per 1,000 web searches of a hosted web search tool (`usage.webSearchRequests`), on top of
   * the tokens. Anthropic and OpenAI models default to their provider's $10 per 1,000 searches.
   */
  webSearch?: number;
  /** USD per 1,000 hosted file search calls (`usage.fileSearchRequests`); OpenAI models default to $2.50. */
  fileSearch?: number;
  /** USD per code interpreter container (`usage.codeInterpreterContainers`); OpenAI models default to $0.03 (1 GB). */
  codeInterpreterContainer?: number;
}

/** Prices by `provider:model` (or a model-name prefix, see above). */
export type PriceTable = Record<string, ModelPrice>;

/**
 * List prices of common models, standard tier, USD per million tokens, as the providers publish
 * them (https://platform.openai.com/docs/pricing; https://platform.claude.com/docs/en/about-claude/pricing,
 * Anthropic's checked 2026-11-26; `cacheWriteInput` is the 5-minute cache write). Prices change: a
 * worker's `prices` option overrides or extends this table. Batch, flex or priority tiers, 1-hour
 * cache writes, and prices that depend on the prompt's length (Claude Haiku 5.5) are not modelled:
 * give such a model the price you want counted.
 */
export const DEFAULT_PRICES: PriceTable = {
  'openai:gpt-5': { input: 1.25, cachedInput: 0.125, output: 10 },
  'openai:gpt-5-mini': { input: 0.25, cachedInput: 0.025, output: 2 },
  'openai:gpt-5-nano': { input: 0.05, cachedInput: 0.005, output: 0.4 },
  'openai:gpt-4.1': { input: 2, cachedInput: 0.5, output: 8 },
  'openai:gpt-4.1-mini': { input: 0.4, cachedInput: 0.1, output: 1.6 },
  'openai:gpt-4.1-nano': { input: 0.1, cachedInput: 0.025, output: 0.4 },
  'openai:gpt-4o': { input: 2.5, cachedInput: 1.25, output: 10 },
  'openai:gpt-4o-mini': { input: 0.15, cachedInput: 0.075, output: 0.6 },
  'openai:o3': { input: 2, cachedInput: 0.5, output: 8 },
  'openai:o4-mini': { input: 1.1, cachedInput: 0.275, output: 4.4 },
  'openai:o3-mini': { input: 1.1, cachedInput: 0.55, output: 4.4 },
  'openai:o1': { input: 15, cachedInput: 7.5, output: 60 },
  'anthropic:claude-fable-5-1': { input: 10, cachedInput: 0.25, cacheWriteInput: 12.5, output: 50 },
  'anthropic:claude-opus-5-5': { input: 4, cachedInput: 0.2, cacheWriteInput: 5, output: 20 },
  'anthropic:claude-opus-5': { input: 5, cachedInput: 0.5, cacheWriteInput: 6.25, output: 25 },
  'anthropic:claude-opus-4-8': { input: 5, cachedInput: 0.5, cacheWriteInput: 6.25, output: 25 },
  'anthropic:claude-opus-4-7': { input: 5, cachedInput: 0.5, cacheWriteInput: 6.25, output: 25 },
  'anthropic:claude-opus-4-6': { input: 5, cachedInput: 0.5, cacheWriteInput: 6.25, output: 25 },
  'anthropic:claude-sonnet-5-5': { input: 2, cachedInput: 0.1, cacheWriteInput: 2.5, output: 10 },
  'anthropic:claude-sonnet-5': { input: 2, cachedInput: 0.2, cacheWriteInput: 2.5, output: 10 },
  'anthropic:claude-sonnet-4-6': { input: 3, cachedInput: 0.3, cacheWriteInput: 3.75, output: 15 },
  'anthropic:claude-opus-4-5': { input: 5, cachedInput: 0.5, cacheWriteInput: 6.25, output: 25 },
  'anthropic:claude-opus-4-1': { input: 15, cachedInput: 1.5, cacheWriteInput: 18.75, output: 75 },
  'anthropic:claude-opus-4': { input: 15, cachedInput: 1.5, cacheWriteInput: 18.75, output: 75 },
  'anthropic:claude-sonnet-4-5': { input: 3, cachedInput: 0.3, cacheWriteInput: 3.75, output: 15 },
  'anthropic:claude-sonnet-4': { input: 3, cachedInput: 0.3, cacheWriteInput: 3.75, output: 15 },
  'anthropic:claude-3-7-sonnet': { input: 3, cachedInput: 0.3, cacheWriteInput: 3.75, output: 15 },
  'anthropic:claude-haiku-4-5': { input: 1, cachedInput: 0.1, cacheWriteInput: 1.25, output: 5 },
  'anthropic:claude-3-5-haiku': { input: 0.8, cachedInput: 0.08, cacheWriteInput: 1, output: 4 },
};

/** Checks a user's table (`prices` on the plugin); throws a TypeError naming the bad entry. */
export function checkedPrices(prices: PriceTable): PriceTable {
  if (!prices || typeof prices !== 'object') throw new TypeError('TurnpikePlugin: prices must be an object of { "provider:model": { input, output, cachedInput?, cacheWriteInput? } }');
  for (const [key, price] of Object.entries(prices)) {
    if (!/^[a-z-]+:.+$/.test(key)) throw new TypeError(`TurnpikePlugin: prices key "${key}" must be "provider:model"`);
    for (const field of ['input', 'output', 'cachedInput', 'cacheWriteInput', 'webSearch', 'fileSearch', 'codeInterpreterContainer'] as const) {
      const value = price?.[field];
      const required = field === 'input' || field === 'output';
      if ((value === undefined && required) || (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value) || value < 0))) {
        throw new TypeError(`TurnpikePlugin: prices["${key}"].${field} must be a non-negative number of USD ${field === 'codeInterpreterContainer' ? 'per container' : field === 'webSearch' || field === 'fileSearch' ? 'per 1,000 calls' : 'per million tokens'}`);
      }
    }
  }
  return prices;
}

/**
 * Anthropic's web search tool: USD per 1,000 searches (https://platform.claude.com/docs/en/about-claude/pricing,
 * checked 2026-11-28), whatever the model. Web fetch costs only the tokens of what it fetched.
 */
export const ANTHROPIC_WEB_SEARCH_PRICE = 10;

/**
 * OpenAI's hosted tools (https://developers.openai.com/api/docs/pricing, formerly
 * platform.openai.com/docs/pricing, "Built-in tools"): web search $10 per 1,000 calls for every
 * model on the `web_search` tool (its search content tokens are in the step's input tokens; the
 * older `web_search_preview` on non-reasoning models is $25 per 1,000, which turnpike does not
 * offer), file search $2.50 per 1,000 calls, code interpreter $0.03 per 1 GB container session of
 * 20 minutes. Since June 2026 a container is billed per minute with a 5-minute minimum, which a
 * step cannot see: $0.03 a container is the price of 20 minutes, more than a short session costs
 * (at least $0.0075) and less than a longer one. A larger container (4 GB $0.12, 64 GB $1.92) is a
 * `prices` entry of your own.
 */
export const OPENAI_TOOL_PRICES: Pick<ModelPrice, 'webSearch' | 'fileSearch' | 'codeInterpreterContainer'> = { webSearch: 10, fileSearch: 2.5, codeInterpreterContainer: 0.03 };

/** The hosted-tool prices a provider's models take unless their entry says otherwise. */
const TOOL_PRICES: Record<string, Partial<ModelPrice>> = { anthropic: { webSearch: ANTHROPIC_WEB_SEARCH_PRICE }, openai: OPENAI_TOOL_PRICES };

/** A model name's date suffix: `-2024-08-06` (OpenAI) or `-20250929` (Anthropic). */
const DATE_SUFFIX = /-(\d{4}-\d{2}-\d{2}|\d{8})$/;

/**
 * Whose prices a provider takes when it has none of its own: the clouds list Claude and GPT at the
 * first-party prices (a regional endpoint's premium is a `prices` entry of the cloud's own).
 */
const FALLBACK_PROVIDER: Record<string, string> = { 'openai-responses': 'openai', 'azure-openai': 'openai', 'azure-openai-responses': 'openai', 'anthropic-bedrock': 'anthropic', 'anthropic-vertex': 'anthropic' };

/** The price of a model: its own key, else the key of its name without a date suffix; then the same at the provider it falls back to (`openai-responses`, `azure-openai` → `openai`; `anthropic-bedrock`, `anthropic-vertex` → `anthropic`). */
export function priceOf(table: PriceTable, model: Pick<ModelSettings, 'provider' | 'model'>): ModelPrice | undefined {
  const providers = Object.hasOwn(FALLBACK_PROVIDER, model.provider) ? [model.provider, FALLBACK_PROVIDER[model.provider]] : [model.provider];
  for (const provider of providers) {
    for (const name of [model.model, model.model.replace(DATE_SUFFIX, '')]) {
      const key = `${provider}:${name}`;
      if (Object.hasOwn(table, key)) return Object.hasOwn(TOOL_PRICES, provider) ? { ...TOOL_PRICES[provider], ...table[key] } : table[key];
    }
  }
  return undefined;
}

/**
 * The price of an `ai-sdk` model: by the name the worker registered it under
 * (`ai-sdk:<name>`), else by the model's own id (`ai-sdk:gemini-2.5-flash`, dated ids matching as
 * above). Undefined for other providers, or a name the worker does not have.
 */
export function aiSdkPriceOf(table: PriceTable, model: Pick<ModelSettings, 'provider' | 'model'>, models: Record<string, { modelId: string }>): ModelPrice | undefined {
  if (model.provider !== 'ai-sdk') return undefined;
  const modelId = Object.hasOwn(models, model.model) ? models[model.model].modelId : undefined;
  return priceOf(table, model) ?? (modelId !== undefined ? priceOf(table, { provider: 'ai-sdk', model: modelId }) : undefined);
}

/** A step's cost in USD, or undefined without a price. Cached and cache-write tokens are part of `inputTokens`. */
export function costOf(price: ModelPrice | undefined, usage: Usage): number | undefined {
  if (!price) return undefined;
  const cached = usage.cachedInputTokens ?? 0;
  const written = usage.cacheWriteInputTokens ?? 0;
  const plain = Math.max(0, usage.inputTokens - cached - written);
  // Searches: USD per 1,000, so 1,000 micro-USD-per-million-token units per search and USD.
  const searches = (usage.webSearchRequests ?? 0) * (price.webSearch ?? 0) * 1_000 + (usage.fileSearchRequests ?? 0) * (price.fileSearch ?? 0) * 1_000;
  // Containers: USD each, so a million micro-USD-per-million-token units each.
  const containers = (usage.codeInterpreterContainers ?? 0) * (price.codeInterpreterContainer ?? 0) * 1_000_000;
  const micro = plain * price.input + cached * (price.cachedInput ?? price.input) + written * (price.cacheWriteInput ?? price.input) + usage.outputTokens * price.output + searches + containers;
  // Rounded to a millionth of a cent, so sums of steps stay readable.
  return Math.round(micro * 1e2) / 1e8;
}
