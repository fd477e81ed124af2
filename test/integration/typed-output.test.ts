/**
 * Typed final answers (docs/typed-output.md) through the real OpenAI and Anthropic SDKs and the
 * strict fake providers, on the real dev server: every request asks natively for the schema
 * (Chat Completions `response_format`, Responses `text.format`, Anthropic `output_config.format`)
 * and is valid by the API's rules; the turn validates the answer, sends an invalid one back with
 * its errors, ends `invalid-output` when corrections run out, and survives a worker restart while
 * a call is parked before the answer.
 */
import { randomUUID } from 'node:crypto';
import { ApplicationFailure, WorkflowFailedError } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseTokenMap } from '../../api/auth.js';
import { runCli } from '../../cli/main.js';
import { buildApi } from '../../api/server.js';
import { toOutputSpec, TurnpikeClient, typedOutput, type OutputStreamItem } from '../../client/index.js';
import { approveToolCallSignal } from '../../workflows/messages/definitions.js';
import { INVALID_TURN_INPUT } from '../../workflows/messages/rejection-types.js';
import type { Message, ModelSettings } from '../../workflows/types/index.js';
import type { FakeProvider, RecordedRequest } from '../fake-provider/server.js';
import { useFakeProviders } from '../support/fake-providers.js';
import { noteStarted } from '../support/history-recorder.js';
import { executionsOf, testTools } from '../support/test-tools.js';
import { startTurnpike, waitForPending, type TurnpikeHarness } from '../support/turnpike-harness.js';

let fake: Awaited<ReturnType<typeof useFakeProviders>>;
let turnpike: TurnpikeHarness;
let client: TurnpikeClient;
let api: FastifyInstance;

beforeAll(async () => {
  fake = await useFakeProviders();
  turnpike = await startTurnpike({ tools: testTools });
  client = new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue });
  api = await buildApi({ client, tokens: parseTokenMap('alice-token:alice') });
});

afterAll(async () => {
  await api?.close();
  await turnpike?.stop();
  await fake?.restore();
});

beforeEach(() => fake.reset());

const fastRetries = { retry: { initialInterval: '50ms', backoffCoefficient: 1, maximumAttempts: 3 } };
const Trip = z.object({ city: z.string(), days: z.number() });
const TRIP_SCHEMA = toOutputSpec({ schema: Trip }).schema;

const MODELS: Record<FakeProvider, ModelSettings> = {
  openai: { provider: 'openai', model: 'gpt-4.1-mini', maxTokens: 512 },
  'openai-responses': { provider: 'openai-responses', model: 'gpt-4.1-mini', maxTokens: 512 },
  anthropic: { provider: 'anthropic', model: 'claude-sonnet-4-6', maxTokens: 512 },
};

/** The structured-output request as each API takes it natively. */
function nativeFormat(provider: FakeProvider, request: RecordedRequest): unknown {
  if (provider === 'openai') return request.body.response_format;
  if (provider === 'openai-responses') return request.body.text?.format;
  return request.body.output_config?.format;
}

function expectedFormat(provider: FakeProvider, name = 'final_answer'): unknown {
  if (provider === 'openai') return { type: 'json_schema', json_schema: { name, schema: TRIP_SCHEMA, strict: true } };
  if (provider === 'openai-responses') return { type: 'json_schema', name, schema: TRIP_SCHEMA, strict: true };
  return { type: 'json_schema', schema: TRIP_SCHEMA };
}

function requestsOf(provider: FakeProvider): RecordedRequest[] {
  return fake.requests.filter((request) => request.provider === provider);
}

/** The text of every user message of a request, as the provider received it. */
function userTexts(request: RecordedRequest): string {
  const messages: Array<{ role: string; content: unknown }> = request.body.messages ?? request.body.input ?? [];
  return JSON.stringify(messages.filter((message) => message.role === 'user'));
}

