/**
 * Whole turns on the real dev server with streaming and Anthropic prompt caching on (both by
 * default), through the real SDKs against the strict fake: a 20-step tool loop reads the prefix
 * each step wrote from the cache at every later step, a `pause_turn` continues its step, and the
 * `stream` / `promptCaching` options turn either off (or fail the turn at once when malformed);
 * a `turnEvents` subscriber gets a step's first text delta while the provider still holds the rest.
 */
import { ApplicationFailure, defaultPayloadConverter, WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CompressionCodec } from '../../codec/payload-codec.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import type { TurnEventRecord } from '../../workflows/types/turn-events.js';
import { INVALID_TURN_INPUT } from '../../workflows/messages/rejection-types.js';
import type { ModelSettings, ModelStepResult, Usage } from '../../workflows/types/index.js';
import { useFakeProviders } from '../support/fake-providers.js';
import { testTools } from '../support/test-tools.js';
import { startTurnpike, type TurnpikeHarness } from '../support/turnpike-harness.js';

let fake: Awaited<ReturnType<typeof useFakeProviders>>;
let turnpike: TurnpikeHarness;
let client: TurnpikeClient;

beforeAll(async () => {
  fake = await useFakeProviders();
  turnpike = await startTurnpike({ tools: testTools });
  client = new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue });
});

afterAll(async () => {
  await turnpike?.stop();
  await fake?.restore();
});

beforeEach(() => fake.reset());

/** Long enough (well over the 1,024-token minimum by the fake's count) to be cached. */
const longSystem = `You are a careful operations agent. ${'Record every action you take and explain it to the operator in plain words. '.repeat(60)}`;

/** The result of every model step of a turn, in order, decoded from the turn's workflow history. */
async function modelSteps(handle: WorkflowHandle): Promise<ModelStepResult[]> {
  const history = await handle.fetchHistory();
  const scheduled = new Map<string, string>();
  const codec = new CompressionCodec();
  const steps: ModelStepResult[] = [];
  for (const event of history.events ?? []) {
    const attributes = event.activityTaskScheduledEventAttributes;
    if (attributes) scheduled.set(String(event.eventId), attributes.activityType?.name ?? '');
    const completed = event.activityTaskCompletedEventAttributes;
    if (completed && scheduled.get(String(completed.scheduledEventId)) === 'callModel') {
      const [payload] = await codec.decode(completed.result!.payloads!);
      steps.push(defaultPayloadConverter.fromPayload<ModelStepResult>(payload!));
    }
  }
  return steps;
}

describe('an Anthropic turn with streaming and prompt caching', () => {
  it('reports cache reads on steps 2 to 20 of a 20-step tool loop, each the whole prompt of the step before', async () => {
    for (let step = 1; step < 20; step++) fake.script('anthropic', [{ text: `Step ${step}.`, toolCalls: [{ name: 'record_action', input: { action: `audit-${step}` } }] }]);
    fake.script('anthropic', [{ text: 'All 19 actions are recorded.' }]);

    const handle = await turnpike.startTurn({
      model: { provider: 'anthropic', model: 'claude-sonnet-4-6', maxTokens: 512 },
      system: longSystem,
      text: 'Audit the fleet, one action at a time.',
      tools: ['record_action'],
      maxSteps: 20,
    });
    const result = await handle.result();

    expect(result).toMatchObject({ status: 'completed', steps: 20, text: 'All 19 actions are recorded.' });
    expect(fake.requests.map((request) => request.errors)).toEqual(Array.from({ length: 20 }, () => []));
    expect(fake.requests.every((request) => request.body.stream === true && request.stream === 'complete')).toBe(true);
    const usages: Usage[] = (await modelSteps(handle)).map((step) => step.usage);
    expect(usages).toHaveLength(20);
    expect(usages[0]!.cachedInputTokens).toBe(0);
    for (let step = 2; step <= 20; step++) {
      expect(usages[step - 1]!.cachedInputTokens, `step ${step}`).toBe(usages[step - 2]!.inputTokens);
    }
    expect(result.usage.cachedInputTokens).toBe(usages.reduce((sum, usage) => sum + usage.cachedInputTokens!, 0));
  });

  it('continues a step the API paused with pause_turn, within the same model call', async () => {
    fake.script('anthropic', [{ text: 'Looking through the archive.', finishReason: 'pause_turn' }, { text: 'The archive holds 3 audits.' }]);

    const handle = await turnpike.startTurn({ model: { provider: 'anthropic', model: 'claude-sonnet-4-6', maxTokens: 512 }, text: 'How many audits are archived?' });
    const result = await handle.result();

    expect(result).toMatchObject({ status: 'completed', steps: 1 });
    expect(result.text).toContain('The archive holds 3 audits.');
    expect(result.messages.at(-1)).toEqual({
      role: 'assistant',
      content: [
        { type: 'text', text: 'Looking through the archive.' },
        { type: 'text', text: 'The archive holds 3 audits.' },
      ],
    });
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests.map((request) => request.errors)).toEqual([[], []]);
    expect(fake.requests[1]!.body.messages.at(-1)).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'Looking through the archive.' }] });
    expect(await modelSteps(handle)).toHaveLength(1);
  });
});

