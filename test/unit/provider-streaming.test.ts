/**
 * Streamed model steps: the real `openai` and `@anthropic-ai/sdk` clients stream from the strict
 * fake server, which sends the SSE events the real APIs send (Chat Completions, the Responses API
 * and the Messages API). A streamed step must return exactly
 * what the same reply returns without streaming, hand its deltas to the listener in order while the
 * response is still arriving, and turn a stream that breaks part-way into a retryable failure.
 */
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { callAnthropic } from '../../activities/providers/anthropic.js';
import type { ProviderCallOptions } from '../../activities/providers/errors.js';
import { callOpenAIResponses } from '../../activities/providers/openai-responses.js';
import { callOpenAI } from '../../activities/providers/openai.js';
import type { ModelStreamDelta } from '../../activities/providers/stream-delta.js';
import { modelSettingsProblem } from '../../workflows/turn/model-settings.js';
import type { Message, ModelStepInput, ModelStepResult } from '../../workflows/types/index.js';
import { startFakeProviderServer, validateOpenAIRequest, type FakeProvider, type FakeProviderServer, type ScriptedReply } from '../fake-provider/server.js';

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
  inputSchema: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
};

const thinkingModel = { provider: 'anthropic' as const, model: 'claude-test', maxTokens: 4096, thinking: { type: 'enabled' as const, budgetTokens: 2048 } };

function stepInput(provider: FakeProvider, overrides: Partial<ModelStepInput['model']> = {}, messages: Message[] = [{ role: 'user', content: 'Where are orders 1001 and 1002?' }]): ModelStepInput {
  return {
    model: { provider, model: provider === 'anthropic' ? 'claude-test' : 'gpt-test', ...overrides },
    system: 'You are a support agent.',
    messages,
    tools: [lookupOrderTool],
  };
}

const callers = { openai: callOpenAI, anthropic: callAnthropic, 'openai-responses': callOpenAIResponses } as const;

function options(provider: FakeProvider, extra: ProviderCallOptions = {}): ProviderCallOptions {
  return provider === 'anthropic'
    ? { apiKey: 'sk-ant-test', baseURL: server.anthropicBaseURL, ...extra }
    : { apiKey: 'sk-test', baseURL: server.openaiBaseURL, ...extra };
}

/** The name failures carry: both OpenAI providers are `openai`. */
const label = (provider: FakeProvider) => (provider === 'anthropic' ? 'anthropic' : 'openai');

/**
 * Events before the first word of a plain text reply: Chat Completions' role chunk; Anthropic's
 * message_start, ping and content_block_start; the Responses API's created, in_progress,
 * output_item.added and content_part.added.
 */
const eventsBeforeFirstWord: Record<FakeProvider, number> = { openai: 1, anthropic: 3, 'openai-responses': 4 };

/** Calls the provider with the reply scripted, collecting every delta it streams. */
async function run(provider: FakeProvider, reply: ScriptedReply, model: Partial<ModelStepInput['model']> = {}): Promise<{ result: ModelStepResult; deltas: ModelStreamDelta[] }> {
  server.script(provider, [reply]);
  const deltas: ModelStreamDelta[] = [];
  const result = await callers[provider](stepInput(provider, model), options(provider, { onDelta: (delta) => deltas.push(delta) }));
  const request = server.requests.at(-1)!;
  expect(request.errors).toEqual([]);
  expect(request.body.stream).toBe(model.stream === false ? undefined : true);
  return { result, deltas };
}

async function failureOf(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ApplicationFailure);
  return error as ApplicationFailure;
}

