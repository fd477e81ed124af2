/** The turn's check of provider options, the usage sum, and how reasoning is shown: pure helpers, no Temporal. */
import picocolors from 'picocolors';
import { describe, expect, it } from 'vitest';
import { messageLines, usageText } from '../../cli/format.js';
import { hasContent } from '../../workflows/turn/cut-off-step.js';
import { modelSettingsProblem } from '../../workflows/turn/model-settings.js';
import type { ModelSettings } from '../../workflows/types/index.js';
import { addUsage } from '../../workflows/context/usage.js';

const anthropic = (extra: Record<string, unknown>): ModelSettings => ({ provider: 'anthropic', model: 'claude-sonnet-4-6', maxTokens: 8000, ...extra });

describe('ModelSettings', () => {
  it('takes the options the providers take, and no other: a misspelt one does not compile', () => {
    const every: ModelSettings[] = [
      { provider: 'anthropic', model: 'claude', maxTokens: 8000, temperature: 1, thinking: { type: 'enabled', budgetTokens: 2048 }, promptCaching: false, stream: false },
      { provider: 'openai', model: 'gpt', reasoningEffort: 'low', serviceTier: 'flex', metadata: { tenant: 'acme' } },
      { provider: 'openai-responses', model: 'gpt', reasoningSummary: 'auto', store: true },
      { provider: 'scripted', model: 'demo' },
    ];
    expect(every.map(modelSettingsProblem)).toEqual([undefined, undefined, undefined, undefined]);
    // @ts-expect-error `maxToken` is not an option (`maxTokens` is)
    const misspelt: ModelSettings = { provider: 'openai', model: 'gpt', maxToken: 100 };
    // @ts-expect-error `reasoning_effort` is the wire name; the option is `reasoningEffort`
    const wireName: ModelSettings = { provider: 'openai', model: 'gpt', reasoning_effort: 'low' };
    expect([misspelt, wireName]).toHaveLength(2);
  });
});

describe('modelSettingsProblem', () => {
  it("gives the clouds their first-party provider's options and a name of the worker's settings, and refuses the other provider's", () => {
    const thinking = { type: 'enabled', budgetTokens: 2048 } as const;
    expect(modelSettingsProblem({ provider: 'anthropic-bedrock', endpoint: 'eu', model: 'claude-sonnet-4-5', maxTokens: 4000, thinking, promptCaching: false })).toBeUndefined();
    expect(modelSettingsProblem({ provider: 'anthropic-vertex', model: 'claude-sonnet-4-5', thinking: { type: 'adaptive' } })).toBeUndefined();
    expect(modelSettingsProblem({ provider: 'azure-openai', endpoint: 'prod', model: 'o4-mini', reasoningEffort: 'high', serviceTier: 'default', metadata: { tenant: 'acme' } })).toBeUndefined();
    expect(modelSettingsProblem({ provider: 'azure-openai', model: 'gpt-4.1-mini', thinking })).toBe('model.thinking is an Anthropic option; provider "azure-openai" does not take it (OpenAI: use model.reasoningEffort)');
    expect(modelSettingsProblem({ provider: 'anthropic-bedrock', model: 'claude-sonnet-4-5', reasoningEffort: 'low' })).toBe('model.reasoningEffort is an OpenAI and AI SDK option; provider "anthropic-bedrock" does not take it');
    expect(modelSettingsProblem({ provider: 'azure-openai', model: 'gpt-4.1-mini', store: true })).toBe('model.store is an option of the Responses API (providers "openai-responses", "azure-openai-responses"); provider "azure-openai" does not take it');
  });

  it('accepts settings without provider options, and valid thinking and reasoning effort', () => {
    expect(modelSettingsProblem({ provider: 'openai', model: 'gpt-4.1-mini', maxTokens: 10, temperature: 0.2 })).toBeUndefined();
    expect(modelSettingsProblem(anthropic({ thinking: { type: 'enabled', budgetTokens: 1024 } }))).toBeUndefined();
    expect(modelSettingsProblem(anthropic({ thinking: { type: 'adaptive' } }))).toBeUndefined();
    expect(modelSettingsProblem(anthropic({ thinking: { type: 'disabled' }, temperature: 0.2 }))).toBeUndefined();
    expect(modelSettingsProblem({ provider: 'openai', model: 'o4-mini', reasoningEffort: 'high' })).toBeUndefined();
  });

  it.each([
    [anthropic({ thinking: { type: 'enabled', budgetTokens: 512 } }), 'model.thinking.budgetTokens must be an integer of at least 1024 (got 512)'],
    [anthropic({ thinking: { type: 'enabled' } }), 'model.thinking.budgetTokens must be an integer of at least 1024 (got undefined)'],
    [anthropic({ thinking: { type: 'enabled', budgetTokens: 8000 } }), 'model.thinking.budgetTokens (8000) must be less than model.maxTokens (8000)'],
    [{ provider: 'anthropic', model: 'claude-sonnet-4-6', thinking: { type: 'enabled', budgetTokens: 5000 } }, 'must be less than model.maxTokens (4096, the default)'],
    [anthropic({ thinking: { type: 'enabled', budget_tokens: 2048 } }), 'model.thinking has unknown field(s) budget_tokens for type "enabled" (the field is budgetTokens)'],
    [anthropic({ thinking: { type: 'on' } }), 'model.thinking.type must be one of enabled, adaptive, disabled (got "on")'],
    [anthropic({ thinking: true }), 'model.thinking must be an object'],
    [anthropic({ thinking: { type: 'adaptive' }, temperature: 0.5 }), 'model.temperature must be left out (or 1)'],
    [{ provider: 'openai', model: 'o4-mini', thinking: { type: 'adaptive' } }, 'model.thinking is an Anthropic option; provider "openai" does not take it'],
    [{ provider: 'anthropic', model: 'claude-sonnet-4-6', reasoningEffort: 'low' }, 'model.reasoningEffort is an OpenAI and AI SDK option; provider "anthropic" does not take it'],
    [{ provider: 'openai', model: 'o4-mini', reasoningEffort: 'extreme' }, 'model.reasoningEffort must be one of none, minimal, low, medium, high, xhigh (got "extreme")'],
  ] as Array<[ModelSettings, string]>)('refuses %j, naming the field', (settings, message) => {
    expect(modelSettingsProblem(settings)).toContain(message);
  });
});