describe.each(['openai', 'openai-responses', 'anthropic'] as const)('%s', (provider) => {
  const start = (text: string, extra: { maxRetries?: number; messages?: Message[] } = {}) =>
    turnpike.startTurn({
      model: MODELS[provider],
      ...(extra.messages ? { messages: [...extra.messages, { role: 'user', content: text }] } : { text }),
      output: { schema: TRIP_SCHEMA, ...(extra.maxRetries !== undefined ? { maxRetries: extra.maxRetries } : {}) },
      modelCallOptions: fastRetries,
    });

  it('returns a typed answer after a tool step, and every step asked natively for the schema with the tools offered', async () => {
    fake.script(provider, [{ toolCalls: [{ name: 'record_action', input: { action: 'plan' } }] }, { json: { city: 'Lisbon', days: 4 } }]);
    const handle = await start('Plan a trip.');
    const result = await handle.result();

    expect(result).toMatchObject({ status: 'completed', steps: 2, output: { city: 'Lisbon', days: 4 }, text: JSON.stringify({ city: 'Lisbon', days: 4 }) });
    expect(result.outputErrors).toBeUndefined();
    expect(typedOutput(result, Trip)).toEqual({ city: 'Lisbon', days: 4 });
    const requests = requestsOf(provider);
    expect(requests).toHaveLength(2);
    expect(requests.flatMap((request) => request.errors)).toEqual([]);
    for (const request of requests) {
      expect(nativeFormat(provider, request)).toEqual(expectedFormat(provider));
      expect(request.body.tools?.length).toBeGreaterThan(0);
    }
  });

  it('sends an invalid answer back with its errors, then accepts the corrected one', async () => {
    fake.script(provider, [{ json: { city: 'Lisbon' } }, { json: { city: 'Lisbon', days: 4 } }]);
    const handle = await start('Plan a trip.');
    const result = await handle.result();

    expect(result).toMatchObject({ status: 'completed', steps: 2, output: { city: 'Lisbon', days: 4 } });
    expect(result.messages.map((message) => message.role)).toEqual(['assistant', 'user', 'assistant']);
    const [first, second] = requestsOf(provider);
    expect([...first.errors, ...second.errors]).toEqual([]);
    expect(userTexts(first)).not.toContain('final_answer');
    // The model was told exactly what was wrong: the field and the problem.
    expect(userTexts(second)).toContain('not valid \\"final_answer\\" output');
    expect(userTexts(second)).toMatch(/days: Invalid input: expected number/);
  });

  it('ends invalid-output when the answer stays invalid after maxRetries, with a history the next turn can use', async () => {
    fake.script(provider, [{ text: 'Lisbon, four days.' }, { json: { city: 'Lisbon' } }]);
    const handle = await start('Plan a trip.', { maxRetries: 1 });
    const result = await handle.result();

    expect(result).toMatchObject({ status: 'invalid-output', steps: 2, text: JSON.stringify({ city: 'Lisbon' }) });
    expect(result.output).toBeUndefined();
    expect(result.outputErrors).toEqual([expect.stringMatching(/^days: Invalid input: expected number/)]);
    expect(userTexts(requestsOf(provider)[1])).toContain('the answer is not JSON');

    // The next turn takes the history as it is, and the strict fake finds its request valid.
    fake.script(provider, [{ json: { city: 'Porto', days: 2 } }]);
    const next = await start('Somewhere else, then.', { messages: [{ role: 'user', content: 'Plan a trip.' }, ...result.messages] });
    expect(await next.result()).toMatchObject({ status: 'completed', output: { city: 'Porto', days: 2 } });
    expect(requestsOf(provider).flatMap((request) => request.errors)).toEqual([]);
  });

  it('returns the typed answer of a turn that parked a call for approval while its worker was replaced', async () => {
    fake.script(provider, [{ toolCalls: [{ name: 'guarded_action', input: { target: 'prod-db', count: 1 } }] }, { json: { city: 'Lisbon', days: 4 } }]);
    const handle = await start('Book it once approved.');
    const [pending] = await waitForPending(handle);
    await turnpike.stopWorker();
    try {
      // No worker: the update is accepted only when a worker picks it up, so send it as a signal.
      await handle.signal(approveToolCallSignal, { approvalId: pending.approvalId!, approved: true, approver: 'alice' });
    } finally {
      await turnpike.startWorker();
    }
    const trip = await client.turnOutput(handle.workflowId, Trip);

    expect(trip).toEqual({ city: 'Lisbon', days: 4 });
    expect(executionsOf(handle.workflowId)).toHaveLength(1);
    const requests = requestsOf(provider);
    expect(requests.flatMap((request) => request.errors)).toEqual([]);
    expect(requests.map((request) => nativeFormat(provider, request))).toEqual([expectedFormat(provider), expectedFormat(provider)]);
  });
});

