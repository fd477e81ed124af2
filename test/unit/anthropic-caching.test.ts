/**
 * Anthropic prompt caching and `pause_turn`, with the real `@anthropic-ai/sdk` against the strict
 * fake, which checks `cache_control` as the API does and counts cache reads and writes.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MAX_CACHE_BREAKPOINTS } from '../../activities/providers/anthropic-cache.js';
import { usageText } from '../../cli/format.js';
import { addUsage } from '../../workflows/context/usage.js';
import { callAnthropic, convertToAnthropicRequest, MAX_PAUSE_TURN_CONTINUATIONS } from '../../activities/providers/anthropic.js';
import type { ProviderCallOptions } from '../../activities/providers/errors.js';
import type { ModelStreamDelta } from '../../activities/providers/stream-delta.js';
import { modelSettingsProblem } from '../../workflows/turn/model-settings.js';
import type { Message, ModelSettings, ModelStepInput, Usage } from '../../workflows/types/index.js';
import { MIN_CACHEABLE_TOKENS } from '../fake-provider/anthropic-cache.js';
import { startFakeProviderServer, validateAnthropicRequest, type FakeProviderServer, type Json } from '../fake-provider/server.js';

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

const options = (extra: ProviderCallOptions = {}): ProviderCallOptions => ({ apiKey: 'sk-ant-test', baseURL: server.anthropicBaseURL, ...extra });

const tools = ['lookup_order', 'issue_refund', 'send_email'].map((name) => ({
  name,
  description: `The ${name.replace('_', ' ')} tool.`,
  inputSchema: { type: 'object', properties: { orderId: { type: 'string' } } },
}));

/** Long enough (about 1,500 tokens by the fake's count) to be cached on its own. */
const longSystem = `You are a support agent for an online shop. ${'Follow the refund policy to the letter and explain each decision to the customer. '.repeat(70)}`;

function stepInput(messages: Message[], model: Partial<ModelSettings> = {}): ModelStepInput {
  return { model: { provider: 'anthropic', model: 'claude-test', ...model }, system: longSystem, messages, tools };
}

/** Every block of a request that carries cache_control, by where it is. */
function breakpoints(body: Json): string[] {
  const found: string[] = [];
  (body.tools ?? []).forEach((tool: Json, index: number) => tool.cache_control && found.push(`tools.${index}`));
  if (Array.isArray(body.system)) body.system.forEach((block: Json, index: number) => block.cache_control && found.push(`system.${index}`));
  body.messages.forEach((message: Json, index: number) => {
    if (Array.isArray(message.content)) message.content.forEach((block: Json, blockIndex: number) => block.cache_control && found.push(`messages.${index}.content.${blockIndex}`));
  });
  return found;
}

const loopHistory: Message[] = [
  { role: 'user', content: 'Refund order 1001.' },
  { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'toolu_1', toolName: 'lookup_order', input: { orderId: '1001' } }] },
  { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'toolu_1', toolName: 'lookup_order', output: { status: 'delivered' } }] },
  { role: 'assistant', content: [{ type: 'text', text: 'Refunding.' }, { type: 'tool-call', toolCallId: 'toolu_2', toolName: 'issue_refund', input: { orderId: '1001' } }] },
  { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'toolu_2', toolName: 'issue_refund', output: 'refunded' }] },
];

describe('prompt caching breakpoints', () => {
  it('marks the tools, the system prompt and the last two user turns: four breakpoints, the most the API allows', () => {
    const request = convertToAnthropicRequest(stepInput(loopHistory)) as Json;

    expect(breakpoints(request)).toEqual(['tools.2', 'system.0', 'messages.2.content.0', 'messages.4.content.0']);
    expect(breakpoints(request)).toHaveLength(MAX_CACHE_BREAKPOINTS);
    expect(request.system).toEqual([{ type: 'text', text: longSystem, cache_control: { type: 'ephemeral' } }]);
    // Only the marker is added: the blocks are otherwise what they were.
    expect(request.messages[4].content[0]).toEqual({ type: 'tool_result', tool_use_id: 'toolu_2', content: 'refunded', cache_control: { type: 'ephemeral' } });
    expect(validateAnthropicRequest(request)).toEqual([]);
  });

  it('marks only the user turns there are, and nothing when the turn sets promptCaching: false', () => {
    const first = convertToAnthropicRequest({ ...stepInput([{ role: 'user', content: 'Hi' }]), tools: [], system: undefined }) as Json;
    expect(breakpoints(first)).toEqual(['messages.0.content.0']);
    expect(first.messages[0].content).toEqual([{ type: 'text', text: 'Hi', cache_control: { type: 'ephemeral' } }]);

    const off = convertToAnthropicRequest(stepInput(loopHistory, { promptCaching: false })) as Json;
    expect(breakpoints(off)).toEqual([]);
    expect(off.system).toBe(longSystem);
  });

  it('is an Anthropic option, and a boolean, checked when the turn starts', () => {
    expect(modelSettingsProblem({ provider: 'anthropic', model: 'claude-test', promptCaching: false })).toBeUndefined();
    expect(modelSettingsProblem({ provider: 'anthropic', model: 'claude-test', promptCaching: 'off' as unknown as boolean })).toBe('model.promptCaching must be true or false (got "off")');
    expect(modelSettingsProblem({ provider: 'openai', model: 'gpt-test', promptCaching: true })).toMatch(/^model.promptCaching is an Anthropic option/);
  });
});