describe('modelSettingsProblem: OpenAI options', () => {
  const responses = (extra: Record<string, unknown>): ModelSettings => ({ provider: 'openai-responses', model: 'o4-mini', ...extra });

  it('accepts the Responses options, and service tier and metadata on both OpenAI providers', () => {
    expect(modelSettingsProblem(responses({ maxTokens: 16, reasoningEffort: 'low', reasoningSummary: 'detailed', store: true, serviceTier: 'flex', metadata: { tenant: 'acme' } }))).toBeUndefined();
    expect(modelSettingsProblem({ provider: 'openai', model: 'gpt-4.1', serviceTier: 'priority', metadata: { a: 'b' } })).toBeUndefined();
  });

  it.each([
    [responses({ maxTokens: 8 }), 'model.maxTokens must be an integer of at least 16 for the Responses API, which sends it as max_output_tokens (got 8)'],
    [responses({ reasoningSummary: 'short' }), 'model.reasoningSummary must be one of auto, concise, detailed (got "short")'],
    [{ provider: 'openai', model: 'o4-mini', reasoningSummary: 'auto' }, 'model.reasoningSummary is an option of the Responses API (providers "openai-responses", "azure-openai-responses"); provider "openai" does not take it'],
    [{ provider: 'openai', model: 'gpt-4.1', store: false }, 'model.store is an option of the Responses API (providers "openai-responses", "azure-openai-responses"); provider "openai" does not take it'],
    [responses({ store: 'no' }), 'model.store must be true or false (got "no")'],
    [responses({ serviceTier: 'fast' }), 'model.serviceTier must be one of auto, default, flex, scale, priority (got "fast")'],
    [{ provider: 'anthropic', model: 'claude-sonnet-4-6', serviceTier: 'auto' }, 'model.serviceTier is an OpenAI option; provider "anthropic" does not take it'],
    [responses({ metadata: { n: 1 } }), 'model.metadata.n must be a string (got 1)'],
    [responses({ metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])) }), 'model.metadata has 17 keys; OpenAI allows at most 16'],
    [responses({ metadata: { note: 'x'.repeat(513) } }), 'model.metadata.note is 513 characters; OpenAI allows at most 512'],
    [responses({ metadata: ['a'] }), 'model.metadata must be an object of string values'],
    [responses({ thinking: { type: 'adaptive' } }), 'model.thinking is an Anthropic option; provider "openai-responses" does not take it'],
    [{ provider: 'anthropic', model: 'claude-sonnet-4-6', endpoint: 'vllm' }, 'model.endpoint names an OpenAI-compatible endpoint; provider "anthropic" does not take it'],
    [{ provider: 'openai', model: 'qwen3', endpoint: '' }, "model.endpoint must be the name of one of the worker's endpoints"],
    [{ provider: 'openai', model: 'gpt-4.1', providerOptions: { openai: {} } }, 'model.providerOptions is an AI SDK option; provider "openai" does not take it'],
    [{ provider: 'ai-sdk', model: 'gemini', providerOptions: { google: true } } as unknown as ModelSettings, 'model.providerOptions must be an object of objects keyed by provider, e.g. { google: { thinkingConfig: { includeThoughts: true } } }'],
  ] as Array<[ModelSettings, string]>)('refuses %j, naming the field', (settings, message) => {
    expect(modelSettingsProblem(settings)).toBe(message.startsWith('model.thinking') ? `${message} (OpenAI: use model.reasoningEffort)` : message);
  });
});

