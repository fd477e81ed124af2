/**
 * The provider activities against the real `openai` and `@anthropic-ai/sdk` clients, talking
 * HTTP to the strict fake server: wire conversion both ways, and how every kind of failure is
 * classified for Temporal's retry policy.
 */
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { callAnthropic, convertAnthropicUsage, convertToAnthropicMessages } from '../../activities/providers/anthropic.js';
import { nextRetryDelayFor, retryDelayMs, type ProviderCallOptions } from '../../activities/providers/errors.js';
import { callOpenAI, convertOpenAIUsage, convertToOpenAIMessages, isOpenAIReasoningModel } from '../../activities/providers/openai.js';
import type { Message, ModelStepInput, ModelStepResult } from '../../workflows/types/index.js';
import {
  startFakeProviderServer,
  validateAnthropicRequest,
  validateOpenAIRequest,
  type FakeProvider,
  type FakeProviderServer,
} from '../fake-provider/server.js';

let server: FakeProviderServer;

beforeAll(async () => {
  server = await startFakeProviderServer();
});
afterAll(async () => {
  await server?.close();
});
beforeEach(() => {
  server.reset();
});

const lookupOrderTool = {
  name: 'lookup_order',
  description: 'Looks up an order by id.',
  inputSchema: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'], additionalProperties: false },
};
const issueRefundTool = {
  name: 'issue_refund',
  description: 'Refunds an amount on an order.',
  inputSchema: { type: 'object', properties: { orderId: { type: 'string' }, amount: { type: 'number' } }, required: ['orderId', 'amount'] },
};

function stepInput(provider: FakeProvider, messages: Message[], overrides: Partial<ModelStepInput> = {}): ModelStepInput {
  return {
    model: { provider, model: provider === 'openai' ? 'gpt-test' : 'claude-test' },
    system: 'You are a support agent.',
    messages,
    tools: [lookupOrderTool, issueRefundTool],
    ...overrides,
  };
}

/** A history exercising every conversion rule: parallel calls, an error result, malformed input, a follow-up. */
const fullHistory: Message[] = [
  { role: 'user', content: 'Look up order 1001 and refund $250 on it.' },
  {
    role: 'assistant',
    content: [
      { type: 'text', text: 'Checking.' },
      { type: 'tool-call', toolCallId: 'call_a1', toolName: 'lookup_order', input: { orderId: '1001' } },
      { type: 'tool-call', toolCallId: 'call_a2', toolName: 'issue_refund', input: { orderId: '1001', amount: 250 } },
    ],
  },
  {
    role: 'tool',
    content: [
      { type: 'tool-result', toolCallId: 'call_a1', toolName: 'lookup_order', output: { status: 'shipped' } },
      { type: 'tool-result', toolCallId: 'call_a2', toolName: 'issue_refund', output: 'Denied: refunds over $100 need a manager.', isError: true },
    ],
  },
  {
    role: 'assistant',
    content: [{ type: 'tool-call', toolCallId: 'call_b1', toolName: 'lookup_order', input: '{"orderId": 10' }],
  },
  {
    role: 'tool',
    content: [{ type: 'tool-result', toolCallId: 'call_b1', toolName: 'lookup_order', output: 'Invalid input: not JSON', isError: true }],
  },
  { role: 'user', content: [{ type: 'text', text: 'Any news?' }] },
];

const providers = {
  openai: {
    call: callOpenAI,
    options: (): ProviderCallOptions => ({ apiKey: 'sk-test', baseURL: server.openaiBaseURL }),
  },
  anthropic: {
    call: callAnthropic,
    options: (): ProviderCallOptions => ({ apiKey: 'sk-ant-test', baseURL: server.anthropicBaseURL }),
  },
} as const;

/** Runs the call and returns what it threw, failing the test if it did not throw. */
async function failureOf(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ApplicationFailure);
  return error as ApplicationFailure;
}

function lastRequest() {
  const request = server.requests.at(-1);
  if (!request) throw new Error('the fake server received no request');
  return request;
}

