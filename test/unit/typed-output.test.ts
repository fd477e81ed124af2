/**
 * Typed final answers, without a server: how each provider asks for the schema (through the real
 * SDKs against the strict fake), which schemas fit strict mode, the spec checks, the workflow's
 * answer check, and the client's helpers.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { callAnthropic, convertToAnthropicRequest } from '../../activities/providers/anthropic.js';
import type { ProviderCallOptions } from '../../activities/providers/errors.js';
import { callOpenAI, convertToOpenAIRequest } from '../../activities/providers/openai.js';
import { callOpenAIResponses, convertToResponsesRequest } from '../../activities/providers/openai-responses.js';
import { readOutputStream, toOutputSpec, typedOutput, TurnpikeOutputError } from '../../client/typed-output.js';
import { SchemaCache } from '../../workflows/calls/call-checks.js';
import { anthropicSchema, anthropicSchemaProblem, strictSchemaProblem } from '../../workflows/agents/output-schema.js';
import type { TurnContext } from '../../workflows/context/turn-context.js';
import type { TurnEventRecord } from '../../workflows/types/turn-events.js';
import { outputSpecProblem, TypedOutput } from '../../workflows/agents/typed-output.js';
import type { AgentTurnResult, ModelProvider, ModelStepInput, TurnOutputSpec } from '../../workflows/types/index.js';
import { startFakeProviderServer, type FakeProviderServer } from '../fake-provider/server.js';
import { validateAnthropicStructuredOutput } from '../fake-provider/structured-output.js';

let server: FakeProviderServer;
beforeAll(async () => {
  server = await startFakeProviderServer();
});
afterAll(async () => {
  await server?.close();
});
beforeEach(() => server.reset());

const STRICT = { type: 'object', properties: { city: { type: 'string' }, days: { type: 'number' } }, required: ['city', 'days'], additionalProperties: false };
/** Closed, but `days` is optional: Anthropic takes it, OpenAI's strict mode does not. */
const OPTIONAL_DAYS = { ...STRICT, required: ['city'] };
const tool = { name: 'lookup_city', description: 'Looks up a city.', inputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } };

function step(provider: ModelProvider, output: TurnOutputSpec): ModelStepInput {
  const model = provider === 'anthropic' ? 'claude-sonnet-4-6' : 'gpt-4.1-mini';
  return { model: { provider, model, maxTokens: 256 }, messages: [{ role: 'user', content: 'Plan a trip.' }], tools: [tool], output };
}

const options = (provider: ModelProvider): ProviderCallOptions => ({ apiKey: 'sk-test', baseURL: provider === 'anthropic' ? server.anthropicBaseURL : server.openaiBaseURL });

describe('provider requests for a typed answer', () => {
  it('Chat Completions: response_format json_schema, strict when the schema fits strict mode, tools still offered', () => {
    const request = convertToOpenAIRequest(step('openai', { schema: STRICT, name: 'trip' }));
    expect(request.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'trip', schema: STRICT, strict: true } });
    expect(request.tools).toHaveLength(1);
    expect(convertToOpenAIRequest(step('openai', { schema: OPTIONAL_DAYS })).response_format).toEqual({ type: 'json_schema', json_schema: { name: 'final_answer', schema: OPTIONAL_DAYS, strict: false } });
    expect(convertToOpenAIRequest({ ...step('openai', { schema: STRICT }), output: undefined }).response_format).toBeUndefined();
  });

  it('Responses: text.format json_schema, flat, strict when the schema fits', () => {
    expect(convertToResponsesRequest(step('openai-responses', { schema: STRICT, name: 'trip' })).text).toEqual({ format: { type: 'json_schema', name: 'trip', schema: STRICT, strict: true } });
    expect(convertToResponsesRequest(step('openai-responses', { schema: OPTIONAL_DAYS })).text).toEqual({ format: { type: 'json_schema', name: 'final_answer', schema: OPTIONAL_DAYS, strict: false } });
  });

  it('Anthropic: output_config.format json_schema, tools still offered', () => {
    const request = convertToAnthropicRequest(step('anthropic', { schema: OPTIONAL_DAYS }));
    expect(request.output_config).toEqual({ format: { type: 'json_schema', schema: OPTIONAL_DAYS } });
    expect(request.tools).toHaveLength(1);
  });

  it.each([
    ['openai', callOpenAI],
    ['openai-responses', callOpenAIResponses],
    ['anthropic', callAnthropic],
  ] as const)('%s: the strict fake accepts the request, strict or not, and answers with the JSON text', async (provider, call) => {
    for (const schema of [STRICT, OPTIONAL_DAYS]) {
      server.script(provider, [{ json: { city: 'Lisbon', days: 4 } }]);
      const result = await call(step(provider, { schema }), options(provider));
      expect(server.requests.at(-1)!.errors).toEqual([]);
      expect(result.message.content).toEqual([{ type: 'text', text: '{"city":"Lisbon","days":4}' }]);
    }
  });
});