/** Replies the APIs can send, each as the real API would script it (explicit ids keep results comparable). */
const replies: Record<string, Partial<Record<FakeProvider, ScriptedReply>>> = {
  'text with cached and reasoning tokens': {
    openai: { text: 'Order 1001 shipped on Monday; 1002 is packed.', usage: { inputTokens: 40, outputTokens: 12, cachedInputTokens: 16, reasoningTokens: 4 } },
    anthropic: { text: 'Order 1001 shipped on Monday; 1002 is packed.', usage: { inputTokens: 40, outputTokens: 12, cachedInputTokens: 16, reasoningTokens: 4 } },
    'openai-responses': { text: 'Order 1001 shipped on Monday; 1002 is packed.', usage: { inputTokens: 40, outputTokens: 12, cachedInputTokens: 16, reasoningTokens: 4 } },
  },
  'text and several parallel tool calls': {
    openai: {
      text: 'Checking both.',
      toolCalls: [
        { id: 'call_p1', name: 'lookup_order', input: { orderId: '1001' } },
        { id: 'call_p2', name: 'lookup_order', input: { orderId: '1002', note: 'a longer argument that streams in many pieces' } },
        { id: 'call_p3', name: 'lookup_order', input: {} },
      ],
    },
    anthropic: {
      text: 'Checking both.',
      toolCalls: [
        { id: 'toolu_p1', name: 'lookup_order', input: { orderId: '1001' } },
        { id: 'toolu_p2', name: 'lookup_order', input: { orderId: '1002', note: 'a longer argument that streams in many pieces' } },
        { id: 'toolu_p3', name: 'lookup_order', input: {} },
      ],
    },
    'openai-responses': {
      text: 'Checking both.',
      toolCalls: [
        { id: 'call_r1', name: 'lookup_order', input: { orderId: '1001' } },
        { id: 'call_r2', name: 'lookup_order', input: { orderId: '1002', note: 'a longer argument that streams in many pieces' } },
        { id: 'call_r3', name: 'lookup_order', input: {} },
      ],
    },
  },
  'tool calls without text': {
    openai: { toolCalls: [{ id: 'call_only', name: 'lookup_order', input: { orderId: '1001' } }] },
    anthropic: { toolCalls: [{ id: 'toolu_only', name: 'lookup_order', input: { orderId: '1001' } }] },
    'openai-responses': { toolCalls: [{ id: 'call_only', name: 'lookup_order', input: { orderId: '1001' } }] },
  },
  'a reply cut off by the token limit': {
    openai: { text: 'Refunding now', toolCalls: [{ id: 'call_cut', name: 'lookup_order', arguments: '{"orderId": "10' }], finishReason: 'length' },
    anthropic: { text: 'Refunding now', toolCalls: [{ id: 'toolu_cut', name: 'lookup_order', input: { orderId: '10' } }], finishReason: 'max_tokens' },
    'openai-responses': { text: 'Refunding now', toolCalls: [{ id: 'call_cut', name: 'lookup_order', arguments: '{"orderId": "10' }], finishReason: 'max_output_tokens' },
  },
  'a refusal with no content': {
    openai: { noContent: true, finishReason: 'content_filter' },
    anthropic: { noContent: true, finishReason: 'refusal' },
    'openai-responses': { noContent: true, finishReason: 'content_filter' },
  },
  'a reply cut off by the context window': {
    openai: { text: 'As I was saying', finishReason: 'length' },
    anthropic: { text: 'As I was saying', finishReason: 'model_context_window_exceeded' },
  },
  'a refusal part': {
    'openai-responses': { refusal: 'I cannot share order details.' },
  },
  'a failed response': {
    'openai-responses': { noContent: true, finishReason: 'failed' },
  },
};

