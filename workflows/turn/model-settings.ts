/**
 * Checks of a turn's provider-specific model options, run when the turn starts.
 *
 * An option a provider would ignore, or reject only after the turn has parked for a day, is
 * refused up front instead: the turn fails at once with `InvalidTurnInput` and a message naming
 * the field. Pure and deterministic (workflow code); only fields that are present are checked,
 * so inputs without them are accepted exactly as before.
 */
import type { AnthropicThinking, ModelSettings, OpenAIReasoningEffort, OpenAIReasoningSummary, OpenAIServiceTier } from '../types/index.js';
import { isCloudProvider, speaksAnthropic, speaksOpenAI, speaksResponses } from '../types/provider-families.js';

/** What Anthropic gets as `max_tokens` when the turn does not say: the Messages API requires one. */
export const DEFAULT_ANTHROPIC_MAX_TOKENS = 4096;

/** Anthropic's floor for `thinking.budget_tokens`. */
export const MIN_THINKING_BUDGET_TOKENS = 1024;

/** Every `reasoning_effort` value Chat Completions accepts (which ones a model takes varies). */
export const OPENAI_REASONING_EFFORTS: readonly OpenAIReasoningEffort[] = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'];

const THINKING_TYPES: ReadonlyArray<AnthropicThinking['type']> = ['enabled', 'adaptive', 'disabled'];

/**
 * Why the provider options in `model` are invalid, naming the field (`model.thinking.budgetTokens
 * …`), or undefined when they are valid or absent.
 */
export function modelSettingsProblem(model: ModelSettings): string | undefined {
  if (model.thinking !== undefined) {
    const problem = thinkingProblem(model);
    if (problem) return problem;
  }
  if (model.stream !== undefined && typeof model.stream !== 'boolean') {
    return `model.stream must be true or false (got ${JSON.stringify(model.stream)})`;
  }
  if (model.promptCaching !== undefined) {
    if (!speaksAnthropic(model.provider)) return `model.promptCaching is an Anthropic option; provider "${model.provider}" does not take it (OpenAI caches long prompts on its own)`;
    if (typeof model.promptCaching !== 'boolean') return `model.promptCaching must be true or false (got ${JSON.stringify(model.promptCaching)})`;
  }
  if (model.reasoningEffort !== undefined) {
    if (!isOpenAI(model) && model.provider !== 'ai-sdk') return `model.reasoningEffort is an OpenAI and AI SDK option; provider "${model.provider}" does not take it`;
    if (!OPENAI_REASONING_EFFORTS.includes(model.reasoningEffort)) {
      return `model.reasoningEffort must be one of ${OPENAI_REASONING_EFFORTS.join(', ')} (got ${JSON.stringify(model.reasoningEffort)})`;
    }
  }
  return openAIOptionsProblem(model) ?? endpointProblem(model) ?? providerOptionsProblem(model) ?? providerToolsProblem(model);
}

/** The hosted tools each provider runs itself, by turnpike's name (`ModelSettings.providerTools`). */
export const PROVIDER_TOOLS: Readonly<Record<string, readonly string[]>> = {
  anthropic: ['web_search', 'web_fetch', 'code_execution'],
  // Vertex AI runs Claude's web search; Bedrock runs none of Claude's server tools (docs/models.md).
  'anthropic-vertex': ['web_search'],
  'openai-responses': ['web_search', 'file_search', 'code_interpreter', 'mcp'],
  // Azure OpenAI's Responses API runs the same (its web search is Grounding with Bing: docs/models.md).
  'azure-openai-responses': ['web_search', 'file_search', 'code_interpreter', 'mcp'],
};

