/**
 * The fake provider's structured output (test/fake-provider/structured-output.ts), driven by the
 * real `openai` and `@anthropic-ai/sdk` clients: valid requests answered with the scripted JSON,
 * invalid ones refused with the real APIs' 400s.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeProviderServer, type FakeProviderServer, type Json } from '../fake-provider/server.js';
import { MAX_NESTING } from '../fake-provider/structured-output.js';

let server: FakeProviderServer;
let openai: OpenAI;
let anthropic: Anthropic;

beforeAll(async () => {
  server = await startFakeProviderServer();
  openai = new OpenAI({ baseURL: server.openaiBaseURL, apiKey: 'sk-test', maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: server.anthropicBaseURL, apiKey: 'sk-ant-test', maxRetries: 0 });
});
afterAll(async () => {
  await server?.close();
});
beforeEach(() => {
  server.reset();
});

/** A strict-valid schema: every object closed, every property required. */
const orderSchema = {
  type: 'object',
  properties: {
    orderId: { type: 'string' },
    refund: { type: 'object', properties: { amount: { type: 'number' }, reason: { type: ['string', 'null'] } }, required: ['amount', 'reason'], additionalProperties: false },
    items: { type: 'array', items: { type: 'object', properties: { sku: { type: 'string' } }, required: ['sku'], additionalProperties: false } },
  },
  required: ['orderId', 'refund', 'items'],
  additionalProperties: false,
};
const answer = { orderId: '1001', refund: { amount: 12.5, reason: null }, items: [{ sku: 'A-1' }] };
const messages = [{ role: 'user' as const, content: 'Refund order 1001.' }];

/** The error an SDK call rejects with. */
async function refusal(call: Promise<unknown>): Promise<{ status: number; error: Json }> {
  const error: Json = await call.then(
    () => expect.fail('expected a 400'),
    (caught: unknown) => caught,
  );
  return { status: error.status, error: error.error };
}

/** `depth` objects nested through `properties.child`, the innermost holding a string. */
function nested(depth: number): Json {
  let schema: Json = { type: 'string' };
  for (let level = 0; level < depth; level++) schema = { type: 'object', properties: { child: schema }, required: ['child'], additionalProperties: false };
  return schema;
}

/** Strict schemas the real API refuses, with its message (format name `order`). */
const invalidStrictSchemas: Array<[string, Json, string]> = [
  ['an open root object', { ...orderSchema, additionalProperties: undefined }, "Invalid schema for response_format 'order': In context=(), 'additionalProperties' is required to be supplied and to be false."],
  [
    'an open nested object',
    { ...orderSchema, properties: { ...orderSchema.properties, refund: { ...orderSchema.properties.refund, additionalProperties: true } } },
    "Invalid schema for response_format 'order': In context=('properties', 'refund'), 'additionalProperties' is required to be supplied and to be false.",
  ],
  [
    'an optional property',
    { ...orderSchema, required: ['orderId', 'refund'] },
    "Invalid schema for response_format 'order': In context=(), 'required' is required to be supplied and to be an array including every key in properties. Missing 'items'.",
  ],
  [
    'an unsupported keyword',
    { ...orderSchema, properties: { ...orderSchema.properties, items: { ...orderSchema.properties.items, uniqueItems: true } } },
    "Invalid schema for response_format 'order': In context=('properties', 'items'), 'uniqueItems' is not permitted.",
  ],
  ['allOf', { ...orderSchema, allOf: [] }, "Invalid schema for response_format 'order': In context=(), 'allOf' is not permitted."],
  ['a root that is not an object', { type: 'array', items: { type: 'string' } }, 'Invalid schema for response_format \'order\': schema must be a JSON Schema of \'type: "object"\', got \'type: "array"\'.'],
  ['too deep a nesting', nested(MAX_NESTING + 1), `Invalid schema for response_format 'order': ${MAX_NESTING + 1} levels of nesting exceeds limit of ${MAX_NESTING}.`],
];