describe.each(['openai', 'anthropic'] as const)('%s provider', (provider) => {
  const { call, options } = providers[provider];

  it('returns a text reply with its finish reason and token usage, cached and reasoning tokens included', async () => {
    server.script(provider, [{ text: 'Hello there.', usage: { inputTokens: 12, outputTokens: 3, cachedInputTokens: 4, reasoningTokens: 1 } }]);

    const result = await call(stepInput(provider, [{ role: 'user', content: 'Hi' }]), options());

    expect(result).toEqual<ModelStepResult>({
      message: { role: 'assistant', content: [{ type: 'text', text: 'Hello there.' }] },
      finishReason: 'stop',
      providerFinishReason: provider === 'openai' ? 'stop' : 'end_turn',
      // Anthropic sends input_tokens without the cache reads (8 here); they are added back.
      usage: { inputTokens: 12, outputTokens: 3, cachedInputTokens: 4, reasoningTokens: 1 },
    });
    expect(lastRequest().errors).toEqual([]);
  });

  it('returns a reply cut off by max_tokens with its partial text and tool call, marked length', async () => {
    // As the APIs return a tool call cut short: OpenAI's arguments stop mid-JSON, Anthropic's input is partial.
    const cutCall = provider === 'openai' ? { id: 'call_cut', name: 'issue_refund', arguments: '{"orderId": "1001", "amou' } : { id: 'toolu_cut', name: 'issue_refund', input: { orderId: '1001' } };
    server.script(provider, [{ text: 'Refunding now', toolCalls: [cutCall], finishReason: provider === 'openai' ? 'length' : 'max_tokens' }]);

    const result = await call(stepInput(provider, [{ role: 'user', content: 'Refund 1001' }]), options());

    expect(result).toMatchObject({ finishReason: 'length', providerFinishReason: provider === 'openai' ? 'length' : 'max_tokens' });
    expect(result.message.content).toEqual([
      { type: 'text', text: 'Refunding now' },
      { type: 'tool-call', toolCallId: cutCall.id, toolName: 'issue_refund', input: provider === 'openai' ? '{"orderId": "1001", "amou' : { orderId: '1001' } },
    ]);
  });

  it('returns a refusal that carries no content as an empty message marked content-filter', async () => {
    server.script(provider, [{ noContent: true, finishReason: provider === 'openai' ? 'content_filter' : 'refusal' }]);

    const result = await call(stepInput(provider, [{ role: 'user', content: 'Something it will not do' }]), options());

    expect(result).toMatchObject({ message: { role: 'assistant', content: [] }, finishReason: 'content-filter' });
    expect(lastRequest().errors).toEqual([]);
  });

  it('maps parallel tool calls to tool-call parts in the order the model made them', async () => {
    server.script(provider, [
      {
        text: 'Let me check both.',
        toolCalls: [
          { id: 'call_1', name: 'lookup_order', input: { orderId: '1001' } },
          { id: 'call_2', name: 'lookup_order', input: { orderId: '1002' } },
          { id: 'call_3', name: 'issue_refund', input: { orderId: '1001', amount: 5 } },
        ],
      },
    ]);

    const result = await call(stepInput(provider, [{ role: 'user', content: 'Check 1001 and 1002' }]), options());

    expect(result.finishReason).toBe('tool-calls');
    expect(result.message.content).toEqual([
      { type: 'text', text: 'Let me check both.' },
      { type: 'tool-call', toolCallId: 'call_1', toolName: 'lookup_order', input: { orderId: '1001' } },
      { type: 'tool-call', toolCallId: 'call_2', toolName: 'lookup_order', input: { orderId: '1002' } },
      { type: 'tool-call', toolCallId: 'call_3', toolName: 'issue_refund', input: { orderId: '1001', amount: 5 } },
    ]);
  });

  it('sends a full history of tool calls and results, error results included, in a form the API accepts', async () => {
    await call(stepInput(provider, fullHistory), options());

    const request = lastRequest();
    expect(request.errors).toEqual([]);
    expect(request.status).toBe(200);
  });

  it('reads the API key and base URL from the environment at call time', async () => {
    const prefix = provider.toUpperCase();
    vi.stubEnv(`${prefix}_API_KEY`, 'key-from-env');
    vi.stubEnv(`${prefix}_BASE_URL`, provider === 'openai' ? server.openaiBaseURL : server.anthropicBaseURL);
    try {
      await call(stepInput(provider, [{ role: 'user', content: 'Hi' }]));
    } finally {
      vi.unstubAllEnvs();
    }
    // Both SDKs send the key as a bearer token (the Anthropic SDK 1.x no longer uses x-api-key).
    expect(lastRequest().headers.authorization).toBe('Bearer key-from-env');
  });

  it('fails without retrying, naming the env var, when no API key is configured', async () => {
    vi.stubEnv(`${provider.toUpperCase()}_API_KEY`, '');
    try {
      const failure = await failureOf(call(stepInput(provider, [{ role: 'user', content: 'Hi' }])));
      expect(failure.nonRetryable).toBe(true);
      expect(failure.type).toBe('ProviderAuthenticationError');
      expect(failure.message).toContain(`${provider.toUpperCase()}_API_KEY`);
    } finally {
      vi.unstubAllEnvs();
    }
    expect(server.requests).toHaveLength(0);
  });

  it('maps a 429 with retry-after to a retryable failure that asks Temporal to wait that long', async () => {
    server.script(provider, [{ status: 429, headers: { 'retry-after': '7' } }]);

    const failure = await failureOf(call(stepInput(provider, [{ role: 'user', content: 'Hi' }]), options()));

    expect(failure.nonRetryable).toBe(false);
    expect(failure.type).toBe('ProviderRetryableError');
    expect(failure.nextRetryDelay).toBe(7000);
    expect(failure.message).toMatch(new RegExp(`^${provider}: 429 `));
  });

  it.each([
    ['retry-after: 0', { 'retry-after': '0' }],
    ['retry-after-ms: 0.5', { 'retry-after-ms': '0.5' }],
    ['retry-after: a past HTTP date', { 'retry-after': 'Mon, 01 Jan 2024 00:00:00 GMT' }],
  ])('maps a 429 with %s to a retryable failure that leaves the wait to the retry policy', async (_, headers) => {
    server.script(provider, [{ status: 429, headers }]);
    const retry = { attempt: 1, retryPolicy: { initialInterval: 1_000, backoffCoefficient: 2, maximumInterval: 60_000, maximumAttempts: 10 } };

    const failure = await failureOf(call(stepInput(provider, [{ role: 'user', content: 'Hi' }]), { ...options(), retry }));

    expect(failure.nonRetryable).toBe(false);
    expect(failure.type).toBe('ProviderRetryableError');
    // A zero delay would make Temporal stop retrying; no delay means the policy's backoff.
    expect(failure.nextRetryDelay).toBeUndefined();
  });

  it("caps a retry-after longer than the policy's maximum interval at that interval", async () => {
    server.script(provider, [{ status: 429, headers: { 'retry-after': '86400' } }]);
    const retry = { attempt: 3, retryPolicy: { initialInterval: 1_000, backoffCoefficient: 2, maximumInterval: 60_000, maximumAttempts: 10 } };

    const failure = await failureOf(call(stepInput(provider, [{ role: 'user', content: 'Hi' }]), { ...options(), retry }));

    expect(failure.nextRetryDelay).toBe(60_000);
  });

  it('maps a 500 to a retryable failure with no imposed delay', async () => {
    server.script(provider, [{ status: 500 }]);

    const failure = await failureOf(call(stepInput(provider, [{ role: 'user', content: 'Hi' }]), options()));

    expect(failure.nonRetryable).toBe(false);
    expect(failure.type).toBe('ProviderRetryableError');
    expect(failure.nextRetryDelay).toBeUndefined();
    expect(failure.message).toMatch(new RegExp(`^${provider}: 500 `));
  });

  it('maps a 401 to a non-retryable authentication failure naming the provider and status', async () => {
    server.script(provider, [{ status: 401 }]);

    const failure = await failureOf(call(stepInput(provider, [{ role: 'user', content: 'Hi' }]), options()));

    expect(failure.nonRetryable).toBe(true);
    expect(failure.type).toBe('ProviderAuthenticationError');
    expect(failure.message).toBe(
      provider === 'openai'
        ? 'openai: 401 Unauthorized — Incorrect API key provided: sk-test. You can find your API key at https://platform.openai.com/account/api-keys.'
        : 'anthropic: 401 authentication_error — invalid x-api-key',
    );
  });

  it('maps a 404 for an unknown model to a non-retryable not-found failure', async () => {
    server.script(provider, [{ status: 404 }]);
    const input = stepInput(provider, [{ role: 'user', content: 'Hi' }]);
    input.model.model = 'no-such-model';

    const failure = await failureOf(call(input, options()));

    expect(failure.nonRetryable).toBe(true);
    expect(failure.type).toBe('ProviderNotFoundError');
    expect(failure.message).toBe(
      provider === 'openai'
        ? 'openai: 404 Not Found — The model `no-such-model` does not exist or you do not have access to it.'
        : 'anthropic: 404 not_found_error — model: no-such-model',
    );
  });

  it('maps a 400 the API sends for an invalid request to a non-retryable bad-request failure', async () => {
    // The real validator answers: a tool result with no preceding call.
    const invalid: Message[] = [
      { role: 'user', content: 'Hi' },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_orphan', toolName: 'lookup_order', output: 'x' }] },
    ];

    const failure = await failureOf(call(stepInput(provider, invalid), options()));

    expect(failure.nonRetryable).toBe(true);
    expect(failure.type).toBe('ProviderBadRequestError');
    expect(failure.message).toContain('call_orphan');
  });

  it('maps a reset connection to a retryable failure', async () => {
    server.script(provider, [{ reset: true }]);

    const failure = await failureOf(call(stepInput(provider, [{ role: 'user', content: 'Hi' }]), options()));

    expect(failure.nonRetryable).toBe(false);
    expect(failure.type).toBe('ProviderRetryableError');
    expect(failure.message).toMatch(new RegExp(`^${provider}: connection error`));
  });

  it('maps a request that exceeds its timeout to a retryable failure', async () => {
    server.script(provider, [{ delayMs: 2_000, text: 'too late' }]);

    const failure = await failureOf(call(stepInput(provider, [{ role: 'user', content: 'Hi' }]), { ...options(), timeoutMs: 100 }));

    expect(failure.nonRetryable).toBe(false);
    expect(failure.type).toBe('ProviderRetryableError');
    expect(failure.message).toBe(`${provider}: request timed out`);
  });

  it('maps a truncated JSON body to a retryable failure', async () => {
    server.script(provider, [{ malformed: true }]);

    const failure = await failureOf(call(stepInput(provider, [{ role: 'user', content: 'Hi' }]), options()));

    expect(failure.nonRetryable).toBe(false);
    expect(failure.type).toBe('ProviderRetryableError');
    expect(failure.message).toMatch(new RegExp(`^${provider}: malformed response body`));
  });

  it('maps a 200 whose body is not a model reply to a retryable failure', async () => {
    server.script(provider, [{ status: 200, errorBody: { hello: 'proxy' } }]);

    const failure = await failureOf(call(stepInput(provider, [{ role: 'user', content: 'Hi' }]), options()));

    expect(failure.nonRetryable).toBe(false);
    expect(failure.message).toMatch(new RegExp(`^${provider}: unexpected response`));
  });

  it('rethrows the abort reason when the activity is cancelled mid-request', async () => {
    server.script(provider, [{ delayMs: 2_000, text: 'too late' }]);
    const controller = new AbortController();
    const reason = new Error('activity cancelled');
    setTimeout(() => controller.abort(reason), 50);

    await expect(call(stepInput(provider, [{ role: 'user', content: 'Hi' }]), { ...options(), signal: controller.signal })).rejects.toBe(reason);
  });
});