describe('the scripted demo model', () => {
  const Order = z.object({ orderId: z.string(), found: z.boolean() });
  const output = toOutputSpec({ schema: Order, maxRetries: 1 });

  it('answers a typed turn with the JSON of `answer with {json}`, after its tool steps', async () => {
    const handle = await turnpike.startTurn({ text: 'look up order 1001 then answer with {"orderId": "1001", "found": true}', output });
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'completed', steps: 2, output: { orderId: '1001', found: true } });
    expect(result.toolCalls.map((call) => call.toolName)).toEqual(['lookup_order']);
  });

  it('counts corrections across a hand-over to a new run', async () => {
    const lookups = Array.from({ length: 6 }, (_, index) => `look up order ${1001 + index}`).join(' then ');
    const handle = await turnpike.startTurn({
      text: `${lookups} then answer with {"orderId": 1001}`,
      output: { ...output, maxRetries: 6 },
      maxSteps: 20,
      historyLimit: { events: 100 },
    });
    const result = await handle.result();
    // Six tool steps, the answer and six corrections of it: not one more, though the count went on in a new run.
    expect(result).toMatchObject({ status: 'invalid-output', steps: 13 });
    expect(result.messages.filter((message) => message.role === 'user')).toHaveLength(6);
    const described = await handle.describe();
    expect(described.raw.workflowExecutionInfo?.firstRunId).toMatch(/./);
    expect(described.runId).not.toBe(described.raw.workflowExecutionInfo?.firstRunId);
  });

  it('ends invalid-output when the same invalid answer comes back after its correction', async () => {
    const handle = await turnpike.startTurn({ text: 'answer with {"orderId": 1001}', output });
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'invalid-output', steps: 2, text: '{"orderId": 1001}' });
    expect(result.outputErrors).toEqual(['orderId: Invalid input: expected string, received number', 'found: Invalid input: expected boolean, received undefined']);
    expect(result.messages.map((message) => message.role)).toEqual(['assistant', 'user', 'assistant']);
  });
});

describe('the client reading a typed answer as it streams', () => {
  // Where each fake holds its stream: after the opening events and `{"city": "Lisbon", `.
  it.each([
    ['openai', 3],
    ['openai-responses', 6],
    ['anthropic', 5],
  ] as const)('yields growing partial objects, then the validated answer (%s)', async (provider, pauseAfterEvents) => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    fake.script(provider, [{ text: '{"city": "Lisbon", "days": 4}', stream: { pauseAfterEvents, resume: released } }]);
    const handle = await turnpike.startTurn({ model: MODELS[provider], text: 'Plan a trip.', output: { schema: TRIP_SCHEMA } });
    const items: Array<OutputStreamItem<z.output<typeof Trip>>> = [];
    const reader = client.outputStream(handle.workflowId, { schema: Trip });

    // The fake holds the rest of the answer: what arrives now is a partial object.
    for (let next = await reader.next(); !next.done; next = await reader.next()) {
      items.push(next.value);
      if (next.value.type === 'partial' && next.value.partial.city === 'Lisbon') break;
    }
    expect(items.at(-1)).toEqual({ type: 'partial', step: 1, partial: { city: 'Lisbon' } });
    expect((await handle.describe()).status.name).toBe('RUNNING');

    release();
    for (let next = await reader.next(); !next.done; next = await reader.next()) items.push(next.value);
    const partials = items.filter((item) => item.type === 'partial').map((item) => item.partial);
    expect(partials.at(-1)).toEqual({ city: 'Lisbon', days: 4 });
    // Each partial object grows: every field it has keeps its value in the next.
    for (const [index, partial] of partials.slice(1).entries()) expect(partial).toMatchObject(Object.fromEntries(Object.entries(partials[index]).filter(([key]) => key !== 'days')));
    expect(items.at(-1)).toEqual({ type: 'finished', status: 'completed', output: { city: 'Lisbon', days: 4 } });
    expect(fake.requests.flatMap((request) => request.errors)).toEqual([]);
  });
});