describe('Chat Completions response_format', () => {
  it('answers a strict json_schema request with the scripted JSON as the message content', async () => {
    server.script('openai', [{ json: answer }]);
    const completion = await openai.chat.completions.create({
      model: 'gpt-4o',
      messages,
      response_format: { type: 'json_schema', json_schema: { name: 'order', schema: orderSchema, strict: true } },
    });
    expect(JSON.parse(completion.choices[0].message.content!)).toEqual(answer);
    expect(completion.choices[0].finish_reason).toBe('stop');
    expect(server.requests[0].errors).toEqual([]);
  });

  it('streams the scripted JSON as content deltas', async () => {
    server.script('openai', [{ json: answer }]);
    const stream = await openai.chat.completions.create({ model: 'gpt-4o', messages, stream: true, response_format: { type: 'json_schema', json_schema: { name: 'order', schema: orderSchema, strict: true } } });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(JSON.parse(text)).toEqual(answer);
  });

  it('accepts any schema without strict, and json_object when the messages mention JSON', async () => {
    server.script('openai', [{ json: { anything: true } }, { json: { ok: 1 } }]);
    await openai.chat.completions.create({ model: 'gpt-4o', messages, response_format: { type: 'json_schema', json_schema: { name: 'loose', schema: { type: 'object' } } } });
    await openai.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Answer in JSON.' }], response_format: { type: 'json_object' } });
    expect(server.requests.map((request) => request.status)).toEqual([200, 200]);
  });

  it(`accepts a strict schema nested ${MAX_NESTING} objects deep, the limit`, async () => {
    await openai.chat.completions.create({ model: 'gpt-4o', messages, response_format: { type: 'json_schema', json_schema: { name: 'deep', schema: nested(MAX_NESTING), strict: true } } });
    expect(server.requests[0].errors).toEqual([]);
  });

  it.each(invalidStrictSchemas)('refuses a strict schema with %s', async (_case, schema, message) => {
    const { status, error } = await refusal(openai.chat.completions.create({ model: 'gpt-4o', messages, response_format: { type: 'json_schema', json_schema: { name: 'order', schema, strict: true } } }));
    expect(status).toBe(400);
    expect(error).toEqual({ message, type: 'invalid_request_error', param: 'response_format', code: null });
  });

  it('refuses a bad format name, json_object without "json" in the messages, and an unknown type', async () => {
    const cases: Array<[Json, string]> = [
      [{ type: 'json_schema', json_schema: { name: 'order form', schema: orderSchema } }, "Invalid 'response_format.json_schema.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'."],
      [{ type: 'json_object' }, "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'."],
      [{ type: 'xml' }, "Invalid value: 'xml'. Supported values are: 'text', 'json_object', and 'json_schema'. (param: response_format.type)"],
    ];
    for (const [format, message] of cases) {
      const { status, error } = await refusal(openai.chat.completions.create({ model: 'gpt-4o', messages, response_format: format }));
      expect(status).toBe(400);
      expect(error.message).toBe(message);
    }
  });

  it('answers a 500 naming the mistake when json is scripted for a request that asked for no structure', async () => {
    server.script('openai', [{ json: answer }]);
    const { status, error } = await refusal(openai.chat.completions.create({ model: 'gpt-4o', messages }));
    expect(status).toBe(500);
    expect(error.message).toMatch(/json scripted for a request that asked for no structured output/);
  });
});

describe('Responses text.format', () => {
  const format = { type: 'json_schema' as const, name: 'order', schema: orderSchema, strict: true };

  it('answers with the scripted JSON as the output text and echoes the format', async () => {
    server.script('openai-responses', [{ json: answer }]);
    const response = await openai.responses.create({ model: 'gpt-4o', input: 'Refund order 1001.', text: { format } });
    expect(JSON.parse(response.output_text)).toEqual(answer);
    expect(response.text?.format).toEqual(format);
  });

  it.each(invalidStrictSchemas)('refuses a strict schema with %s', async (_case, schema, message) => {
    const { status, error } = await refusal(openai.responses.create({ model: 'gpt-4o', input: 'Refund order 1001.', text: { format: { ...format, schema } } }));
    expect(status).toBe(400);
    expect(error).toEqual({ message, type: 'invalid_request_error', param: 'text.format.schema', code: 'invalid_json_schema' });
  });

  it('refuses Chat Completions nesting and json_object without "json" in the input', async () => {
    const nestedFormat: Json = { type: 'json_schema', json_schema: { name: 'order', schema: orderSchema } };
    expect((await refusal(openai.responses.create({ model: 'gpt-4o', input: 'Refund.', text: { format: nestedFormat } }))).error.message).toMatch(/^Unknown parameter: 'text.format.json_schema'/);
    expect((await refusal(openai.responses.create({ model: 'gpt-4o', input: 'Refund.', text: { format: { type: 'json_object' } } }))).error.message).toBe(
      "Response input messages must contain the word 'json' in some form to use 'text.format' of type 'json_object'.",
    );
  });
});

