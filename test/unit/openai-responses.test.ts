/**
 * The `openai-responses` provider against the real `openai` SDK, talking HTTP to the strict fake
 * `POST /v1/responses`: wire conversion both ways, reasoning items carried (encrypted, with
 * `store: false`) across steps, every status mapped, options, and the fake's own rules.
 */
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { callAnthropic } from '../../activities/providers/anthropic.js';
import type { ProviderCallOptions } from '../../activities/providers/errors.js';
import { callOpenAI } from '../../activities/providers/openai.js';
import { callOpenAIResponses, convertToResponsesRequest } from '../../activities/providers/openai-responses.js';
import { mapResponsesStatus } from '../../activities/providers/openai-responses-result.js';
import type { AssistantMessage, Message, ModelSettings, ModelStepInput, ReasoningPart, ToolCallPart } from '../../workflows/types/index.js';
import { startFakeProviderServer, type FakeProviderServer } from '../fake-provider/server.js';

let server: FakeProviderServer;

beforeAll(async () => {
  server = await startFakeProviderServer();
});
afterAll(async () => {
  await server?.close();
});
beforeEach(() => server.reset());

const options = (): ProviderCallOptions => ({ apiKey: 'sk-test', baseURL: server.openaiBaseURL });

const lookupOrderTool = {
  name: 'lookup_order',
  description: 'Looks up an order by id.',
  inputSchema: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'], additionalProperties: false },
};
/** Not a strict schema (no additionalProperties: false): accepted only because tools are sent with strict: false. */
const issueRefundTool = {
  name: 'issue_refund',
  description: 'Refunds an amount on an order.',
  inputSchema: { type: 'object', properties: { orderId: { type: 'string' }, amount: { type: 'number' } }, required: ['orderId'] },
};

const reasoningModel: ModelSettings = { provider: 'openai-responses', model: 'o4-mini', maxTokens: 2000, reasoningEffort: 'medium', reasoningSummary: 'auto' };

function stepInput(messages: Message[], model: ModelSettings = { provider: 'openai-responses', model: 'gpt-4.1-mini' }): ModelStepInput {
  return { model, system: 'You are a support agent.', messages, tools: [lookupOrderTool, issueRefundTool] };
}

function lastRequest() {
  const request = server.requests.at(-1);
  if (!request) throw new Error('the fake server received no request');
  return request;
}

async function failureOf(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ApplicationFailure);
  return error as ApplicationFailure;
}

const question: Message = { role: 'user', content: 'Look up order 1001.' };