describe('schemas and strict mode', () => {
  it('fits OpenAI strict mode only when every object is closed and requires every property', () => {
    expect(strictSchemaProblem(STRICT)).toBeUndefined();
    expect(strictSchemaProblem(toOutputSpec({ schema: z.object({ a: z.array(z.object({ b: z.boolean() })) }) }).schema)).toBeUndefined();
    expect(strictSchemaProblem(OPTIONAL_DAYS)).toBe("schema: property 'days' must be in required");
    expect(strictSchemaProblem({ type: 'object', properties: { a: { type: 'object', properties: {}, required: [] } }, required: ['a'], additionalProperties: false })).toBe('schema.properties.a: additionalProperties must be false');
    expect(strictSchemaProblem({ ...STRICT, allOf: [] })).toBe("schema: 'allOf' is not permitted in strict mode");
  });

  it('refuses for Anthropic JSON outputs only what they cannot express: open objects and recursion', () => {
    expect(anthropicSchemaProblem(OPTIONAL_DAYS)).toBeUndefined();
    expect(anthropicSchemaProblem({ ...STRICT, properties: { ...STRICT.properties, days: { type: 'number', minimum: 1 } } })).toBeUndefined();
    expect(anthropicSchemaProblem({ type: 'object', properties: {} })).toBe('schema: additionalProperties must be false for Anthropic structured outputs');
    expect(anthropicSchemaProblem({ ...STRICT, properties: { next: { $ref: '#' } } })).toBe('schema.properties.next: recursive schemas are not supported by Anthropic structured outputs');
  });

  it('sends Anthropic the constraints it refuses in descriptions, as its SDK does, and leaves the schema as it was', () => {
    const schema = toOutputSpec({
      schema: z.object({
        nights: z.number().int().min(1).max(14),
        count: z.number().int(),
        name: z.string().min(2).max(20).describe('Who travels'),
        tags: z.array(z.string().min(1)).min(2).max(3),
        maybe: z.array(z.string()).min(1),
        id: z.cuid(),
        mail: z.email(),
        leg: z.discriminatedUnion('by', [z.object({ by: z.literal('air') }), z.object({ by: z.literal('rail'), km: z.number().positive() })]),
      }),
    }).schema;
    const before = JSON.stringify(schema);
    const sent = anthropicSchema(schema) as { properties: Record<string, Record<string, unknown>> };
    expect(JSON.stringify(schema)).toBe(before);
    expect(sent.properties.nights).toEqual({ type: 'integer', description: '{minimum: 1, maximum: 14}' });
    // zod's safe-integer bounds of `.int()` say nothing `integer` does not: left out.
    expect(sent.properties.count).toEqual({ type: 'integer' });
    expect(sent.properties.name).toEqual({ type: 'string', description: 'Who travels\n\n{minLength: 2, maxLength: 20}' });
    expect(sent.properties.tags).toEqual({ type: 'array', items: { type: 'string', description: '{minLength: 1}' }, description: '{minItems: 2, maxItems: 3}' });
    expect(sent.properties.maybe).toMatchObject({ minItems: 1 });
    expect(sent.properties.id).toMatchObject({ type: 'string', description: '{format: "cuid"}' });
    expect(sent.properties.mail).toMatchObject({ type: 'string', format: 'email' });
    expect(sent.properties.leg.oneOf).toBeUndefined();
    expect((sent.properties.leg.anyOf as Array<{ properties: Record<string, unknown> }>)[1].properties.km).toEqual({ type: 'number', description: '{exclusiveMinimum: 0}' });
    // The strict fake, holding Anthropic's rules, refuses the schema and accepts what is sent.
    const asked = (format: unknown) => validateAnthropicStructuredOutput({ output_config: { format: { type: 'json_schema', schema: format } } } as never, false);
    expect(asked(schema)).toContain("output_config.format.schema: For 'integer' type, property 'minimum' is not supported");
    expect(asked(sent)).toEqual([]);
  });

  it('checks a turn spec field by field', () => {
    expect(outputSpecProblem({ schema: STRICT, name: 'trip', maxRetries: 0 }, 'openai')).toBeUndefined();
    expect(outputSpecProblem('trip', 'openai')).toBe('output must be { schema, name?, maxRetries? }');
    expect(outputSpecProblem({ schema: { type: 'string' } }, 'openai')).toBe("output.schema must be a JSON Schema of an object (type: 'object')");
    expect(outputSpecProblem({ schema: STRICT, name: 'x'.repeat(65) }, 'openai')).toBe('output.name must match ^[a-zA-Z0-9_-]{1,64}$');
    expect(outputSpecProblem({ schema: STRICT, maxRetries: 1.5 }, 'openai')).toBe('output.maxRetries must be an integer from 0 to 10');
    // Open objects are fine for OpenAI (sent non-strict), refused for Anthropic.
    expect(outputSpecProblem({ schema: { type: 'object' } }, 'openai')).toBeUndefined();
    expect(outputSpecProblem({ schema: { type: 'object' } }, 'anthropic')).toBe('output.schema: additionalProperties must be false for Anthropic structured outputs');
  });
});