describe.each(['openai', 'anthropic', 'openai-responses'] as const)('%s streaming', (provider) => {
  it.each(Object.keys(replies).filter((name) => replies[name]![provider]))('returns for %s exactly what the same reply returns without streaming', async (name) => {
    const reply = replies[name]![provider]!;
    const plain = await run(provider, reply, { stream: false });
    const streamed = await run(provider, reply);

    expect(streamed.result).toEqual(plain.result);
    expect(plain.deltas).toEqual([]);
    expect(server.requests.map((request) => request.stream)).toEqual([undefined, 'complete']);
  });

  it('hands text and tool-input deltas to the listener in order, adding up to the result', async () => {
    const { result, deltas } = await run(provider, replies['text and several parallel tool calls']![provider]!);

    expect(deltas.filter((delta) => delta.type === 'text-delta').length).toBeGreaterThan(1);
    expect(
      deltas
        .filter((delta) => delta.type === 'text-delta')
        .map((delta) => delta.text)
        .join(''),
    ).toBe('Checking both.');
    const calls = result.message.content.filter((part) => part.type === 'tool-call');
    // Each call starts (id and name) before its first input piece, and the calls come in the model's order.
    expect(deltas.filter((delta) => delta.type === 'tool-input-start')).toEqual(calls.map((call) => ({ type: 'tool-input-start', toolCallId: call.toolCallId, toolName: 'lookup_order' })));
    for (const call of calls) {
      const own = deltas.filter((delta) => 'toolCallId' in delta && delta.toolCallId === call.toolCallId);
      expect(own[0]!.type).toBe('tool-input-start');
      const text = own.flatMap((delta) => (delta.type === 'tool-input-delta' ? [delta.inputTextDelta] : [])).join('');
      expect(JSON.parse(text)).toEqual(call.input);
    }
    // All text precedes the first tool call, as the model wrote it.
    const lastText = deltas.findLastIndex((delta) => delta.type === 'text-delta');
    expect(lastText).toBeLessThan(deltas.findIndex((delta) => delta.type === 'tool-input-start'));
  });

  it('delivers the first text delta while the response is still arriving', async () => {
    let resume!: () => void;
    const resumed = new Promise<void>((resolve) => (resume = resolve));
    // Hold the stream after its first few events: the role/start events and the first word.
    const pauseAfterEvents = eventsBeforeFirstWord[provider] + 1;
    server.script(provider, [{ text: 'Order 1001 has shipped.', stream: { pauseAfterEvents, resume: resumed } }]);
    let firstDelta!: (delta: ModelStreamDelta) => void;
    const first = new Promise<ModelStreamDelta>((resolve) => (firstDelta = resolve));
    const deltas: ModelStreamDelta[] = [];
    let settled = false;

    const call = callers[provider](stepInput(provider), options(provider, { onDelta: (delta) => (deltas.push(delta), firstDelta(delta)) })).finally(() => (settled = true));

    expect(await first).toEqual({ type: 'text-delta', text: 'Order ' });
    expect(settled).toBe(false);
    expect(server.requests.at(-1)!.stream).toBeUndefined();
    resume();
    const result = await call;
    expect(result.message.content).toEqual([{ type: 'text', text: 'Order 1001 has shipped.' }]);
    expect(deltas.map((delta) => (delta.type === 'text-delta' ? delta.text : '')).join('')).toBe('Order 1001 has shipped.');
    expect(server.requests.at(-1)!.stream).toBe('complete');
  });

  it('fails retryably, after the deltas it had, when the connection drops mid-stream', async () => {
    server.script(provider, [{ text: 'Order 1001 has shipped and 1002 is on its way.', stream: { dropAfterEvents: 5 } }]);
    const deltas: ModelStreamDelta[] = [];

    const failure = await failureOf(callers[provider](stepInput(provider), options(provider, { onDelta: (delta) => deltas.push(delta) })));

    expect(failure).toMatchObject({ nonRetryable: false, type: 'ProviderRetryableError' });
    expect(failure.message).toMatch(new RegExp(`^${label(provider)}: stream interrupted`));
    expect(deltas.length).toBeGreaterThan(0);
    expect(server.requests.at(-1)!.stream).toBe('dropped');
  });

  it('fails retryably when the API reports an error mid-stream', async () => {
    server.script(provider, [{ text: 'Order 1001 has shipped.', stream: { errorAfterEvents: 4 } }]);

    const failure = await failureOf(callers[provider](stepInput(provider), options(provider)));

    expect(failure).toMatchObject({ nonRetryable: false, type: 'ProviderRetryableError' });
    expect(failure.message).toContain(`${label(provider)}: the API reported an error mid-stream`);
    expect(failure.message).toContain(provider === 'anthropic' ? 'overloaded_error' : 'The server had an error');
  });

  it('fails retryably when the stream ends cleanly before the reply is complete', async () => {
    server.script(provider, [{ text: 'Order 1001 has shipped.', stream: { endAfterEvents: 4 } }]);

    const failure = await failureOf(callers[provider](stepInput(provider), options(provider)));

    expect(failure).toMatchObject({ nonRetryable: false, type: 'ProviderRetryableError' });
    expect(failure.message).toMatch(new RegExp(`^${label(provider)}: unexpected response — the stream ended before the reply was complete`));
  });

  it('rethrows the abort reason when the activity is cancelled mid-stream', async () => {
    // The stream stops after its first word until the test lets it go on, after the call ended.
    let resume!: () => void;
    const resumed = new Promise<void>((resolve) => (resume = resolve));
    server.script(provider, [{ text: 'Order 1001 has shipped.', stream: { pauseAfterEvents: eventsBeforeFirstWord[provider] + 1, resume: resumed } }]);
    const controller = new AbortController();
    const reason = new Error('activity cancelled');

    const call = callers[provider](stepInput(provider), options(provider, { signal: controller.signal, onDelta: () => controller.abort(reason) }));

    await expect(call).rejects.toBe(reason);
    resume();
  });

  it('is not failed by a listener that throws', async () => {
    server.script(provider, [{ text: 'Fine.' }]);

    const result = await callers[provider](
      stepInput(provider),
      options(provider, {
        onDelta: () => {
          throw new Error('listener bug');
        },
      }),
    );

    expect(result.message.content).toEqual([{ type: 'text', text: 'Fine.' }]);
  });
});