describe('openai-responses provider', () => {
  it('sends a step the API accepts: instructions, flat non-strict function tools, store false, and never max_tokens', async () => {
    server.script('openai-responses', [{ text: 'Hello.' }]);
    await callOpenAIResponses(stepInput([question], { provider: 'openai-responses', model: 'gpt-4.1-mini', maxTokens: 300, temperature: 0.2 }), options());

    const { body, errors, url } = lastRequest();
    expect(url).toBe('/v1/responses');
    expect(errors).toEqual([]);
    expect(body).toMatchObject({
      model: 'gpt-4.1-mini',
      instructions: 'You are a support agent.',
      input: [{ role: 'user', content: 'Look up order 1001.' }],
      store: false,
      max_output_tokens: 300,
      temperature: 0.2,
      tools: [
        { type: 'function', name: 'lookup_order', description: 'Looks up an order by id.', parameters: lookupOrderTool.inputSchema, strict: false },
        { type: 'function', name: 'issue_refund', description: 'Refunds an amount on an order.', parameters: issueRefundTool.inputSchema, strict: false },
      ],
    });
    for (const field of ['max_tokens', 'max_completion_tokens', 'include', 'reasoning']) expect(body).not.toHaveProperty(field);
  });

  it('returns text, function calls in order, and usage with cached and reasoning tokens', async () => {
    server.script('openai-responses', [
      {
        text: 'Checking both.',
        toolCalls: [
          { id: 'call_1', name: 'lookup_order', input: { orderId: '1001' } },
          { id: 'call_2', name: 'issue_refund', arguments: '{"orderId": "10' },
        ],
        usage: { inputTokens: 120, outputTokens: 30, cachedInputTokens: 64, reasoningTokens: 0 },
      },
    ]);
    const result = await callOpenAIResponses(stepInput([question]), options());
    expect(result).toEqual({
      message: {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking both.' },
          { type: 'tool-call', toolCallId: 'call_1', toolName: 'lookup_order', input: { orderId: '1001' } },
          // Malformed arguments are kept as text, for validation to turn into an error result.
          { type: 'tool-call', toolCallId: 'call_2', toolName: 'issue_refund', input: '{"orderId": "10' },
        ],
      },
      finishReason: 'tool-calls',
      providerFinishReason: 'completed',
      usage: { inputTokens: 120, outputTokens: 30, cachedInputTokens: 64, reasoningTokens: 0 },
    });
  });

  it('sends a history of calls, results (errors included) and text as items the API accepts', async () => {
    const history: Message[] = [
      question,
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking.' },
          { type: 'tool-call', toolCallId: 'call_a1', toolName: 'lookup_order', input: { orderId: '1001' } },
          { type: 'tool-call', toolCallId: 'call_a2', toolName: 'issue_refund', input: '{"orderId": 10' },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'call_a1', toolName: 'lookup_order', output: { status: 'shipped' } },
          { type: 'tool-result', toolCallId: 'call_a2', toolName: 'issue_refund', output: 'Invalid input: not JSON', isError: true },
        ],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'It shipped.' }] },
      { role: 'user', content: [{ type: 'text', text: 'Thanks. ' }, { type: 'text', text: 'Anything else?' }] },
    ];
    await callOpenAIResponses(stepInput(history), options());
    const { body, errors } = lastRequest();
    expect(errors).toEqual([]);
    expect(body.input).toEqual([
      { role: 'user', content: 'Look up order 1001.' },
      { role: 'assistant', content: 'Checking.' },
      { type: 'function_call', call_id: 'call_a1', name: 'lookup_order', arguments: '{"orderId":"1001"}' },
      { type: 'function_call', call_id: 'call_a2', name: 'issue_refund', arguments: '{"orderId": 10' },
      { type: 'function_call_output', call_id: 'call_a1', output: '{"status":"shipped"}' },
      { type: 'function_call_output', call_id: 'call_a2', output: 'Invalid input: not JSON' },
      { role: 'assistant', content: 'It shipped.' },
      { role: 'user', content: [{ type: 'input_text', text: 'Thanks. ' }, { type: 'input_text', text: 'Anything else?' }] },
    ]);
  });

  it.each([
    [{ finishReason: 'max_output_tokens', text: 'Order 1001 ha' }, 'length', 'max_output_tokens'],
    [{ finishReason: 'content_filter', noContent: true as const }, 'content-filter', 'content_filter'],
    [{ refusal: 'I cannot help with that.' }, 'content-filter', 'refusal'],
    [{ finishReason: 'failed', noContent: true as const }, 'other', 'failed'],
    [{ finishReason: 'cancelled', noContent: true as const }, 'other', 'cancelled'],
    [{ text: 'Done.' }, 'stop', 'completed'],
  ])('maps a response %j to finish reason %s', async (scripted, finishReason, providerFinishReason) => {
    server.script('openai-responses', [scripted]);
    // Only a background response is cancelled, and it is retrieved rather than streamed.
    const stream = 'finishReason' in scripted && scripted.finishReason === 'cancelled' ? false : undefined;
    const result = await callOpenAIResponses(stepInput([question], { provider: 'openai-responses', model: 'gpt-4.1-mini', stream }), options());
    expect(result).toMatchObject({ finishReason, providerFinishReason });
    expect(lastRequest().errors).toEqual([]);
  });

  it('maps the background statuses and an incomplete response without a reason to other', () => {
    expect(mapResponsesStatus({ status: 'queued', incomplete_details: null }, false)).toEqual({ finishReason: 'other', providerFinishReason: 'queued' });
    expect(mapResponsesStatus({ status: 'in_progress', incomplete_details: null }, true)).toEqual({ finishReason: 'other', providerFinishReason: 'in_progress' });
    expect(mapResponsesStatus({ status: 'incomplete', incomplete_details: {} }, false)).toEqual({ finishReason: 'other', providerFinishReason: 'incomplete' });
  });

  it('sends reasoning effort and summary, service tier and metadata as the API names them', async () => {
    server.script('openai-responses', [{ text: 'Thought.' }]);
    await callOpenAIResponses(stepInput([question], { ...reasoningModel, serviceTier: 'flex', metadata: { tenant: 'acme' } }), options());
    const { body, errors } = lastRequest();
    expect(errors).toEqual([]);
    expect(body).toMatchObject({
      model: 'o4-mini',
      max_output_tokens: 2000,
      reasoning: { effort: 'medium', summary: 'auto' },
      include: ['reasoning.encrypted_content'],
      service_tier: 'flex',
      metadata: { tenant: 'acme' },
      store: false,
    });
  });

  it('sends store: true when the turn asks for it', () => {
    expect(convertToResponsesRequest(stepInput([question], { provider: 'openai-responses', model: 'gpt-4.1', store: true })).store).toBe(true);
  });
});