describe("the workflow's answer check", () => {
  const typed = new TypedOutput({ schemas: new SchemaCache() } as unknown as TurnContext, { schema: STRICT, name: 'trip', maxRetries: 2 });

  it('accepts JSON that matches, and names each problem of JSON that does not', () => {
    expect(typed.check('{"city":"Lisbon","days":4}')).toEqual({ valid: true, value: { city: 'Lisbon', days: 4 } });
    expect(typed.check('{"city":"Lisbon","days":"four","extra":1}')).toEqual({
      valid: false,
      errors: ['days: Invalid input: expected number, received string', '(root): Unrecognized key: "extra" (extra)'],
    });
    const notJson = typed.check('Lisbon for four days');
    expect(notJson.valid).toBe(false);
    expect(!notJson.valid && notJson.errors[0]).toMatch(/^the answer is not JSON: /);
  });
});

describe("the workflow's verdict on an answer", () => {
  it('corrects an invalid answer while corrections remain, never for a superseded turn, and keeps the count', () => {
    const turn = { schemas: new SchemaCache(), outputRetries: 0, appended: [] as unknown[] };
    const typed = new TypedOutput(turn as unknown as TurnContext, { schema: STRICT, name: 'trip', maxRetries: 1 });
    expect(typed.judge('{"city":"Lisbon"}', false)).toEqual({ kind: 'invalid-output', errors: ['days: Invalid input: expected number, received undefined'] });
    expect(turn.appended).toEqual([]);
    expect(typed.judge('{"city":"Lisbon"}')).toEqual({ kind: 'corrected' });
    expect(turn).toMatchObject({ outputRetries: 1, appended: [{ role: 'user', content: expect.stringContaining('- days: Invalid input: expected number') }] });
    expect(typed.judge('{"city":"Lisbon"}')).toMatchObject({ kind: 'invalid-output' });
    expect(typed.judge('{"city":"Lisbon","days":4}')).toEqual({ kind: 'completed', output: { city: 'Lisbon', days: 4 } });
  });
});

describe("the client's typed-output helpers", () => {
  const Trip = z.object({ city: z.string(), days: z.coerce.number() });
  const result = (fields: Partial<AgentTurnResult>): AgentTurnResult => ({ status: 'completed', text: '', messages: [], steps: 1, usage: { inputTokens: 0, outputTokens: 0 }, toolCalls: [], ...fields });

  it('sends a zod schema as its JSON Schema, and a JSON Schema as it is', () => {
    expect(toOutputSpec({ schema: z.object({ city: z.string() }), maxRetries: 1 })).toEqual({
      schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
      maxRetries: 1,
    });
    expect(toOutputSpec({ schema: STRICT, name: 'trip' })).toEqual({ schema: STRICT, name: 'trip' });
  });

  it('reads the output as the schema type, and refuses a turn that ended without one', () => {
    expect(typedOutput(result({ output: { city: 'Lisbon', days: '4' } }), Trip)).toEqual({ city: 'Lisbon', days: 4 });
    const error = (() => {
      try {
        typedOutput(result({ status: 'invalid-output', outputErrors: ['days: missing'] }), Trip);
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(TurnpikeOutputError);
    expect(error).toMatchObject({ status: 'invalid-output', errors: ['days: missing'], message: 'The turn ended invalid-output without a typed answer: days: missing' });
  });

  it('reads partial objects of the answering step only: a tool step and a corrected answer start over', async () => {
    const events: TurnEventRecord['event'][] = [
      { type: 'text-delta', text: '{"note": "calling a tool"', step: 1, attempt: 1 },
      { type: 'text-delta', text: '{"city": "Li', step: 2, attempt: 1 },
      { type: 'text-delta', text: 'sbon"', step: 2, attempt: 1 },
      { type: 'text-delta', text: '{"city": "Porto", ', step: 3, attempt: 1 },
      { type: 'text-delta', text: '"days": 2}', step: 3, attempt: 1 },
      { type: 'turn-finished', status: 'completed', text: '{"city": "Porto", "days": 2}', steps: 3, usage: { inputTokens: 0, outputTokens: 0 }, output: { city: 'Porto', days: 2 } },
    ];
    async function* records() {
      for (const [offset, event] of events.entries()) yield { offset, event };
    }
    const items = [];
    for await (const item of readOutputStream(records(), (output) => Trip.parse(output))) items.push(item);
    expect(items).toEqual([
      { type: 'partial', step: 1, partial: { note: 'calling a tool' } },
      { type: 'partial', step: 2, partial: { city: 'Li' } },
      { type: 'partial', step: 2, partial: { city: 'Lisbon' } },
      { type: 'partial', step: 3, partial: { city: 'Porto' } },
      { type: 'partial', step: 3, partial: { city: 'Porto', days: 2 } },
      { type: 'finished', status: 'completed', output: { city: 'Porto', days: 2 } },
    ]);
  });
});