describe('anthropic streaming with thinking', () => {
  it('returns thinking blocks with their signatures, as without streaming, and streams the thinking first', async () => {
    const reply: ScriptedReply = {
      thinking: [{ text: 'The user wants order 1001; look it up first.' }, { redacted: true }],
      text: 'Looking it up.',
      toolCalls: [{ id: 'toolu_t1', name: 'lookup_order', input: { orderId: '1001' } }],
      usage: { reasoningTokens: 20 },
    };
    const plain = await run('anthropic', reply, { ...thinkingModel, stream: false });
    const streamed = await run('anthropic', reply, thinkingModel);

    // Redacted data carries a fresh nonce per reply; everything else is byte for byte the same.
    const withoutNonce = (result: ModelStepResult) => structuredClone(result).message.content.map((part) => ('redactedData' in part ? { ...part, redactedData: 'nonce' } : part));
    expect(withoutNonce(streamed.result)).toEqual(withoutNonce(plain.result));
    expect(streamed.result.usage).toEqual(plain.result.usage);
    expect(streamed.result.message.content[0]).toMatchObject({ type: 'reasoning', signature: expect.any(String) });
    expect(streamed.result.message.content[1]).toMatchObject({ type: 'reasoning', text: '', redactedData: expect.any(String) });

    const kinds = streamed.deltas.map((delta) => delta.type);
    expect(kinds.indexOf('text-delta')).toBeGreaterThan(kinds.lastIndexOf('reasoning-delta'));
    expect(
      streamed.deltas
        .filter((delta) => delta.type === 'reasoning-delta')
        .map((delta) => delta.text)
        .join(''),
    ).toBe('The user wants order 1001; look it up first.');

    // The streamed thinking is accepted back, signature intact, when the tool loop continues.
    server.script('anthropic', [{ text: 'Order 1001 has shipped.' }]);
    const continuation: Message[] = [
      { role: 'user', content: 'Where are orders 1001 and 1002?' },
      streamed.result.message,
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'toolu_t1', toolName: 'lookup_order', output: { status: 'shipped' } }] },
    ];
    const next = await callAnthropic(stepInput('anthropic', thinkingModel, continuation), options('anthropic'));
    expect(server.requests.at(-1)!.errors).toEqual([]);
    expect(next.message.content).toEqual([{ type: 'text', text: 'Order 1001 has shipped.' }]);
  });
});