describe('callOpenAI', () => {
  const options = () => providers.openai.options();

  it('keeps malformed tool-call arguments as raw text instead of throwing', async () => {
    server.script('openai', [{ toolCalls: [{ id: 'call_bad', name: 'lookup_order', arguments: '{"orderId": "10' }] }]);

    const result = await callOpenAI(stepInput('openai', [{ role: 'user', content: 'Hi' }]), options());

    expect(result.message.content).toEqual([{ type: 'tool-call', toolCallId: 'call_bad', toolName: 'lookup_order', input: '{"orderId": "10' }]);
  });

  it('converts the history to Chat Completions messages: system first, one tool message per result', async () => {
    await callOpenAI(stepInput('openai', fullHistory), options());

    const { body } = lastRequest();
    expect(body.messages).toEqual([
      { role: 'system', content: 'You are a support agent.' },
      { role: 'user', content: 'Look up order 1001 and refund $250 on it.' },
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          { id: 'call_a1', type: 'function', function: { name: 'lookup_order', arguments: '{"orderId":"1001"}' } },
          { id: 'call_a2', type: 'function', function: { name: 'issue_refund', arguments: '{"orderId":"1001","amount":250}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_a1', content: '{"status":"shipped"}' },
      { role: 'tool', tool_call_id: 'call_a2', content: 'Denied: refunds over $100 need a manager.' },
      // Malformed arguments go back verbatim, so the model sees what it wrote.
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_b1', type: 'function', function: { name: 'lookup_order', arguments: '{"orderId": 10' } }] },
      { role: 'tool', tool_call_id: 'call_b1', content: 'Invalid input: not JSON' },
      { role: 'user', content: 'Any news?' },
    ]);
    expect(body.tools[0]).toEqual({
      type: 'function',
      function: { name: 'lookup_order', description: 'Looks up an order by id.', parameters: lookupOrderTool.inputSchema },
    });
    expect(body).not.toHaveProperty('parallel_tool_calls');
  });

  it('sends max_tokens and temperature only when the turn sets them, and no tools field when none are offered', async () => {
    await callOpenAI(stepInput('openai', [{ role: 'user', content: 'Hi' }], { tools: [] }), options());
    expect(lastRequest().body).not.toHaveProperty('max_tokens');
    expect(lastRequest().body).not.toHaveProperty('temperature');
    expect(lastRequest().body).not.toHaveProperty('tools');

    const input = stepInput('openai', [{ role: 'user', content: 'Hi' }]);
    input.model = { ...input.model, maxTokens: 256, temperature: 0.2 };
    await callOpenAI(input, options());
    expect(lastRequest().body).toMatchObject({ max_tokens: 256, temperature: 0.2 });
    expect(server.requests.every((request) => request.errors.length === 0)).toBe(true);
  });

  it.each([
    ['length', 'length'],
    ['content_filter', 'content-filter'],
    ['function_call', 'tool-calls'],
  ] as const)('maps finish_reason %s to %s, keeping the provider\'s value', async (wire, neutral) => {
    server.script('openai', [{ text: 'partial', finishReason: wire }]);
    const result = await callOpenAI(stepInput('openai', [{ role: 'user', content: 'Hi' }]), options());
    expect(result).toMatchObject({ finishReason: neutral, providerFinishReason: wire });
  });

  it.each(['o4-mini', 'o3', 'o1', 'o3-mini-2025-01-31', 'gpt-5', 'gpt-5-mini', 'gpt-5.2-pro'])(
    'sends max_completion_tokens, never max_tokens, and reasoning_effort to the reasoning model %s',
    async (model) => {
      const input = stepInput('openai', [{ role: 'user', content: 'Hi' }]);
      input.model = { provider: 'openai', model, maxTokens: 2000, reasoningEffort: 'low' };
      await callOpenAI(input, options());
      const { body, errors } = lastRequest();
      expect(errors).toEqual([]);
      expect(body).toMatchObject({ max_completion_tokens: 2000, reasoning_effort: 'low' });
      expect(body).not.toHaveProperty('max_tokens');
    },
  );

  it('keeps max_tokens for other models, which OpenAI-compatible servers understand', async () => {
    for (const model of ['gpt-4.1-mini', 'gpt-4o', 'llama3.1:8b', 'Qwen/Qwen3-8B']) {
      const input = stepInput('openai', [{ role: 'user', content: 'Hi' }]);
      input.model = { provider: 'openai', model, maxTokens: 100 };
      await callOpenAI(input, options());
      expect(lastRequest().body).toMatchObject({ max_tokens: 100 });
      expect(lastRequest().body).not.toHaveProperty('max_completion_tokens');
      expect(lastRequest().body).not.toHaveProperty('reasoning_effort');
    }
  });

  it('sends service_tier and metadata, which the fake checks as the API does', async () => {
    const input = stepInput('openai', [{ role: 'user', content: 'Hi' }]);
    input.model = { provider: 'openai', model: 'gpt-4.1-mini', serviceTier: 'priority', metadata: { tenant: 'acme' } };
    await callOpenAI(input, providers.openai.options());
    expect(lastRequest().errors).toEqual([]);
    expect(lastRequest().body).toMatchObject({ service_tier: 'priority', metadata: { tenant: 'acme' } });
    expect(validateOpenAIRequest({ ...lastRequest().body, service_tier: 'turbo', metadata: { n: 1 } })).toEqual([
      "Invalid value: 'turbo'. Supported values are: 'auto', 'default', 'flex', 'scale', 'priority'. (param: service_tier)",
      "Invalid type for 'metadata.n': expected a string.",
    ]);
  });

  it('is refused by the fake, as by the API, when max_tokens goes to a reasoning model', async () => {
    expect(validateOpenAIRequest({ model: 'o4-mini', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 10 })).toEqual([
      "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
    ]);
  });

  it('names the reasoning models by the documented rule', () => {
    for (const model of ['o1', 'o1-mini', 'o3', 'o3-pro', 'o4-mini', 'o4-mini-2025-04-16', 'gpt-5', 'gpt-5.1', 'gpt-5-nano', 'gpt-5.3-chat-latest', 'codex-mini-latest', 'ft:o4-mini:acme::abc']) {
      expect(isOpenAIReasoningModel(model), model).toBe(true);
    }
    for (const model of ['gpt-4.1', 'gpt-4o', 'gpt-4o-mini', 'gpt-50x', 'omni-moderation-latest', 'ollama/o3ish', 'llama3.1']) {
      expect(isOpenAIReasoningModel(model), model).toBe(false);
    }
  });

  it('leaves every reasoning part out of the messages, an Anthropic thinking block included', async () => {
    const history: Message[] = [
      { role: 'user', content: 'Look up 1001.' },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', provider: 'anthropic', text: 'The user wants order 1001.', signature: 'c2lnbmF0dXJl' },
          { type: 'reasoning', provider: 'anthropic', text: '', redactedData: 'opaque' },
          { type: 'tool-call', toolCallId: 'toolu_1', toolName: 'lookup_order', input: { orderId: '1001' } },
        ],
      },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'toolu_1', toolName: 'lookup_order', output: 'shipped' }] },
      { role: 'assistant', content: [{ type: 'reasoning', provider: 'openai', text: 'summary' }, { type: 'text', text: 'It shipped.' }] },
      { role: 'user', content: 'Thanks' },
    ];
    expect(convertToOpenAIMessages(undefined, history)).toEqual([
      { role: 'user', content: 'Look up 1001.' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'lookup_order', arguments: '{"orderId":"1001"}' } }] },
      { role: 'tool', tool_call_id: 'toolu_1', content: 'shipped' },
      { role: 'assistant', content: 'It shipped.' },
      { role: 'user', content: 'Thanks' },
    ]);
    await callOpenAI(stepInput('openai', history), options());
    expect(lastRequest().errors).toEqual([]);
    expect(JSON.stringify(lastRequest().body)).not.toMatch(/order 1001\.|signature|opaque|summary/);
  });

  it("leaves out an assistant message with nothing Chat Completions carries: another provider's hosted call alone", () => {
    const history: Message[] = [
      { role: 'user', content: 'Find the fee.' },
      { role: 'assistant', content: [{ type: 'provider-tool', provider: 'anthropic', toolCallId: 'srvtoolu_1', toolName: 'web_search', input: { query: 'fee' }, raw: [], isError: true, output: 'the response ended before the tool returned a result' }] },
      { role: 'user', content: 'Try again.' },
    ];
    expect(convertToOpenAIMessages(undefined, history)).toEqual([
      { role: 'user', content: 'Find the fee.' },
      { role: 'user', content: 'Try again.' },
    ]);
  });

  it('reads cached and reasoning tokens from the usage details, and leaves them out when a server sends none', () => {
    expect(convertOpenAIUsage({ prompt_tokens: 100, completion_tokens: 50, total_tokens: 150, prompt_tokens_details: { cached_tokens: 64 }, completion_tokens_details: { reasoning_tokens: 32 } })).toEqual({
      inputTokens: 100,
      outputTokens: 50,
      cachedInputTokens: 64,
      reasoningTokens: 32,
    });
    expect(convertOpenAIUsage({ prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 })).toEqual({ inputTokens: 7, outputTokens: 2 });
  });

  it('uses retry-after-ms over retry-after when both are sent', async () => {
    server.script('openai', [{ status: 429, headers: { 'retry-after-ms': '1500', 'retry-after': '9' } }]);
    const failure = await failureOf(callOpenAI(stepInput('openai', [{ role: 'user', content: 'Hi' }]), options()));
    expect(failure.nextRetryDelay).toBe(1500);
  });
});