/** Hosted tools: a list of `{ type, ...options }` the provider has, each at most once. */
function providerToolsProblem(model: ModelSettings): string | undefined {
  if (model.providerTools === undefined) return undefined;
  const known = PROVIDER_TOOLS[model.provider];
  if (!known) return `model.providerTools: provider "${model.provider}" runs no hosted tools (${Object.keys(PROVIDER_TOOLS).join(' and ')} do)`;
  if (!Array.isArray(model.providerTools) || model.providerTools.length > 16) return 'model.providerTools must be a list of at most 16 hosted tools';
  const seen = new Set<string>();
  for (const [index, tool] of model.providerTools.entries()) {
    if (!tool || typeof tool !== 'object' || Array.isArray(tool) || typeof tool.type !== 'string') return `model.providerTools[${index}] must be an object with a string type`;
    if (!known.includes(tool.type)) return `model.providerTools[${index}].type "${tool.type}" is not a hosted tool of ${model.provider} (${known.join(', ')})`;
    // A remote MCP server is named (its URL and credentials are the worker's `remoteMcpServers`), never given.
    if (tool.type === 'mcp' && speaksResponses(model.provider)) {
      if (typeof tool.server_label !== 'string' || tool.server_label.length === 0) return `model.providerTools[${index}].server_label must name one of the worker's remoteMcpServers`;
      if (tool.server_url !== undefined || tool.headers !== undefined || tool.authorization !== undefined) {
        return `model.providerTools[${index}]: a remote MCP server's URL and headers are the worker's (remoteMcpServers), never a turn's; name it by server_label`;
      }
    }
    // A remote MCP server may appear once per server; every other hosted tool once.
    const key = tool.type === 'mcp' ? `mcp:${String(tool.server_label)}` : tool.type;
    if (seen.has(key)) return `model.providerTools[${index}]: "${key}" is offered twice`;
    seen.add(key);
  }
  return undefined;
}

/**
 * A named OpenAI-compatible endpoint (the OpenAI providers) or a cloud's named settings (the
 * clouds), by a name of the worker's.
 */
function endpointProblem(model: ModelSettings): string | undefined {
  if (model.endpoint === undefined) return undefined;
  if (!isOpenAI(model) && !isCloudProvider(model.provider)) return `model.endpoint names an OpenAI-compatible endpoint; provider "${model.provider}" does not take it`;
  if (typeof model.endpoint !== 'string' || model.endpoint.length === 0 || model.endpoint.length > 100) return 'model.endpoint must be the name of one of the worker\'s endpoints';
  return undefined;
}

/** An AI SDK call's `providerOptions`: an object of objects, keyed by the AI SDK provider's name. */
function providerOptionsProblem(model: ModelSettings): string | undefined {
  const options: unknown = model.providerOptions;
  if (options === undefined) return undefined;
  if (model.provider !== 'ai-sdk') return `model.providerOptions is an AI SDK option; provider "${model.provider}" does not take it`;
  const isObject = (value: unknown) => typeof value === 'object' && value !== null && !Array.isArray(value);
  if (!isObject(options) || !Object.values(options as object).every(isObject)) {
    return 'model.providerOptions must be an object of objects keyed by provider, e.g. { google: { thinkingConfig: { includeThoughts: true } } }';
  }
  return undefined;
}

const isOpenAI = (model: ModelSettings) => speaksOpenAI(model.provider);

/** The Responses API's floor for `max_output_tokens`. */
export const MIN_RESPONSES_MAX_OUTPUT_TOKENS = 16;

export const OPENAI_REASONING_SUMMARIES: readonly OpenAIReasoningSummary[] = ['auto', 'concise', 'detailed'];

export const OPENAI_SERVICE_TIERS: readonly OpenAIServiceTier[] = ['auto', 'default', 'flex', 'scale', 'priority'];

/** Options only the OpenAI providers take: service tier, metadata, and the Responses API's own. */
function openAIOptionsProblem(model: ModelSettings): string | undefined {
  const responsesOnly = (field: string) => `model.${field} is an option of the Responses API (providers "openai-responses", "azure-openai-responses"); provider "${model.provider}" does not take it`;
  if (model.reasoningSummary !== undefined) {
    if (!speaksResponses(model.provider)) return responsesOnly('reasoningSummary');
    if (!OPENAI_REASONING_SUMMARIES.includes(model.reasoningSummary)) {
      return `model.reasoningSummary must be one of ${OPENAI_REASONING_SUMMARIES.join(', ')} (got ${JSON.stringify(model.reasoningSummary)})`;
    }
  }
  if (model.store !== undefined) {
    if (!speaksResponses(model.provider)) return responsesOnly('store');
    if (typeof model.store !== 'boolean') return `model.store must be true or false (got ${JSON.stringify(model.store)})`;
  }
  if (speaksResponses(model.provider) && model.maxTokens !== undefined) {
    if (!Number.isInteger(model.maxTokens) || model.maxTokens < MIN_RESPONSES_MAX_OUTPUT_TOKENS) {
      return `model.maxTokens must be an integer of at least ${MIN_RESPONSES_MAX_OUTPUT_TOKENS} for the Responses API, which sends it as max_output_tokens (got ${JSON.stringify(model.maxTokens)})`;
    }
  }
  if (model.serviceTier !== undefined) {
    if (!isOpenAI(model)) return `model.serviceTier is an OpenAI option; provider "${model.provider}" does not take it`;
    if (!OPENAI_SERVICE_TIERS.includes(model.serviceTier)) {
      return `model.serviceTier must be one of ${OPENAI_SERVICE_TIERS.join(', ')} (got ${JSON.stringify(model.serviceTier)})`;
    }
  }
  if (model.metadata !== undefined) {
    if (!isOpenAI(model)) return `model.metadata is an OpenAI option; provider "${model.provider}" does not take it`;
    return metadataProblem(model.metadata);
  }
  return undefined;
}