describe('addUsage', () => {
  it('sums every count, and adds the optional ones only once a step reported them', () => {
    const total = { inputTokens: 0, outputTokens: 0 };
    addUsage(total, { inputTokens: 10, outputTokens: 5 });
    expect(total).toEqual({ inputTokens: 10, outputTokens: 5 });
    addUsage(total, { inputTokens: 20, outputTokens: 7, cachedInputTokens: 16, reasoningTokens: 3 });
    addUsage(total, { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0, reasoningTokens: 2 });
    expect(total).toEqual({ inputTokens: 31, outputTokens: 13, cachedInputTokens: 16, reasoningTokens: 5 });
  });
});

describe('the CLI', () => {
  const plain = picocolors.createColors(false);

  it('shows cached and reasoning tokens only when reported, and reasoning apart from the reply', () => {
    expect(usageText({ inputTokens: 120, outputTokens: 40 })).toBe('120 in / 40 out tokens');
    expect(usageText({ inputTokens: 120, outputTokens: 40, cachedInputTokens: 80, reasoningTokens: 30 })).toBe('120 in (80 cached) / 40 out (30 reasoning) tokens');
    expect(
      messageLines(
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', provider: 'anthropic', text: 'Look\nit up first.', signature: 'sig' },
            { type: 'reasoning', provider: 'anthropic', text: '', redactedData: 'opaque' },
            { type: 'text', text: 'Looking it up.' },
          ],
        },
        plain,
      ),
    ).toEqual(['(anthropic reasoning) Look it up first.', '(anthropic reasoning, redacted)', 'Looking it up.']);
  });

  it('shows an OpenAI reasoning item by its summary, or as encrypted when it has none', () => {
    const plainColors = picocolors.createColors(false);
    expect(
      messageLines(
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', provider: 'openai', text: 'Check the order.', itemId: 'rs_1', encryptedContent: 'blob', summary: ['Check the order.'] },
            { type: 'reasoning', provider: 'openai', text: '', itemId: 'rs_2', encryptedContent: 'blob', summary: [] },
          ],
        },
        plainColors,
      ),
    ).toEqual(['(openai reasoning) Check the order.', '(openai reasoning, encrypted)']);
  });

  it('counts reasoning alone as no reply in a cut-off step', () => {
    expect(hasContent({ role: 'assistant', content: [{ type: 'reasoning', provider: 'anthropic', text: 'Thinking…', signature: 'sig' }] })).toBe(false);
    expect(hasContent({ role: 'assistant', content: [{ type: 'reasoning', provider: 'anthropic', text: 'Thinking…', signature: 'sig' }, { type: 'text', text: 'Part' }] })).toBe(true);
  });
});