describe('callAnthropic', () => {
  const options = () => providers.anthropic.options();

  it('converts the history to alternating turns: system on top, tool results first in one user turn', async () => {
    // Caching off: the breakpoints it adds are checked in anthropic-caching.test.ts.
    await callAnthropic(stepInput('anthropic', fullHistory, { model: { provider: 'anthropic', model: 'claude-test', promptCaching: false } }), options());

    const { body, headers } = lastRequest();
    expect(headers['anthropic-version']).toBeTruthy();
    expect(body.system).toBe('You are a support agent.');
    expect(body.max_tokens).toBe(4096);
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Look up order 1001 and refund $250 on it.' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking.' },
          { type: 'tool_use', id: 'call_a1', name: 'lookup_order', input: { orderId: '1001' } },
          { type: 'tool_use', id: 'call_a2', name: 'issue_refund', input: { orderId: '1001', amount: 250 } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_a1', content: '{"status":"shipped"}' },
          { type: 'tool_result', tool_use_id: 'call_a2', content: 'Denied: refunds over $100 need a manager.', is_error: true },
        ],
      },
      // tool_use input must be an object: malformed arguments are wrapped, not dropped.
      { role: 'assistant', content: [{ type: 'tool_use', id: 'call_b1', name: 'lookup_order', input: { _malformed: '{"orderId": 10' } }] },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_b1', content: 'Invalid input: not JSON', is_error: true },
          { type: 'text', text: 'Any news?' },
        ],
      },
    ]);
    expect(body.tools[0]).toEqual({ name: 'lookup_order', description: 'Looks up an order by id.', input_schema: lookupOrderTool.inputSchema });
  });

  it('drops empty assistant text, which the API rejects, and sends max_tokens and temperature from the turn', async () => {
    const input = stepInput('anthropic', [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: [{ type: 'text', text: '' }] },
      { role: 'user', content: 'Hello?' },
    ]);
    input.model = { ...input.model, maxTokens: 300, temperature: 0.5, promptCaching: false };

    await callAnthropic(input, options());

    const { body, errors } = lastRequest();
    expect(errors).toEqual([]);
    expect(body).toMatchObject({ max_tokens: 300, temperature: 0.5 });
    expect(body.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'Hi' }, { type: 'text', text: 'Hello?' }] }]);
  });

  it.each([
    ['stop_sequence', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['refusal', 'content-filter'],
  ] as const)('maps stop_reason %s to %s, keeping the provider\'s value', async (wire, neutral) => {
    server.script('anthropic', [{ text: 'partial', finishReason: wire }]);
    const result = await callAnthropic(stepInput('anthropic', [{ role: 'user', content: 'Hi' }]), options());
    expect(result).toMatchObject({ finishReason: neutral, providerFinishReason: wire });
  });

  const thinkingModel = { provider: 'anthropic' as const, model: 'claude-test', maxTokens: 4000, thinking: { type: 'enabled' as const, budgetTokens: 2048 } };

  /** Step 1 of a thinking tool loop: the model thinks (one block readable, one redacted) and calls a tool. */
  async function thinkingToolCall() {
    server.script('anthropic', [
      { thinking: [{ text: 'The user wants order 1001; look it up first.' }, { redacted: true }], text: 'Looking it up.', toolCalls: [{ id: 'toolu_t1', name: 'lookup_order', input: { orderId: '1001' } }] },
    ]);
    const first = await callAnthropic(stepInput('anthropic', [{ role: 'user', content: 'Where is order 1001?' }], { model: thinkingModel }), options());
    const continuation: Message[] = [
      { role: 'user', content: 'Where is order 1001?' },
      first.message,
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'toolu_t1', toolName: 'lookup_order', output: { status: 'shipped' } }] },
    ];
    return { first, continuation };
  }

  it('sends thinking with budget_tokens, and returns thinking and redacted_thinking blocks as reasoning parts first', async () => {
    const { first } = await thinkingToolCall();
    expect(lastRequest().body.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    expect(first.message.content).toEqual([
      { type: 'reasoning', provider: 'anthropic', text: 'The user wants order 1001; look it up first.', signature: expect.any(String) },
      { type: 'reasoning', provider: 'anthropic', text: '', redactedData: expect.any(String) },
      { type: 'text', text: 'Looking it up.' },
      { type: 'tool-call', toolCallId: 'toolu_t1', toolName: 'lookup_order', input: { orderId: '1001' } },
    ]);
    expect(first.usage.reasoningTokens).toBe(0);
  });

  it('continues a thinking tool loop with the thinking blocks sent back verbatim, first in the assistant turn', async () => {
    const { first, continuation } = await thinkingToolCall();
    server.script('anthropic', [{ text: 'Order 1001 has shipped.' }]);
    const second = await callAnthropic(stepInput('anthropic', continuation, { model: thinkingModel }), options());

    expect(second.message.content).toEqual([{ type: 'text', text: 'Order 1001 has shipped.' }]);
    const { body, errors } = lastRequest();
    expect(errors).toEqual([]);
    const [thinking, redacted] = first.message.content as Array<{ text: string; signature?: string; redactedData?: string }>;
    expect(body.messages[1].content.slice(0, 2)).toEqual([
      { type: 'thinking', thinking: thinking.text, signature: thinking.signature },
      { type: 'redacted_thinking', data: redacted.redactedData },
    ]);
  });

  it('is refused, as by the API, when a thinking block comes back changed or missing', async () => {
    const { continuation } = await thinkingToolCall();
    const assistant = continuation[1] as Extract<Message, { role: 'assistant' }>;
    const tampered = structuredClone(continuation);
    (tampered[1] as typeof assistant).content[0] = { ...(assistant.content[0] as object), text: 'The user wants order 1002.' } as (typeof assistant.content)[number];
    const tamperedFailure = await failureOf(callAnthropic(stepInput('anthropic', tampered, { model: thinkingModel }), options()));
    expect(tamperedFailure).toMatchObject({ nonRetryable: true, type: 'ProviderBadRequestError' });
    expect(tamperedFailure.message).toContain('Invalid `signature` in `thinking` block');

    const stripped = structuredClone(continuation);
    (stripped[1] as typeof assistant).content = assistant.content.filter((part) => part.type !== 'reasoning');
    const strippedFailure = await failureOf(callAnthropic(stepInput('anthropic', stripped, { model: thinkingModel }), options()));
    expect(strippedFailure.message).toContain('a final `assistant` message must start with a thinking block');

    const oneDropped = structuredClone(continuation);
    (oneDropped[1] as typeof assistant).content = assistant.content.filter((part, index) => index !== 1);
    const droppedFailure = await failureOf(callAnthropic(stepInput('anthropic', oneDropped, { model: thinkingModel }), options()));
    expect(droppedFailure.message).toContain('cannot be modified');
  });

  it("sends only its own provider's signed reasoning: other reasoning is dropped, never turned into text", () => {
    const converted = convertToAnthropicMessages([
      { role: 'user', content: 'Hi' },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', provider: 'openai', text: 'an OpenAI summary' },
          { type: 'reasoning', provider: 'anthropic', text: 'unsigned, so not from Claude' },
          { type: 'reasoning', provider: 'anthropic', text: 'signed', signature: 'sig' },
          { type: 'text', text: 'Hello.' },
        ],
      },
      { role: 'user', content: 'Again' },
    ]);
    expect(converted[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'signed', signature: 'sig' },
        { type: 'text', text: 'Hello.' },
      ],
    });
  });

  it('reports cache reads as cached input tokens, cache writes when there are any, and thinking tokens as reasoning tokens', () => {
    expect(
      convertAnthropicUsage({ input_tokens: 10, cache_creation_input_tokens: 5, cache_read_input_tokens: 100, output_tokens: 40, output_tokens_details: { thinking_tokens: 30 } }),
    ).toEqual({ inputTokens: 115, outputTokens: 40, cachedInputTokens: 100, cacheWriteInputTokens: 5, reasoningTokens: 30 });
    expect(convertAnthropicUsage({ input_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 4 })).toEqual({ inputTokens: 10, outputTokens: 4, cachedInputTokens: 0 });
    expect(convertAnthropicUsage({ input_tokens: 10, output_tokens: 4 })).toEqual({ inputTokens: 10, outputTokens: 4 });
  });

  it('honours a retry-after given as an HTTP date on an overloaded (529) response', async () => {
    const inFiveSeconds = new Date(Date.now() + 5_000).toUTCString();
    server.script('anthropic', [{ status: 529, headers: { 'retry-after': inFiveSeconds } }]);

    const failure = await failureOf(callAnthropic(stepInput('anthropic', [{ role: 'user', content: 'Hi' }]), options()));

    expect(failure.nonRetryable).toBe(false);
    expect(failure.message).toBe('anthropic: 529 overloaded_error — Overloaded');
    // HTTP dates have one-second resolution.
    expect(failure.nextRetryDelay).toBeGreaterThan(3_000);
    expect(failure.nextRetryDelay).toBeLessThanOrEqual(5_000);
  });
});