describe('openai-responses reasoning items', () => {
  /** Step 1 of a reasoning tool loop: the model reasons and calls a tool. */
  async function reasoningToolCall() {
    server.script('openai-responses', [
      {
        reasoning: [{ summary: ['The user wants order 1001.', 'Look it up first.'] }],
        toolCalls: [{ id: 'call_r1', name: 'lookup_order', input: { orderId: '1001' } }],
        usage: { inputTokens: 50, outputTokens: 90, reasoningTokens: 64 },
      },
    ]);
    const first = await callOpenAIResponses(stepInput([question], reasoningModel), options());
    expect(lastRequest().errors).toEqual([]);
    return first.message;
  }

  function continuation(assistant: AssistantMessage): Message[] {
    return [
      question,
      assistant,
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_r1', toolName: 'lookup_order', output: { status: 'shipped' } }] },
    ];
  }

  it('keeps a reasoning item as a reasoning part with its id, summary and encrypted content', async () => {
    const message = await reasoningToolCall();
    const [reasoning, call] = message.content as [ReasoningPart, ToolCallPart];
    expect(reasoning).toEqual({
      type: 'reasoning',
      provider: 'openai',
      text: 'The user wants order 1001.\n\nLook it up first.',
      itemId: expect.stringMatching(/^rs_/),
      encryptedContent: expect.any(String),
      summary: ['The user wants order 1001.', 'Look it up first.'],
    });
    expect(call).toMatchObject({ type: 'tool-call', toolCallId: 'call_r1' });
  });

  it('sends the reasoning item back, verbatim and before its function call, and the API accepts the continuation', async () => {
    const message = await reasoningToolCall();
    const reasoning = message.content[0] as ReasoningPart;
    server.script('openai-responses', [{ reasoning: [{ summary: ['It shipped.'] }], text: 'Order 1001 has shipped.' }]);
    const second = await callOpenAIResponses(stepInput(continuation(message), reasoningModel), options());

    const { body, errors } = lastRequest();
    expect(errors).toEqual([]);
    expect(body.input.slice(1, 3)).toEqual([
      { type: 'reasoning', id: reasoning.itemId, summary: [{ type: 'summary_text', text: 'The user wants order 1001.' }, { type: 'summary_text', text: 'Look it up first.' }], encrypted_content: reasoning.encryptedContent },
      { type: 'function_call', call_id: 'call_r1', name: 'lookup_order', arguments: '{"orderId":"1001"}' },
    ]);
    expect(second).toMatchObject({ finishReason: 'stop', message: { content: [{ type: 'reasoning', provider: 'openai' }, { type: 'text', text: 'Order 1001 has shipped.' }] } });
  });

  it('is refused by the fake, as by the API, when a continuation lost its reasoning item', async () => {
    const message = await reasoningToolCall();
    const withoutReasoning: AssistantMessage = { role: 'assistant', content: message.content.filter((part) => part.type !== 'reasoning') };
    const failure = await failureOf(callOpenAIResponses(stepInput(continuation(withoutReasoning), reasoningModel), options()));
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain("of type 'function_call' was provided without its required 'reasoning' item");
  });

  it('is refused by the fake, as by the API, when the encrypted content was tampered with', async () => {
    const message = await reasoningToolCall();
    const reasoning = message.content[0] as ReasoningPart;
    const tampered: AssistantMessage = { role: 'assistant', content: [{ ...reasoning, encryptedContent: `x${reasoning.encryptedContent!.slice(1)}` }, ...message.content.slice(1)] };
    const failure = await failureOf(callOpenAIResponses(stepInput(continuation(tampered), reasoningModel), options()));
    expect(failure.message).toContain(`The encrypted content for item ${reasoning.itemId} could not be verified`);
  });

  it('leaves OpenAI reasoning out for Chat Completions and Anthropic, and Anthropic thinking out for the Responses API', async () => {
    const message = await reasoningToolCall();
    const reasoning = message.content[0] as ReasoningPart;
    const history = [...continuation(message), { role: 'user', content: 'And now?' } as Message];

    await callOpenAI({ ...stepInput(history), model: { provider: 'openai', model: 'gpt-4.1-mini' } }, options());
    await callAnthropic({ ...stepInput(history), model: { provider: 'anthropic', model: 'claude-sonnet-4-6' } }, { apiKey: 'sk-ant-test', baseURL: server.anthropicBaseURL });
    for (const request of server.requests.slice(-2)) {
      expect(request.errors).toEqual([]);
      expect(JSON.stringify(request.body)).not.toContain(reasoning.encryptedContent);
      expect(JSON.stringify(request.body)).not.toContain('Look it up first.');
    }

    const fromAnthropic: Message[] = [
      question,
      { role: 'assistant', content: [{ type: 'reasoning', provider: 'anthropic', text: 'Claude thought this.', signature: 'c2ln' }, { type: 'tool-call', toolCallId: 'toolu_1', toolName: 'lookup_order', input: { orderId: '1001' } }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'toolu_1', toolName: 'lookup_order', output: 'shipped' }] },
    ];
    await callOpenAIResponses(stepInput(fromAnthropic, reasoningModel), options());
    expect(lastRequest().errors).toEqual([]);
    expect(lastRequest().body.input.map((item: { type?: string; role?: string }) => item.type ?? item.role)).toEqual(['user', 'function_call', 'function_call_output']);
  });

  it('drops a reasoning item that nothing follows (a reply cut off while reasoning), which the API would refuse', async () => {
    server.script('openai-responses', [{ reasoning: [{ summary: ['Thinking…'] }], noContent: true, finishReason: 'content_filter' }]);
    const cut = await callOpenAIResponses(stepInput([question], reasoningModel), options());
    expect(cut.message.content).toEqual([expect.objectContaining({ type: 'reasoning', provider: 'openai' })]);
    await callOpenAIResponses(stepInput([question, cut.message, { role: 'user', content: 'Try again.' }], reasoningModel), options());
    expect(lastRequest().errors).toEqual([]);
    expect(lastRequest().body.input).toEqual([question, { role: 'user', content: 'Try again.' }]);
  });
});