describe('a typed answer with constraints Anthropic structured outputs refuse', () => {
  // zod writes `.int()` as the safe-integer `minimum` and `maximum`; `.min()` and `.max()` as bounds and lengths.
  const Stay = z.object({
    nights: z.number().int(),
    guests: z.number().int().min(1).max(4),
    guest: z.string().min(2).max(40),
    rooms: z.array(z.string()).min(1).max(3),
  });

  it('completes on Anthropic: the fake accepts the schema sent, and an answer breaking a dropped constraint is corrected', async () => {
    fake.script('anthropic', [
      { json: { nights: 3, guests: 9, guest: 'Ann', rooms: ['101'] } },
      { json: { nights: 3, guests: 2, guest: 'Ann', rooms: ['101'] } },
    ]);
    const turnId = `typed-bounds-${randomUUID()}`;
    await client.startTurn({ model: MODELS.anthropic, messages: [{ role: 'user', content: 'Book a stay.' }], output: { schema: Stay }, modelCallOptions: fastRetries }, { turnId });
    noteStarted(client.turn(turnId));

    expect(await client.turnOutput(turnId, Stay)).toEqual({ nights: 3, guests: 2, guest: 'Ann', rooms: ['101'] });
    const result = await client.turnResult(turnId);
    expect(result).toMatchObject({ status: 'completed', steps: 2 });
    expect(result.messages.map((message) => message.role)).toEqual(['assistant', 'user', 'assistant']);
    const requests = requestsOf('anthropic');
    expect(requests).toHaveLength(2);
    expect(requests.flatMap((request) => request.errors)).toEqual([]);
    // The constraints went into descriptions; the turn still held the answer to them.
    const { properties } = (nativeFormat('anthropic', requests[0]) as { schema: { properties: Record<string, unknown> } }).schema;
    expect(properties).toEqual({
      nights: { type: 'integer' },
      guests: { type: 'integer', description: '{minimum: 1, maximum: 4}' },
      guest: { type: 'string', description: '{minLength: 2, maxLength: 40}' },
      rooms: { type: 'array', items: { type: 'string' }, minItems: 1, description: '{maxItems: 3}' },
    });
    expect(userTexts(requests[1])).toMatch(/guests: Too big: expected number to be <=4/);
  });
});

describe('a turn with an invalid output spec', () => {
  it.each([
    [{ schema: { type: 'array' } }, "output.schema must be a JSON Schema of an object (type: 'object')"],
    [{ schema: TRIP_SCHEMA, name: 'final answer' }, 'output.name must match ^[a-zA-Z0-9_-]{1,64}$'],
    [{ schema: TRIP_SCHEMA, maxRetries: 11 }, 'output.maxRetries must be an integer from 0 to 10'],
    [{ schema: { type: 'object', properties: { a: { type: 'string' } } } }, 'output.schema: additionalProperties must be false for Anthropic structured outputs'],
  ])('fails at once, naming the field, before any model call (%j)', async (output, message) => {
    const handle = await turnpike.startTurn({ model: MODELS.anthropic, text: 'Plan a trip.', output: output as never });
    const error = await handle.result().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(WorkflowFailedError);
    const cause = (error as WorkflowFailedError).cause;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect((cause as ApplicationFailure).type).toBe(INVALID_TURN_INPUT);
    expect(cause!.message).toBe(`agentTurn input.${message}`);
    expect(fake.requests).toEqual([]);
  });
});