describe('cache writes in usage', () => {
  it('are summed over a turn once a step reports them, and shown by the CLI', () => {
    const total: Usage = { inputTokens: 0, outputTokens: 0 };
    addUsage(total, { inputTokens: 10, outputTokens: 1, cachedInputTokens: 0 });
    expect(total).toEqual({ inputTokens: 10, outputTokens: 1, cachedInputTokens: 0 });
    addUsage(total, { inputTokens: 1500, outputTokens: 5, cachedInputTokens: 0, cacheWriteInputTokens: 1500 });
    addUsage(total, { inputTokens: 1600, outputTokens: 5, cachedInputTokens: 1500, cacheWriteInputTokens: 100 });
    expect(total).toEqual({ inputTokens: 3110, outputTokens: 11, cachedInputTokens: 1500, cacheWriteInputTokens: 1600 });
    expect(usageText(total)).toBe('3110 in (1500 cached, 1600 written to cache) / 11 out tokens');
  });
});

describe("the fake's cache_control checks", () => {
  const base = (overrides: Json = {}) => ({ model: 'claude-test', max_tokens: 100, messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }], ...overrides });
  const marked = (text: string, cacheControl: Json = { type: 'ephemeral' }) => ({ type: 'text', text, cache_control: cacheControl });

  it('refuses more than four breakpoints, as the API does', () => {
    const system = ['a', 'b', 'c', 'd'].map((text) => marked(text));
    expect(validateAnthropicRequest(base({ system }))).toEqual([]);
    expect(validateAnthropicRequest(base({ system, messages: [{ role: 'user', content: [marked('Hi')] }] }))).toEqual([
      'A maximum of 4 blocks with cache_control may be provided. Found 5.',
    ]);
  });

  it('refuses a breakpoint on a thinking block, an unknown type or ttl, and a 1h entry after a 5m one', () => {
    const thinking = { role: 'assistant', content: [{ type: 'thinking', thinking: 't', signature: 's', cache_control: { type: 'ephemeral' } }, { type: 'text', text: 'ok' }] };
    expect(validateAnthropicRequest(base({ messages: [{ role: 'user', content: 'Hi' }, thinking, { role: 'user', content: 'more' }] }))).toEqual([
      'messages.1.content.0.thinking.cache_control: Extra inputs are not permitted',
    ]);
    expect(validateAnthropicRequest(base({ system: [marked('a', { type: 'persistent' })] }))).toEqual(["system.0.cache_control.type: Input should be 'ephemeral'"]);
    expect(validateAnthropicRequest(base({ system: [marked('a', { type: 'ephemeral', ttl: '2h' })] }))).toEqual(["system.0.cache_control.ttl: Input should be '5m' or '1h'"]);
    expect(validateAnthropicRequest(base({ system: [marked('a', { type: 'ephemeral', ttl: '1h' }), marked('b')] }))).toEqual([]);
    expect(validateAnthropicRequest(base({ system: [marked('a'), marked('b', { type: 'ephemeral', ttl: '1h' })] }))[0]).toMatch(/ttl='1h' cache_control block must not come after a ttl='5m'/);
  });

  it('refuses a final assistant message that ends in whitespace', () => {
    const messages = [{ role: 'user', content: 'Hi' }, { role: 'assistant', content: [{ type: 'text', text: 'Well, ' }] }];
    expect(validateAnthropicRequest(base({ messages }))).toEqual(['final assistant content cannot end with trailing whitespace']);
  });
});