/** OpenAI's rules for `metadata`: up to 16 pairs, keys up to 64 characters, string values up to 512. */
function metadataProblem(metadata: unknown): string | undefined {
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) return 'model.metadata must be an object of string values';
  const entries = Object.entries(metadata);
  if (entries.length > 16) return `model.metadata has ${entries.length} keys; OpenAI allows at most 16`;
  for (const [key, value] of entries) {
    if (key.length === 0 || key.length > 64) return `model.metadata key ${JSON.stringify(key.slice(0, 80))} must be 1 to 64 characters`;
    if (typeof value !== 'string') return `model.metadata.${key} must be a string (got ${JSON.stringify(value)})`;
    if (value.length > 512) return `model.metadata.${key} is ${value.length} characters; OpenAI allows at most 512`;
  }
  return undefined;
}

function thinkingProblem(model: ModelSettings): string | undefined {
  const thinking: unknown = model.thinking;
  if (!speaksAnthropic(model.provider)) return `model.thinking is an Anthropic option; provider "${model.provider}" does not take it (OpenAI: use model.reasoningEffort)`;
  if (typeof thinking !== 'object' || thinking === null || Array.isArray(thinking)) return 'model.thinking must be an object such as { type: "enabled", budgetTokens: 2048 }';
  const { type, ...rest } = thinking as Record<string, unknown>;
  if (!THINKING_TYPES.includes(type as AnthropicThinking['type'])) {
    return `model.thinking.type must be one of ${THINKING_TYPES.join(', ')} (got ${JSON.stringify(type)})`;
  }
  const allowed = type === 'enabled' ? ['budgetTokens'] : [];
  const unknown = Object.keys(rest).filter((key) => !allowed.includes(key));
  if (unknown.length > 0) {
    // budget_tokens is the wire name; a caller who copied it from Anthropic's docs hears why it is refused.
    const hint = unknown.includes('budget_tokens') ? ' (the field is budgetTokens)' : '';
    return `model.thinking has unknown field(s) ${unknown.join(', ')} for type "${String(type)}"${hint}`;
  }
  // The Messages API refuses any other temperature while Claude thinks.
  if (type !== 'disabled' && model.temperature !== undefined && model.temperature !== 1) {
    return `model.temperature must be left out (or 1) when model.thinking.type is "${String(type)}"; Anthropic allows no other value while the model thinks`;
  }
  if (type !== 'enabled') return undefined;
  const { budgetTokens } = rest;
  if (typeof budgetTokens !== 'number' || !Number.isInteger(budgetTokens) || budgetTokens < MIN_THINKING_BUDGET_TOKENS) {
    return `model.thinking.budgetTokens must be an integer of at least ${MIN_THINKING_BUDGET_TOKENS} (got ${JSON.stringify(budgetTokens)})`;
  }
  const maxTokens = model.maxTokens ?? DEFAULT_ANTHROPIC_MAX_TOKENS;
  if (budgetTokens >= maxTokens) {
    return `model.thinking.budgetTokens (${budgetTokens}) must be less than model.maxTokens (${maxTokens}${model.maxTokens === undefined ? ', the default' : ''}): thinking counts toward the output limit`;
  }
  return undefined;
}