describe('the fake server\'s scripted replies', () => {
  it('refuses to script a reply the real API never sends', () => {
    expect(() => server.script('openai', [{ text: 'x', finishReason: 'max_tokens' }])).toThrow(/openai never sends the finish reason "max_tokens"/);
    expect(() => server.script('anthropic', [{ text: 'x', finishReason: 'length' }])).toThrow(/anthropic never sends the finish reason "length"/);
    expect(() => server.script('anthropic', [{ noContent: true, finishReason: 'end_turn' }])).toThrow(/returns no content only with refusal/);
    expect(() => server.script('openai', [{ noContent: true, text: 'x', finishReason: 'content_filter' }])).toThrow(/excludes text/);
    expect(server.remaining('openai') + server.remaining('anthropic')).toBe(0);
  });

  it('answers an impossible computed reply with a 500 naming the mistake', async () => {
    server.script('anthropic', [() => ({ text: 'x', finishReason: 'content_filter' })]);
    const failure = await failureOf(callAnthropic(stepInput('anthropic', [{ role: 'user', content: 'Hi' }]), providers.anthropic.options()));
    expect(failure.message).toMatch(/impossible scripted reply: anthropic never sends the finish reason "content_filter"/);
  });
});

describe('retryDelayMs', () => {
  const now = Date.parse('2030-01-01T00:00:00Z');
  it.each([
    [{ 'retry-after': '2' }, 2000],
    [{ 'retry-after': '0.5' }, 500],
    [{ 'retry-after-ms': '250' }, 250],
    [{ 'retry-after': 'Tue, 01 Jan 2030 00:00:03 GMT' }, 3000],
    [{ 'retry-after': 'Mon, 31 Dec 2029 23:59:00 GMT' }, 0],
    [{ 'retry-after': 'soon' }, undefined],
    [{ 'retry-after': '-1' }, undefined],
    [{}, undefined],
  ])('reads %j as %s ms', (headers, expected) => {
    expect(retryDelayMs(new Headers(headers), now)).toBe(expected);
  });
});