describe('the stream and promptCaching model options', () => {
  it('run turns without streaming and without cache breakpoints when the turn says so', async () => {
    fake.script('openai', [{ toolCalls: [{ name: 'record_action', input: { action: 'plain' } }] }, { text: 'Done without streaming.' }]);
    fake.script('anthropic', [{ text: 'Done without caching.' }]);

    const plain = await turnpike.startTurn({ model: { provider: 'openai', model: 'gpt-4.1-mini', stream: false }, text: 'Record a plain action.', tools: ['record_action'] });
    const uncached = await turnpike.startTurn({ model: { provider: 'anthropic', model: 'claude-sonnet-4-6', promptCaching: false }, system: longSystem, text: 'Say done.' });

    expect(await plain.result()).toMatchObject({ status: 'completed', text: 'Done without streaming.' });
    expect(await uncached.result()).toMatchObject({ status: 'completed', text: 'Done without caching.', usage: { cachedInputTokens: 0 } });
    const openai = fake.requests.filter((request) => request.provider === 'openai');
    expect(openai.map((request) => [request.body.stream, request.stream, request.errors])).toEqual([
      [undefined, undefined, []],
      [undefined, undefined, []],
    ]);
    const anthropic = fake.requests.find((request) => request.provider === 'anthropic')!;
    expect(anthropic.errors).toEqual([]);
    expect(anthropic.body.stream).toBe(true);
    expect(JSON.stringify(anthropic.body)).not.toContain('cache_control');
  });

  it.each([
    [{ provider: 'openai', model: 'gpt-4.1-mini', stream: 'no' }, 'model.stream must be true or false'],
    [{ provider: 'openai', model: 'gpt-4.1-mini', promptCaching: true }, 'model.promptCaching is an Anthropic option'],
  ])('fails a turn whose options are malformed at once, before any model call (%j)', async (model, message) => {
    const handle = await turnpike.startTurn({ model: model as unknown as ModelSettings, text: 'Hi' });

    const error = await handle.result().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(WorkflowFailedError);
    const cause = (error as WorkflowFailedError).cause;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect((cause as ApplicationFailure).type).toBe(INVALID_TURN_INPUT);
    expect(cause!.message).toContain(message);
    expect(fake.requests).toEqual([]);
  });
});

describe('a subscriber of a streaming turn', () => {
  // Where each fake holds its stream: after the opening events and the first word of text
  // (OpenAI: the role chunk, "The "; Anthropic: message_start, ping, content_block_start, "The ").
  it.each([
    ['openai', 'gpt-4.1-mini', 2],
    ['anthropic', 'claude-sonnet-4-6', 4],
  ] as const)('receives the first text delta of a step while its model activity is still running (%s)', async (provider, model, pauseAfterEvents) => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const text = 'The parcel left the depot at nine and arrives tomorrow.';
    fake.script(provider, [{ text, stream: { pauseAfterEvents, resume: released } }]);

    const handle = await turnpike.startTurn({ model: { provider, model, maxTokens: 256 }, text: 'Where is my parcel?' });
    const iterator = client.turnEvents(handle.workflowId)[Symbol.asyncIterator]();
    const first = await iterator.next();

    // The fake still holds the rest of the reply, so the model activity cannot have completed.
    expect(first.done).toBe(false);
    expect(first.value!.event).toEqual({ type: 'text-delta', text: 'The ', step: 1, attempt: 1 });
    const description = await handle.describe();
    expect(description.status.name).toBe('RUNNING');
    expect(description.raw.pendingActivities?.map((activity) => activity.activityType?.name)).toEqual(['callModel']);
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]!.stream).toBeUndefined();
    expect(await modelSteps(handle)).toEqual([]);

    release();
    const seen: TurnEventRecord[] = [first.value!];
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) seen.push(next.value);
    const result = await handle.result();

    expect(result).toMatchObject({ status: 'completed', text });
    expect(fake.requests.map((request) => [request.errors, request.stream])).toEqual([[[], 'complete']]);
    const streamed = seen.map(({ event }) => (event.type === 'text-delta' ? event.text : '')).join('');
    expect(streamed).toBe(text);
    expect(seen.map(({ offset }) => offset)).toEqual(seen.map((_, index) => index));
    expect(seen.at(-1)!.event).toMatchObject({ type: 'turn-finished', status: 'completed', text });
  });
});