describe('the fake /v1/responses', () => {
  async function post(body: unknown) {
    const response = await fetch(`${server.openaiBaseURL}/responses`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-test', 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as { error?: { message: string } } };
  }

  it.each([
    [{ model: 'o4-mini', input: 'Hi', max_tokens: 100 }, "Unsupported parameter: 'max_tokens'"],
    [{ model: 'gpt-4.1', input: 'Hi', max_output_tokens: 8 }, 'Expected a value >= 16'],
    [{ model: 'gpt-4.1', input: 'Hi', reasoning: { effort: 'high' } }, "'reasoning.effort' is not supported with this model"],
    [{ model: 'gpt-4.1', input: [{ type: 'function_call_output', call_id: 'call_x', output: 'x' }] }, 'No tool call found for function call output with call_id call_x'],
    [{ model: 'gpt-4.1', input: [{ role: 'user', content: 'Hi' }, { type: 'function_call', call_id: 'call_y', name: 'f', arguments: '{}' }] }, 'No tool output found for function call call_y'],
    [{ model: 'o4-mini', store: false, input: [{ role: 'user', content: 'Hi' }, { type: 'reasoning', id: 'rs_1', summary: [] }, { role: 'assistant', content: 'ok' }] }, "Item with id 'rs_1' not found"],
    [{ model: 'gpt-4.1', input: 'Hi', tools: [{ type: 'function', name: 'f', parameters: { type: 'object', properties: { a: { type: 'string' } } } }] }, "'additionalProperties' is required to be supplied and to be false"],
    [{ model: 'gpt-4.1', input: 'Hi', tools: [{ type: 'function', function: { name: 'f' } }] }, 'Function tools are flat'],
    [{ model: 'gpt-4.1', input: [{ role: 'user', content: [{ type: 'input_image', detail: 'auto', image_url: 'data:image/bmp;base64,AAAA' }] }] }, 'unsupported MIME type'],
    [{ model: 'gpt-4.1', input: [{ role: 'user', content: [{ type: 'input_file', file_data: 'data:application/pdf;base64,AAAA' }] }] }, 'A filename is required'],
    [{ model: 'gpt-4.1', input: [{ role: 'assistant', content: [{ type: 'input_text', text: 'x' }] }] }, "Invalid value: 'input_text'"],
  ])('refuses %j with a 400 naming the problem', async (body, message) => {
    const { status, body: answer } = await post(body);
    expect(status).toBe(400);
    expect(answer.error?.message).toContain(message);
  });
});