describe('openai-responses streaming with reasoning', () => {
  const reasoningModel = { provider: 'openai-responses' as const, model: 'o4-mini', reasoningEffort: 'low' as const, reasoningSummary: 'auto' as const };
  const reply: ScriptedReply = {
    reasoning: [{ summary: ['The user wants order 1001.', 'Look it up first.'] }],
    text: 'Looking it up.',
    toolCalls: [{ id: 'call_t1', name: 'lookup_order', input: { orderId: '1001' } }],
    usage: { reasoningTokens: 20 },
  };

  it('returns reasoning items with their encrypted content, as without streaming, and streams the summary first', async () => {
    const plain = await run('openai-responses', reply, { ...reasoningModel, stream: false });
    const streamed = await run('openai-responses', reply, reasoningModel);

    // Item ids and encrypted blobs are fresh per reply; everything else is the same.
    const normalized = (result: ModelStepResult) => ({
      ...result,
      message: { ...result.message, content: result.message.content.map((part) => (part.type === 'reasoning' ? { ...part, itemId: 'rs', encryptedContent: 'blob' } : part)) },
    });
    expect(normalized(streamed.result)).toEqual(normalized(plain.result));
    expect(streamed.result.message.content[0]).toEqual({
      type: 'reasoning',
      provider: 'openai',
      text: 'The user wants order 1001.\n\nLook it up first.',
      itemId: expect.stringMatching(/^rs_/),
      encryptedContent: expect.any(String),
      summary: ['The user wants order 1001.', 'Look it up first.'],
    });

    const kinds = streamed.deltas.map((delta) => delta.type);
    expect(kinds.indexOf('text-delta')).toBeGreaterThan(kinds.lastIndexOf('reasoning-delta'));
    expect(
      streamed.deltas
        .filter((delta) => delta.type === 'reasoning-delta')
        .map((delta) => delta.text)
        .join(''),
    ).toBe('The user wants order 1001.\n\nLook it up first.');

    // The streamed reasoning item is accepted back, encrypted content intact, when the tool loop continues.
    server.script('openai-responses', [{ text: 'Order 1001 has shipped.' }]);
    const continuation: Message[] = [
      { role: 'user', content: 'Where are orders 1001 and 1002?' },
      streamed.result.message,
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_t1', toolName: 'lookup_order', output: { status: 'shipped' } }] },
    ];
    const next = await callOpenAIResponses(stepInput('openai-responses', reasoningModel, continuation), options('openai-responses'));
    expect(server.requests.at(-1)!.errors).toEqual([]);
    expect(server.requests.at(-1)!.body.input[1]).toMatchObject({ type: 'reasoning', encrypted_content: streamed.result.message.content[0]!.type === 'reasoning' ? streamed.result.message.content[0]!.encryptedContent : undefined });
    expect(next.message.content.at(-1)).toEqual({ type: 'text', text: 'Order 1001 has shipped.' });
  });

  it('is sent as the API streams it: named events numbered from 0, from response.created to the terminal event', async () => {
    server.script('openai-responses', [reply]);
    const response = await fetch(`${server.openaiBaseURL}/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
      body: JSON.stringify({ model: 'o4-mini', input: 'Where is order 1001?', store: false, include: ['reasoning.encrypted_content'], reasoning: { summary: 'auto' }, stream: true }),
    });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const frames = (await response.text())
      .split('\n\n')
      .filter((frame) => frame !== '')
      .map((frame) => {
        const [eventLine, dataLine] = frame.split('\n');
        return { event: eventLine!.replace(/^event: /, ''), data: JSON.parse(dataLine!.replace(/^data: /, '')) };
      });

    expect(frames.map((frame) => frame.data.sequence_number)).toEqual(frames.map((_, index) => index));
    for (const frame of frames) expect(frame.data.type).toBe(frame.event);
    const types = [...new Set(frames.map((frame) => frame.event))];
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
      'response.output_item.done',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.completed',
    ]);
    // Items arrive empty and leave whole; only the last event carries the finished response.
    const reasoningAdded = frames.find((frame) => frame.event === 'response.output_item.added')!.data.item;
    expect(reasoningAdded).toEqual({ id: expect.stringMatching(/^rs_/), type: 'reasoning', summary: [] });
    const reasoningDone = frames.find((frame) => frame.event === 'response.output_item.done')!.data.item;
    expect(reasoningDone).toMatchObject({ id: reasoningAdded.id, encrypted_content: expect.any(String) });
    expect(frames[0]!.data.response).toMatchObject({ status: 'in_progress', output: [], usage: null });
    expect(frames.at(-1)!.data.response).toMatchObject({ status: 'completed', output: [reasoningDone, { type: 'message' }, { type: 'function_call', call_id: 'call_t1' }] });
  });

  it('ends an incomplete reply with response.incomplete', async () => {
    const { result } = await run('openai-responses', { text: 'As I was saying', finishReason: 'max_output_tokens' });
    expect(result).toMatchObject({ finishReason: 'length', providerFinishReason: 'max_output_tokens' });
    expect(result.message.content).toEqual([{ type: 'text', text: 'As I was saying' }]);
  });

  it('sends no stream field when the turn turns streaming off', async () => {
    await run('openai-responses', { text: 'ok' }, { stream: false });
    expect(server.requests.at(-1)!.body).not.toHaveProperty('stream');
  });
});

describe('openai streaming', () => {
  it('keeps malformed tool-call arguments as raw text, as without streaming', async () => {
    const reply: ScriptedReply = { toolCalls: [{ id: 'call_bad', name: 'lookup_order', arguments: '{"orderId": 10' }] };
    const plain = await run('openai', reply, { stream: false });
    const streamed = await run('openai', reply);

    expect(streamed.result).toEqual(plain.result);
    expect(streamed.result.message.content).toEqual([{ type: 'tool-call', toolCallId: 'call_bad', toolName: 'lookup_order', input: '{"orderId": 10' }]);
  });

  it('asks for the usage chunk, and sends no stream fields when the turn turns streaming off', async () => {
    await run('openai', { text: 'ok' });
    expect(server.requests.at(-1)!.body.stream_options).toEqual({ include_usage: true });
    await run('openai', { text: 'ok' }, { stream: false });
    expect(server.requests.at(-1)!.body).not.toHaveProperty('stream');
    expect(server.requests.at(-1)!.body).not.toHaveProperty('stream_options');
  });

  it('is refused by the fake, as by the API, when stream_options comes without stream', () => {
    expect(validateOpenAIRequest({ model: 'gpt-test', messages: [{ role: 'user', content: 'Hi' }], stream_options: { include_usage: true } })).toEqual([
      "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
    ]);
  });
});

describe('the stream model option', () => {
  it('is refused at turn start unless it is a boolean', () => {
    expect(modelSettingsProblem({ provider: 'openai', model: 'gpt-test', stream: false })).toBeUndefined();
    expect(modelSettingsProblem({ provider: 'anthropic', model: 'claude-test', stream: true })).toBeUndefined();
    expect(modelSettingsProblem({ provider: 'openai', model: 'gpt-test', stream: 'no' as unknown as boolean })).toBe('model.stream must be true or false (got "no")');
  });
});
