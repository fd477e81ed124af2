/**
 * Provider faults and model misbehaviour, through the real SDKs and the strict fake provider
 * server: each is retried, or becomes an error result or a clear failure — never a stuck turn
 * and never an invalid history.
 */
import { ActivityFailure, WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { RetryState } from '@temporalio/common';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { agentTurn } from '../../workflows/index.js';
import type { ModelProvider } from '../../workflows/types/index.js';
import type { FakeProvider, ScriptedEntry } from '../fake-provider/server.js';
import { useFakeProviders } from '../support/fake-providers.js';
import { executionsOf, testTools } from '../support/test-tools.js';
import { startTurnpike, type TurnpikeHarness } from '../support/turnpike-harness.js';

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

function start(provider: ModelProvider, script: ScriptedEntry[], attempts = 4): Promise<WorkflowHandle<typeof agentTurn>> {
  fake.script(provider as FakeProvider, script);
  return turnpike.startTurn({
    model: { provider, model: provider === 'openai' ? 'gpt-4.1-mini' : 'claude-sonnet-4-5', maxTokens: 256 },
    text: 'Go.',
    // A 1s timeout so a hung request is retried quickly.
    modelCallOptions: { startToCloseTimeout: '1s', retry: { initialInterval: '50ms', backoffCoefficient: 1, maximumAttempts: attempts } },
  });
}

function statuses(provider: FakeProvider) {
  return fake.requests.filter((request) => request.provider === provider).map((request) => request.status);
}

describe.each(['openai', 'anthropic'] as const)('%s faults', (provider) => {
  it('retries a burst of 429s, a 500, a hung request, a reset connection and a truncated body, then completes', async () => {
    const handle = await start(provider, [
      { status: 429 },
      { status: 429 },
      { status: 500 },
      { delayMs: 3_000, text: 'too late' },
      { reset: true },
      { malformed: true },
      { text: 'Survived.' },
    ], 8);
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'completed', text: 'Survived.' });
    expect(statuses(provider)).toEqual([429, 429, 500, expect.anything(), 'reset', 200, 200]);
  });

  it('retries an empty response, and fails the turn clearly if the model keeps answering nothing', async () => {
    const recovered = await start(provider, [{ text: '' }, { text: 'Here now.' }]);
    expect((await recovered.result()).text).toBe('Here now.');

    fake.reset();
    const empty = await start(provider, [{ text: '' }, { text: '' }], 2);
    const error = await empty.result().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(WorkflowFailedError);
    expect(String(((error as WorkflowFailedError).cause?.cause as Error | undefined)?.message)).toMatch(`${provider}: the model returned an empty response`);
  });
});

/**
 * What a rate limit's `retry-after` may ask for, and what each must still do: retried under the
 * turn's policy. The policy backs off 50 ms each time and waits at most 200 ms; none of these
 * values may end the turn early (a zero delay once did) or park it for an hour.
 */
const retryAfterCases = [
  ['retry-after: 0', { 'retry-after': '0' }],
  ['retry-after-ms: 0.5', { 'retry-after-ms': '0.5' }],
  ['retry-after: a past HTTP date', { 'retry-after': 'Mon, 01 Jan 2024 00:00:00 GMT' }],
  // Under the 200 ms maximum interval this waits 200 ms, not a day.
  ['retry-after: a day', { 'retry-after': '86400' }],
] as const;

function startRateLimited(provider: ModelProvider, script: ScriptedEntry[]): Promise<WorkflowHandle<typeof agentTurn>> {
  fake.script(provider as FakeProvider, script);
  return turnpike.startTurn({
    model: { provider, model: provider === 'openai' ? 'gpt-4.1-mini' : 'claude-sonnet-4-5', maxTokens: 256 },
    text: 'Go.',
    modelCallOptions: {
      startToCloseTimeout: '5s',
      retry: { initialInterval: '50ms', backoffCoefficient: 1, maximumInterval: '200ms', maximumAttempts: 3 },
    },
  });
}

describe.each(['openai', 'anthropic'] as const)('%s rate limits', (provider) => {
  describe.each(retryAfterCases)('429 with %s', (_, headers) => {
    it('is retried and the turn completes', async () => {
      const handle = await startRateLimited(provider, [{ status: 429, headers }, { status: 429, headers }, { text: 'Through.' }]);
      const result = await handle.result();
      expect(result).toMatchObject({ status: 'completed', text: 'Through.' });
      expect(statuses(provider)).toEqual([429, 429, 200]);
    });

    it('uses every attempt the policy allows before the turn fails', async () => {
      const rateLimited = { status: 429, headers };
      const handle = await startRateLimited(provider, [rateLimited, rateLimited, rateLimited]);
      const error = await handle.result().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(WorkflowFailedError);
      const activityFailure = (error as WorkflowFailedError).cause;
      expect(activityFailure).toBeInstanceOf(ActivityFailure);
      expect((activityFailure as ActivityFailure).retryState).toBe(RetryState.MAXIMUM_ATTEMPTS_REACHED);
      expect(statuses(provider)).toEqual([429, 429, 429]);
    });
  });
});

describe('model misbehaviour', () => {
  it('answers a repeated tool call id with an error result, runs it once, and the next request is valid', async () => {
    const handle = await start('anthropic', [
      {
        toolCalls: [
          { id: 'toolu_same', name: 'record_action', input: { action: 'first' } },
          { id: 'toolu_same', name: 'record_action', input: { action: 'second' } },
        ],
      },
      { text: 'Done.' },
    ]);
    const result = await handle.result();
    expect(result.toolCalls.map((call) => [call.toolCallId, call.outcome])).toEqual([
      ['toolu_same', 'executed'],
      ['toolu_same_dup2', 'error'],
    ]);
    expect(String(result.toolCalls[1].output)).toMatch(/repeated an earlier tool call id/);
    expect(executionsOf(handle.workflowId).map((execution) => execution.input)).toEqual([{ action: 'first' }]);
    const requests = fake.requests.filter((request) => request.provider === 'anthropic');
    expect(requests).toHaveLength(2);
    expect(requests.flatMap((request) => request.errors)).toEqual([]);
  });

  it('renames a tool call id the model reuses from an earlier step', async () => {
    const handle = await start('openai', [
      { toolCalls: [{ id: 'call_1', name: 'record_action', input: { action: 'a' } }] },
      { toolCalls: [{ id: 'call_1', name: 'record_action', input: { action: 'b' } }] },
      { text: 'ok' },
    ]);
    const result = await handle.result();
    expect(result.toolCalls.map((call) => [call.toolCallId, call.outcome])).toEqual([
      ['call_1', 'executed'],
      ['call_1_dup2', 'error'],
    ]);
    expect(fake.requests.flatMap((request) => request.errors)).toEqual([]);
  });
});