describe('nextRetryDelayFor', () => {
  const retryPolicy = { initialInterval: 1_000, backoffCoefficient: 2, maximumInterval: 60_000, maximumAttempts: 10 };
  it.each([
    ['no requested delay', undefined, 1, undefined],
    ['zero', 0, 1, undefined],
    ['1 ms (retry-after-ms: 0.5, rounded up)', 1, 1, undefined],
    ['no more than the policy backoff of attempt 1 (1 s)', 1_000, 1, undefined],
    ['more than the policy backoff of attempt 1', 1_500, 1, 1_500],
    ['no more than the policy backoff of attempt 3 (4 s)', 3_000, 3, undefined],
    ['more than the policy backoff of attempt 3', 7_000, 3, 7_000],
    ['more than the maximum interval', 86_400_000, 1, 60_000],
    ['more than the maximum interval, once the backoff has reached it', 86_400_000, 9, undefined],
  ])('%s: %s ms at attempt %s gives %s', (_, requested, attempt, expected) => {
    expect(nextRetryDelayFor(requested, { attempt, retryPolicy })).toBe(expected);
  });

  it('reads durations given as strings, as a workflow may write them', () => {
    const policy = { initialInterval: '50ms', backoffCoefficient: 1, maximumInterval: '200ms' };
    expect(nextRetryDelayFor(0, { attempt: 2, retryPolicy: policy })).toBeUndefined();
    expect(nextRetryDelayFor(120, { attempt: 2, retryPolicy: policy })).toBe(120);
    expect(nextRetryDelayFor(86_400_000, { attempt: 2, retryPolicy: policy })).toBe(200);
  });

  it('without the policy, leaves delays up to a second to the backoff and passes longer ones through', () => {
    expect(nextRetryDelayFor(0)).toBeUndefined();
    expect(nextRetryDelayFor(1_000, { attempt: 1 })).toBeUndefined();
    expect(nextRetryDelayFor(7_000)).toBe(7_000);
  });
});

