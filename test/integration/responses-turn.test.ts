/**
 * Whole turns on OpenAI's Responses API (provider `openai-responses`) and with images, through the
 * real SDKs, talking HTTP to the strict fake providers, on the real dev server: a reasoning
 * model's encrypted reasoning survives a parked approval and a worker restart (the fake refuses a
 * continuation without it), and an image reaches each provider in its wire format while an
 * oversized one is refused before any model is called.
 */
import { ApplicationFailure, WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MAX_INLINE_PART_BYTES } from '../../workflows/turn/binary-parts.js';
import { approveToolCallUpdate } from '../../workflows/messages/definitions.js';
import { INVALID_TURN_INPUT } from '../../workflows/messages/rejection-types.js';
import type { AssistantMessage, ModelSettings, ReasoningPart, UserContentPart } from '../../workflows/types/index.js';
import type { FakeProvider } from '../fake-provider/server.js';
import { useFakeProviders } from '../support/fake-providers.js';
import { executionsOf, testTools } from '../support/test-tools.js';
import { startTurnpike, waitForPending, type TurnpikeHarness } from '../support/turnpike-harness.js';

let fake: Awaited<ReturnType<typeof useFakeProviders>>;
let turnpike: TurnpikeHarness;

beforeAll(async () => {
  fake = await useFakeProviders();
  turnpike = await startTurnpike({ tools: testTools });
});

afterAll(async () => {
  await turnpike?.stop();
  await fake?.restore();
});

beforeEach(() => fake.reset());

const fastRetries = { retry: { initialInterval: '50ms', backoffCoefficient: 1, maximumAttempts: 3 } };

function requestsOf(provider: FakeProvider) {
  return fake.requests.filter((request) => request.provider === provider);
}

async function activitiesScheduled(handle: WorkflowHandle): Promise<string[]> {
  const history = await handle.fetchHistory();
  return history.events!.flatMap((event) => {
    const name = event.activityTaskScheduledEventAttributes?.activityType?.name;
    return name ? [name] : [];
  });
}

async function invalidInputFailure(handle: WorkflowHandle): Promise<string> {
  const error = await handle.result().then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(WorkflowFailedError);
  const cause = (error as WorkflowFailedError).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  expect((cause as ApplicationFailure).type).toBe(INVALID_TURN_INPUT);
  return cause!.message;
}

describe('OpenAI Responses API', () => {
  const reasoningModel: ModelSettings = { provider: 'openai-responses', model: 'o4-mini', maxTokens: 4000, reasoningEffort: 'medium', reasoningSummary: 'auto' };

  it('carries encrypted reasoning across a parked approval and a worker restart, with store: false, and the continuation is accepted', async () => {
    fake.script('openai-responses', [
      {
        reasoning: [{ summary: ['prod-db needs one guarded action; that requires approval.'] }],
        toolCalls: [{ name: 'guarded_action', input: { target: 'prod-db', count: 1 } }],
        usage: { inputTokens: 40, outputTokens: 30, reasoningTokens: 20 },
      },
      { reasoning: [{ summary: ['It ran.'] }], text: 'The guarded action on prod-db ran.', usage: { inputTokens: 60, outputTokens: 8, cachedInputTokens: 32, reasoningTokens: 4 } },
    ]);
    const handle = await turnpike.startTurn({ model: reasoningModel, text: 'Run the guarded action on prod-db.', modelCallOptions: fastRetries });
    const [pending] = await waitForPending(handle, 1);

    // The worker that made the first call goes away; a new one resumes the turn from history.
    await turnpike.stopWorker();
    await turnpike.startWorker();
    await handle.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: pending.approvalId!, approved: true, approver: 'alice' }] });
    const result = await handle.result();

    expect(result).toMatchObject({ status: 'completed', steps: 2, text: 'The guarded action on prod-db ran.' });
    // costUsd from the built-in price table (o4-mini, through openai's prices).
    expect(result.usage).toEqual({ inputTokens: 100, outputTokens: 38, cachedInputTokens: 32, reasoningTokens: 24, costUsd: 0.0002508 });
    expect(executionsOf(handle.workflowId).map((execution) => execution.toolName)).toEqual(['guarded_action']);
    const [reasoning, call] = (result.messages[0] as AssistantMessage).content as [ReasoningPart, { type: string; toolCallId: string }];
    expect(reasoning).toEqual({
      type: 'reasoning',
      provider: 'openai',
      text: 'prod-db needs one guarded action; that requires approval.',
      itemId: expect.stringMatching(/^rs_/),
      encryptedContent: expect.any(String),
      summary: ['prod-db needs one guarded action; that requires approval.'],
    });
    expect(call.type).toBe('tool-call');

    // The fake refuses a store: false continuation whose function call lost its reasoning item,
    // or whose encrypted content changed: both requests were accepted.
    const requests = requestsOf('openai-responses');
    expect(requests.map((request) => request.status)).toEqual([200, 200]);
    expect(requests.flatMap((request) => request.errors)).toEqual([]);
    expect(requests[0].body).toMatchObject({ store: false, include: ['reasoning.encrypted_content'], max_output_tokens: 4000, reasoning: { effort: 'medium', summary: 'auto' } });
    expect(requests[1].body.input.slice(1, 4)).toEqual([
      { type: 'reasoning', id: reasoning.itemId, summary: [{ type: 'summary_text', text: reasoning.text }], encrypted_content: reasoning.encryptedContent },
      { type: 'function_call', call_id: call.toolCallId, name: 'guarded_action', arguments: '{"target":"prod-db","count":1}' },
      { type: 'function_call_output', call_id: call.toolCallId, output: expect.any(String) },
    ]);
    expect(requests.every((request) => !('max_tokens' in request.body))).toBe(true);

    // The next turn takes that history to Anthropic: the OpenAI reasoning is left out, and the fake accepts it.
    fake.script('anthropic', [{ text: 'It ran once, approved by alice.' }]);
    const next = await turnpike.startTurn({
      model: { provider: 'anthropic', model: 'claude-sonnet-4-6', maxTokens: 512 },
      messages: [{ role: 'user', content: 'Run the guarded action on prod-db.' }, ...result.messages, { role: 'user', content: 'What happened?' }],
      modelCallOptions: fastRetries,
    });
    expect(await next.result()).toMatchObject({ status: 'completed', text: 'It ran once, approved by alice.' });
    const [anthropicRequest] = requestsOf('anthropic');
    expect(anthropicRequest.errors).toEqual([]);
    const sent = JSON.stringify(anthropicRequest.body);
    expect(sent).toContain('guarded_action');
    expect(sent).not.toContain(reasoning.encryptedContent);
    expect(sent).not.toContain('requires approval');
  });

  it('ends the turn as max-tokens when the response is incomplete for max_output_tokens', async () => {
    fake.script('openai-responses', [{ text: 'The report so f', finishReason: 'max_output_tokens' }]);
    const handle = await turnpike.startTurn({ model: { provider: 'openai-responses', model: 'gpt-4.1-mini', maxTokens: 16 }, text: 'Write the report.', modelCallOptions: fastRetries });
    expect(await handle.result()).toMatchObject({ status: 'max-tokens', text: 'The report so f', cutOff: { step: 1, finishReason: 'length', providerFinishReason: 'max_output_tokens' } });
    expect(requestsOf('openai-responses')[0].errors).toEqual([]);
  });

  it('fails a turn with a malformed Responses option at once, naming the field, before any model call', async () => {
    const handle = await turnpike.startTurn({ model: { provider: 'openai-responses', model: 'o4-mini', maxTokens: 8 }, text: 'Hi', modelCallOptions: fastRetries });
    expect(await invalidInputFailure(handle)).toContain('agentTurn input.model.maxTokens must be an integer of at least 16');
    expect(fake.requests).toEqual([]);
    expect(await activitiesScheduled(handle)).toEqual([]);
  });
});