describe('the HTTP API', () => {
  async function post(url: string, body: unknown) {
    const response = await api.inject({ method: 'POST', url, headers: { authorization: 'Bearer alice-token', 'content-type': 'application/json' }, payload: JSON.stringify(body) });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- assertions read response bodies freely
    return { status: response.statusCode, body: response.json() as Record<string, any> };
  }

  it('starts a turn with a typed answer', async () => {
    fake.script('openai', [{ json: { city: 'Lisbon', days: 4 } }]);
    const turnId = `typed-${randomUUID()}`;
    const started = await post('/api/turns', { turnId, input: { model: MODELS.openai, messages: [{ role: 'user', content: 'Plan a trip.' }], output: { schema: TRIP_SCHEMA, name: 'trip' } } });
    expect(started).toMatchObject({ status: 201, body: { turnId } });
    expect(await client.turnOutput(turnId, Trip)).toEqual({ city: 'Lisbon', days: 4 });
    expect(nativeFormat('openai', fake.requests[0])).toMatchObject({ json_schema: { name: 'trip', strict: true } });
  });

  it('sends a conversation message whose turn alone answers typed, and refuses an invalid output spec, changing nothing', async () => {
    fake.script('anthropic', [{ json: { city: 'Lisbon', days: 4 } }, { text: 'Anything else?' }]);
    const url = `/api/conversations/typed-${randomUUID()}/messages`;
    const model = MODELS.anthropic;
    const refused = await post(url, { text: 'Plan a trip.', model, output: { schema: { type: 'object', properties: {} } } });
    expect(refused).toMatchObject({ status: 400, body: { error: { type: 'InvalidRequest', message: 'Invalid sendMessage: output.schema: additionalProperties must be false for Anthropic structured outputs' } } });

    const first = await post(url, { text: 'Plan a trip.', model, output: { schema: TRIP_SCHEMA } });
    expect(first).toMatchObject({ status: 202, body: { turnNumber: 1 } });
    expect(await client.turnOutput(first.body.turnWorkflowId, Trip)).toEqual({ city: 'Lisbon', days: 4 });
    const second = await post(url, { text: 'Thanks.', model });
    const result = await client.turnResult(second.body.turnWorkflowId, { waitForStart: true });
    expect(result).toMatchObject({ status: 'completed', text: 'Anything else?' });
    expect(result.output).toBeUndefined();
    const requests = requestsOf('anthropic');
    expect(requests.map((request) => request.body.output_config !== undefined)).toEqual([true, false]);
    expect(requests.flatMap((request) => request.errors)).toEqual([]);
  });
});

describe('the CLI', () => {
  async function cli(...argv: string[]) {
    const run = { code: -1, stdout: '', stderr: '' };
    run.code = await runCli(argv, { client, stdout: { write: (chunk: string) => (run.stdout += chunk), isTTY: false }, stderr: { write: (chunk: string) => (run.stderr += chunk) } });
    return run;
  }

  it('starts a turn with --output-schema and shows its typed output', async () => {
    fake.script('openai', [{ json: { city: 'Lisbon', days: 4 } }]);
    const turnId = `typed-cli-${randomUUID()}`;
    const started = await cli('start', '--model', 'openai:gpt-4.1-mini', '--id', turnId, '--output-schema', JSON.stringify(TRIP_SCHEMA), 'Plan', 'a', 'trip.');
    expect(started.code, started.stderr).toBe(0);
    expect(await client.turnOutput(turnId, Trip)).toEqual({ city: 'Lisbon', days: 4 });
    const shown = await cli('show', turnId);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(`typed output:\n${JSON.stringify({ city: 'Lisbon', days: 4 }, null, 2)}`);
    expect(nativeFormat('openai', fake.requests[0])).toEqual(expectedFormat('openai'));
  });
});