describe('validateOpenAIRequest', () => {
  const call = (id: string) => ({ id, type: 'function', function: { name: 'lookup_order', arguments: '{}' } });
  const base = (messages: unknown[]) => ({
    model: 'gpt-test',
    messages,
    tools: [{ type: 'function', function: { name: 'lookup_order', parameters: { type: 'object', properties: {} } } }],
  });

  it('accepts tool calls each answered by one tool message', () => {
    const body = base([
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: null, tool_calls: [call('c1'), call('c2')] },
      { role: 'tool', tool_call_id: 'c2', content: 'two' },
      { role: 'tool', tool_call_id: 'c1', content: 'one' },
      { role: 'user', content: 'thanks' },
    ]);
    expect(validateOpenAIRequest(body)).toEqual([]);
  });

  it('rejects a tool call with no tool message before the next message', () => {
    const body = base([
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: null, tool_calls: [call('c1'), call('c2')] },
      { role: 'tool', tool_call_id: 'c1', content: 'one' },
      { role: 'user', content: 'thanks' },
    ]);
    expect(validateOpenAIRequest(body)).toEqual([expect.stringContaining('did not have response messages: c2')]);
  });

  it('rejects a tool call answered twice', () => {
    const body = base([
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: null, tool_calls: [call('c1')] },
      { role: 'tool', tool_call_id: 'c1', content: 'one' },
      { role: 'tool', tool_call_id: 'c1', content: 'again' },
    ]);
    expect(validateOpenAIRequest(body)).toEqual([expect.stringContaining('duplicate response for tool_call_id c1')]);
  });

  it('rejects a tool message that answers no call', () => {
    const body = base([
      { role: 'user', content: 'Hi' },
      { role: 'tool', tool_call_id: 'c9', content: 'orphan' },
    ]);
    expect(validateOpenAIRequest(body)).toEqual([expect.stringContaining("messages with role 'tool' must be a response to a preceeding message with 'tool_calls'")]);
  });

  it('rejects an assistant message with neither content nor tool calls, and a tool without an object schema', () => {
    const body = {
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'Hi' }, { role: 'assistant', content: null }],
      tools: [{ type: 'function', function: { name: 'lookup_order', parameters: { type: 'string' } } }],
    };
    const errors = validateOpenAIRequest(body);
    expect(errors).toContainEqual(expect.stringContaining("'messages[1].content': expected a string, got null"));
    expect(errors).toContainEqual(expect.stringContaining("schema must be a JSON Schema of 'type: \"object\"'"));
  });

  it('rejects a request without model or messages', () => {
    expect(validateOpenAIRequest({ messages: [] })).toEqual([
      'you must provide a model parameter',
      expect.stringContaining("Invalid 'messages': empty array"),
    ]);
  });
});