describe('Anthropic forced tool use and JSON outputs', () => {
  const tools = [{ name: 'record_refund', description: 'Records the refund.', input_schema: orderSchema as Anthropic.Tool.InputSchema }];

  it('answers a forced tool with a tool_use of that tool carrying the scripted JSON', async () => {
    server.script('anthropic', [{ json: answer }]);
    const message = await anthropic.messages.create({ model: 'claude-test', max_tokens: 1024, messages, tools, tool_choice: { type: 'tool', name: 'record_refund' } });
    expect(message.stop_reason).toBe('tool_use');
    expect(message.content).toEqual([expect.objectContaining({ type: 'tool_use', name: 'record_refund', input: answer })]);
  });

  it('refuses a forced tool that is not among the tools, and forcing with thinking on', async () => {
    const missing = await refusal(anthropic.messages.create({ model: 'claude-test', max_tokens: 1024, messages, tools, tool_choice: { type: 'tool', name: 'issue_refund' } }));
    expect(missing.status).toBe(400);
    expect(missing.error.error).toEqual({ type: 'invalid_request_error', message: "Tool 'issue_refund' not found in provided tools" });
    for (const tool_choice of [{ type: 'tool' as const, name: 'record_refund' }, { type: 'any' as const }]) {
      const thinking = await refusal(
        anthropic.messages.create({ model: 'claude-test', max_tokens: 4096, messages, tools, tool_choice, thinking: { type: 'enabled', budget_tokens: 1024 } }),
      );
      expect(thinking.error.error.message).toBe('Thinking may not be enabled when tool_choice forces tool use.');
    }
  });

  it('answers a 500 naming the mistake when a forced tool is answered with text', async () => {
    server.script('anthropic', [{ text: 'Refunded.' }]);
    const { status, error } = await refusal(anthropic.messages.create({ model: 'claude-test', max_tokens: 1024, messages, tools, tool_choice: { type: 'tool', name: 'record_refund' } }));
    expect(status).toBe(500);
    expect(error.error.message).toMatch(/forces tool 'record_refund'/);
  });

  it('answers output_config.format with the scripted JSON as the text', async () => {
    server.script('anthropic', [{ json: answer }]);
    const message = await anthropic.messages.create({ model: 'claude-test', max_tokens: 1024, messages, output_config: { format: { type: 'json_schema', schema: orderSchema } } });
    expect(message.stop_reason).toBe('end_turn');
    expect(message.content[0].type === 'text' && JSON.parse(message.content[0].text)).toEqual(answer);
    expect(server.requests[0].errors).toEqual([]);
  });

  it('refuses output_config.format schemas outside the supported subset', async () => {
    const cases: Array<[Json, string]> = [
      [{ ...orderSchema, additionalProperties: undefined }, "output_config.format.schema: For 'object' type, 'additionalProperties' must be explicitly set to false"],
      [
        { ...orderSchema, properties: { ...orderSchema.properties, orderId: { type: 'string', maxLength: 8 } } },
        "output_config.format.schema: For 'string' type, property 'maxLength' is not supported",
      ],
      [{ ...orderSchema, properties: { ...orderSchema.properties, nights: { type: 'integer', minimum: 1 } } }, "output_config.format.schema: For 'integer' type, property 'minimum' is not supported"],
      [{ ...orderSchema, properties: { ...orderSchema.properties, tags: { type: 'array', items: { type: 'string' }, minItems: 2 } } }, "output_config.format.schema: For 'array' type, 'minItems' values other than 0 or 1 are not supported"],
      [{ type: 'object', properties: { next: { $ref: '#' } }, required: ['next'], additionalProperties: false }, 'output_config.format.schema.properties.next: recursive schemas are not supported in structured output schemas'],
    ];
    for (const [schema, message] of cases) {
      const { status, error } = await refusal(anthropic.messages.create({ model: 'claude-test', max_tokens: 1024, messages, output_config: { format: { type: 'json_schema', schema } } }));
      expect(status).toBe(400);
      expect(error.error.message).toBe(message);
    }
  });
});