describe('images in user messages', () => {
  /** A 1×1 PNG. */
  const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
  const content: UserContentPart[] = [
    { type: 'text', text: 'What is on this receipt?' },
    { type: 'image', source: { type: 'base64', mediaType: 'image/png', data: png } },
  ];
  const models: Record<FakeProvider, ModelSettings> = {
    openai: { provider: 'openai', model: 'gpt-4.1-mini' },
    'openai-responses': { provider: 'openai-responses', model: 'gpt-4.1-mini' },
    // Without the default prompt-caching breakpoint, which would otherwise sit on the image block.
    anthropic: { provider: 'anthropic', model: 'claude-sonnet-4-6', promptCaching: false },
  };
  /** Where each API carries the image in the first request. */
  const wireImage: Record<FakeProvider, (body: { messages?: Array<{ content: unknown[] }>; input?: Array<{ content: unknown[] }> }) => unknown> = {
    openai: (body) => body.messages![0].content[1],
    'openai-responses': (body) => body.input![0].content[1],
    anthropic: (body) => body.messages![0].content[1],
  };
  const expected: Record<FakeProvider, unknown> = {
    openai: { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
    'openai-responses': { type: 'input_image', detail: 'auto', image_url: `data:image/png;base64,${png}` },
    anthropic: { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } },
  };

  it.each(['openai', 'openai-responses', 'anthropic'] as const)('sends an image to %s in its wire format, and the turn keeps it in its history', async (provider) => {
    fake.script(provider, [{ text: 'A coffee for $4.' }]);
    const handle = await turnpike.startTurn({ model: models[provider], messages: [{ role: 'user', content }], modelCallOptions: fastRetries });
    expect(await handle.result()).toMatchObject({ status: 'completed', text: 'A coffee for $4.' });
    const [request] = requestsOf(provider);
    expect(request.errors).toEqual([]);
    expect(wireImage[provider](request.body)).toEqual(expected[provider]);
  });

  it.each(['openai', 'openai-responses', 'anthropic'] as const)('refuses an oversized image for %s before the model is called, naming the part', async (provider) => {
    const data = 'A'.repeat(Math.ceil(((MAX_INLINE_PART_BYTES + 16) * 4) / 3 / 4) * 4);
    const handle = await turnpike.startTurn({
      model: models[provider],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Look.' }, { type: 'image', source: { type: 'base64', mediaType: 'image/png', data } }] }],
      modelCallOptions: fastRetries,
    });
    const message = await invalidInputFailure(handle);
    expect(message).toContain('agentTurn input.messages[0].content[1] is');
    expect(message).toContain(`an inline image may be at most ${MAX_INLINE_PART_BYTES} bytes`);
    expect(fake.requests).toEqual([]);
    expect(await activitiesScheduled(handle)).toEqual([]);
  });
});