describe('validateAnthropicRequest: thinking', () => {
  const base = { model: 'claude-test', messages: [{ role: 'user', content: 'Hi' }] };
  it('wants 1024 <= budget_tokens < max_tokens, and no temperature but 1 while thinking', () => {
    expect(validateAnthropicRequest({ ...base, max_tokens: 4000, thinking: { type: 'enabled', budget_tokens: 2048 } })).toEqual([]);
    expect(validateAnthropicRequest({ ...base, max_tokens: 4000, thinking: { type: 'enabled', budget_tokens: 512 } })).toEqual([
      'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024',
    ]);
    expect(validateAnthropicRequest({ ...base, max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 2048 } })[0]).toMatch(/^`max_tokens` must be greater than `thinking.budget_tokens`/);
    expect(validateAnthropicRequest({ ...base, max_tokens: 4000, temperature: 0.3, thinking: { type: 'adaptive' } })[0]).toMatch(/^`temperature` may only be set to 1/);
    expect(validateAnthropicRequest({ ...base, max_tokens: 4000, thinking: { type: 'on' } })).toHaveLength(1);
  });
});

describe('validateAnthropicRequest', () => {
  const toolUse = (id: string) => ({ type: 'tool_use', id, name: 'lookup_order', input: {} });
  const toolResult = (id: string) => ({ type: 'tool_result', tool_use_id: id, content: 'ok' });
  const base = (messages: unknown[]) => ({
    model: 'claude-test',
    max_tokens: 100,
    messages,
    tools: [{ name: 'lookup_order', input_schema: { type: 'object', properties: {} } }],
  });

  it('accepts tool uses answered by tool results at the start of the next user turn', () => {
    const body = base([
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: [{ type: 'text', text: 'Checking' }, toolUse('t1'), toolUse('t2')] },
      { role: 'user', content: [toolResult('t2'), toolResult('t1'), { type: 'text', text: 'and?' }] },
    ]);
    expect(validateAnthropicRequest(body)).toEqual([]);
  });

  it('rejects a tool use without a tool result in the next message', () => {
    const body = base([
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: [toolUse('t1'), toolUse('t2')] },
      { role: 'user', content: [toolResult('t1')] },
    ]);
    expect(validateAnthropicRequest(body)).toEqual([expect.stringContaining('`tool_use` ids were found without `tool_result` blocks immediately after: t2')]);
  });

  it('rejects a tool use answered twice', () => {
    const body = base([
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: [toolUse('t1')] },
      { role: 'user', content: [toolResult('t1'), toolResult('t1')] },
    ]);
    expect(validateAnthropicRequest(body)).toEqual([expect.stringContaining('Found multiple `tool_result` blocks with id: t1')]);
  });

  it('rejects a tool result with no tool use in the previous message', () => {
    const body = base([{ role: 'user', content: [toolResult('t9')] }]);
    expect(validateAnthropicRequest(body)).toEqual([expect.stringContaining('unexpected `tool_use_id` found in `tool_result` blocks: t9')]);
  });

  it('rejects tool results that do not come first in the user turn', () => {
    const body = base([
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: [toolUse('t1')] },
      { role: 'user', content: [{ type: 'text', text: 'here:' }, toolResult('t1')] },
    ]);
    expect(validateAnthropicRequest(body)).toEqual([expect.stringContaining('Did not find 1 `tool_result` block(s) at the beginning of this message')]);
  });

  it('rejects consecutive user turns, a leading assistant turn and a system role', () => {
    expect(validateAnthropicRequest(base([{ role: 'user', content: 'a' }, { role: 'user', content: 'b' }]))).toEqual([
      expect.stringContaining('roles must alternate'),
    ]);
    expect(validateAnthropicRequest(base([{ role: 'assistant', content: 'a' }, { role: 'user', content: 'b' }]))).toEqual([
      'messages: first message must use the "user" role',
    ]);
    expect(validateAnthropicRequest(base([{ role: 'system', content: 'be nice' }, { role: 'user', content: 'b' }]))).toEqual([
      expect.stringContaining('The Messages API accepts a top-level `system` parameter'),
    ]);
  });

  it('rejects reused tool use ids, a missing max_tokens and a tool schema that is not an object', () => {
    const body = {
      model: 'claude-test',
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: [toolUse('t1')] },
        { role: 'user', content: [toolResult('t1')] },
        { role: 'assistant', content: [toolUse('t1')] },
        { role: 'user', content: [toolResult('t1')] },
      ],
      tools: [{ name: 'lookup_order', input_schema: { type: 'array' } }],
    };
    expect(validateAnthropicRequest(body)).toEqual([
      'max_tokens: Field required',
      expect.stringContaining('`tool_use` ids must be unique'),
      "tools.0.custom.input_schema.type: Input should be 'object'",
    ]);
  });

  it('rejects empty and whitespace-only text blocks and non-object tool input', () => {
    const body = base([
      { role: 'user', content: [{ type: 'text', text: '  ' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'lookup_order', input: 'raw' }] },
      { role: 'user', content: [toolResult('t1')] },
    ]);
    expect(validateAnthropicRequest(body)).toEqual([
      'messages.0.content.0.text: text content blocks must contain non-whitespace text',
      'messages.1.content.0.tool_use.input: Input should be a valid dictionary',
    ]);
  });
});