describe.each([true, false])('a 20-step tool loop (stream: %s)', (stream) => {
  /** Runs `steps` model steps of one tool loop, each answering the previous step's call. */
  async function toolLoop(steps: number, model: Partial<ModelSettings>): Promise<Usage[]> {
    const messages: Message[] = [{ role: 'user', content: 'Audit every order of customer 42.' }];
    const usages: Usage[] = [];
    for (let step = 1; step <= steps; step++) {
      server.script('anthropic', [{ text: `Checking order ${step}.`, toolCalls: [{ id: `toolu_s${step}`, name: 'lookup_order', input: { orderId: String(1000 + step) } }] }]);
      const result = await callAnthropic(stepInput(messages, { ...model, stream }), options());
      expect(server.requests.at(-1)!.errors).toEqual([]);
      usages.push(result.usage);
      messages.push(result.message, { role: 'tool', content: [{ type: 'tool-result', toolCallId: `toolu_s${step}`, toolName: 'lookup_order', output: { orderId: String(1000 + step), status: 'delivered' } }] });
    }
    return usages;
  }

  it('reads the prefix each step wrote from the cache at the next step', async () => {
    const usages = await toolLoop(20, {});

    expect(usages[0]!.inputTokens).toBeGreaterThan(MIN_CACHEABLE_TOKENS);
    expect(usages[0]!.cachedInputTokens).toBe(0);
    // The first step writes its whole prompt: tools, system and message all end at a breakpoint.
    expect(usages[0]!.cacheWriteInputTokens).toBe(usages[0]!.inputTokens);
    for (let step = 2; step <= 20; step++) {
      const usage = usages[step - 1]!;
      // The whole prompt of the step before (its last breakpoint ends it) is read back, and what
      // the step added is written for the next one: nothing is processed uncached.
      expect(usage.cachedInputTokens, `step ${step}`).toBe(usages[step - 2]!.inputTokens);
      expect(usage.cacheWriteInputTokens, `step ${step}`).toBe(usage.inputTokens - usage.cachedInputTokens!);
    }
  });

  it('reads nothing from the cache when the turn turns prompt caching off', async () => {
    const usages = await toolLoop(3, { promptCaching: false });

    expect(usages.map((usage) => [usage.cachedInputTokens, usage.cacheWriteInputTokens])).toEqual([
      [0, undefined],
      [0, undefined],
      [0, undefined],
    ]);
    expect(server.requests.every((request) => breakpoints(request.body).length === 0)).toBe(true);
  });
});

describe('a large maxTokens', () => {
  it('streams by default, and without streaming fails at once, not retried, with what to change', async () => {
    server.script('anthropic', [{ text: 'A long essay.' }]);
    const streamed = await callAnthropic(stepInput([{ role: 'user', content: 'Write.' }], { maxTokens: 64_000 }), options());
    expect(streamed.message.content).toEqual([{ type: 'text', text: 'A long essay.' }]);

    const failure = await callAnthropic(stepInput([{ role: 'user', content: 'Write.' }], { maxTokens: 64_000, stream: false }), options()).catch((error: unknown) => error);
    expect(failure).toMatchObject({ nonRetryable: true, type: 'ProviderBadRequestError' });
    expect((failure as Error).message).toMatch(/^anthropic: max_tokens 64000 needs a streamed request/);
    expect(server.requests).toHaveLength(1);
  });
});

describe.each([true, false])('pause_turn (stream: %s)', (stream) => {
  it('continues the step with the paused content sent back, and returns both parts as one message', async () => {
    server.script('anthropic', [
      { text: 'Searching the order archive. ', finishReason: 'pause_turn', usage: { inputTokens: 30, outputTokens: 7 } },
      { text: 'Order 1001 shipped on Monday.', usage: { inputTokens: 40, outputTokens: 9, cachedInputTokens: 25 } },
    ]);
    const deltas: ModelStreamDelta[] = [];

    const result = await callAnthropic(stepInput([{ role: 'user', content: 'Where is order 1001?' }], { stream }), options({ onDelta: (delta) => deltas.push(delta) }));

    expect(result).toEqual({
      message: {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Searching the order archive. ' },
          { type: 'text', text: 'Order 1001 shipped on Monday.' },
        ],
      },
      finishReason: 'stop',
      providerFinishReason: 'end_turn',
      usage: { inputTokens: 70, outputTokens: 16, cachedInputTokens: 25 },
    });
    expect(server.requests.map((request) => request.errors)).toEqual([[], []]);
    const continuation = server.requests[1]!.body;
    // The same request, with the paused content as the final assistant message (its trailing space trimmed, as the API requires).
    expect(continuation.messages).toEqual([...server.requests[0]!.body.messages, { role: 'assistant', content: [{ type: 'text', text: 'Searching the order archive.' }] }]);
    expect(continuation.system).toEqual(server.requests[0]!.body.system);
    if (stream) expect(deltas.map((delta) => (delta.type === 'text-delta' ? delta.text : '')).join('')).toBe('Searching the order archive. Order 1001 shipped on Monday.');
  });

  it(`stops continuing after ${MAX_PAUSE_TURN_CONTINUATIONS} continuations and returns what it has`, async () => {
    server.setDefault('anthropic', () => ({ text: 'Still searching.', finishReason: 'pause_turn' }));

    const result = await callAnthropic(stepInput([{ role: 'user', content: 'Where is order 1001?' }], { stream }), options());

    expect(server.requests).toHaveLength(MAX_PAUSE_TURN_CONTINUATIONS + 1);
    expect(server.requests.every((request) => request.errors.length === 0)).toBe(true);
    expect(result).toMatchObject({ finishReason: 'other', providerFinishReason: 'pause_turn' });
    expect(result.message.content).toHaveLength(MAX_PAUSE_TURN_CONTINUATIONS + 1);
  });
});
