/**
 * Checks of a turn's provider-specific model options, run when the turn starts.
 *
 * An option a provider would ignore, or reject only after the turn has parked for a day, is
 * refused up front instead: the turn fails at once with `InvalidTurnInput` and a message naming
 * the field. Pure and deterministic (workflow code); only fields that are present are checked,
 * so inputs without them are accepted exactly as before.
 */
import type { AnthropicThinking, ModelSettings, OpenAIReasoningEffort } from './types.js';

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
    if (model.provider !== 'anthropic') return `model.promptCaching is an Anthropic option; provider "${model.provider}" does not take it (OpenAI caches long prompts on its own)`;
    if (typeof model.promptCaching !== 'boolean') return `model.promptCaching must be true or false (got ${JSON.stringify(model.promptCaching)})`;
  }
  if (model.reasoningEffort !== undefined) {
    if (model.provider !== 'openai') return `model.reasoningEffort is an OpenAI option; provider "${model.provider}" does not take it`;
    if (!OPENAI_REASONING_EFFORTS.includes(model.reasoningEffort)) {
      return `model.reasoningEffort must be one of ${OPENAI_REASONING_EFFORTS.join(', ')} (got ${JSON.stringify(model.reasoningEffort)})`;
    }
  }
  return undefined;
}

function thinkingProblem(model: ModelSettings): string | undefined {
  const thinking: unknown = model.thinking;
  if (model.provider !== 'anthropic') return `model.thinking is an Anthropic option; provider "${model.provider}" does not take it (OpenAI: use model.reasoningEffort)`;
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
