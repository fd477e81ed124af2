/**
 * A provider's error that echoes a credential leaves it out of the turn's failure, its whole
 * history (`ACTIVITY_TASK_FAILED`, `WORKFLOW_EXECUTION_FAILED`) and the worker's log, for each
 * provider family, on the real dev server against the strict fakes returning the real error
 * bodies: OpenAI's 401, which names a short key whole (Chat Completions and the Responses API);
 * Gemini's 403 for a suspended key through `@ai-sdk/google`, which names the key in its message
 * and details (a key the worker never sees: the model object holds it); and for Anthropic, whose
 * own errors name no key, the refusal of a gateway in front of it that repeats the key it was sent.
 */
import { capturedLogText } from '../support/captured-log.js';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { WorkflowFailedError } from '@temporalio/client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ModelSettings } from '../../workflows/types/index.js';
import { startFakeGemini, type FakeGemini } from '../fake-provider/gemini.js';
import { TEST_KEYS, useFakeProviders } from '../support/fake-providers.js';
import { historyText } from '../support/history-text.js';
import { testTools } from '../support/test-tools.js';
import { startTurnpike, type TurnpikeHarness } from '../support/turnpike-harness.js';

const GEMINI_KEY = 'AIzaSyD-turnpike-suspended-key-0042';
/** OpenAI's 401 names a key of 12 characters or fewer whole. */
const SHORT_OPENAI_KEY = 'sk-w0rk3r-12';
const fastRetries = { retry: { initialInterval: '50ms', backoffCoefficient: 1, maximumAttempts: 3 } };

let fake: Awaited<ReturnType<typeof useFakeProviders>>;
let gemini: FakeGemini;
let turnpike: TurnpikeHarness;

beforeAll(async () => {
  fake = await useFakeProviders();
  gemini = await startFakeGemini(GEMINI_KEY);
  const google = createGoogleGenerativeAI({ baseURL: gemini.baseURL, apiKey: GEMINI_KEY });
  turnpike = await startTurnpike({ tools: testTools, models: { gemini: google('gemini-2.5-flash') } });
});

afterAll(async () => {
  await turnpike?.stop();
  await gemini?.close();
  await fake?.restore();
});

beforeEach(() => {
  fake.reset();
  gemini.requests.length = 0;
});

/** Runs a turn that fails on its first step: the failure's messages, outermost first, and the whole history as text. */
async function failedTurn(model: ModelSettings): Promise<{ message: string; history: string }> {
  const handle = await turnpike.startTurn({ model, text: 'Hello', modelCallOptions: fastRetries });
  const error = await handle.result().catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(WorkflowFailedError);
  const messages: string[] = [];
  for (let cause: unknown = error; cause instanceof Error; cause = (cause as Error & { cause?: unknown }).cause) messages.push(cause.message);
  return { message: messages.join(' <- '), history: historyText(await handle.fetchHistory()) };
}

/** The secret is in neither the history nor the worker's log, which both hold the redacted failure. */
function expectRedacted(secret: string, history: string): void {
  expect(history).toContain('[redacted]');
  expect(history).not.toContain(secret);
  const log = capturedLogText();
  expect(log).toContain('Activity failed');
  expect(log).not.toContain(secret);
}

describe.each(['openai', 'openai-responses'] as const)("%s: OpenAI's 401 naming a short key whole", (provider) => {
  it('fails the turn with the key redacted from the failure, the history and the log', async () => {
    const key = process.env.OPENAI_API_KEY;
    process.env.OPENAI_API_KEY = SHORT_OPENAI_KEY;
    try {
      fake.script(provider, [{ status: 401 }]);
      const { message, history } = await failedTurn({ provider, model: 'gpt-4.1-mini' });

      expect(message).toContain('openai: 401 Unauthorized — Incorrect API key provided: [redacted]. You can find your API key at https://platform.openai.com/account/api-keys.');
      expect(fake.requests.map((request) => [request.status, request.headers.authorization])).toEqual([[401, `Bearer ${SHORT_OPENAI_KEY}`]]);
      expectRedacted(SHORT_OPENAI_KEY, history);
    } finally {
      process.env.OPENAI_API_KEY = key;
    }
  });
});

describe('anthropic: a gateway in front of the API repeating the key it refused', () => {
  it("fails the turn with the worker's key redacted from the failure, the history and the log", async () => {
    fake.script('anthropic', [{ status: 401, message: `invalid x-api-key ${TEST_KEYS.anthropic}` }]);
    const { message, history } = await failedTurn({ provider: 'anthropic', model: 'claude-sonnet-4-6', maxTokens: 512 });

    expect(message).toContain('anthropic: 401 authentication_error — invalid x-api-key [redacted]');
    expectRedacted(TEST_KEYS.anthropic, history);
  });
});

describe("ai-sdk (@ai-sdk/google): Gemini's 403 for a suspended key", () => {
  it('fails the turn with the key redacted from the failure, the history and the log, though the worker never knew it', async () => {
    gemini.script([{ status: 403, suspendedKey: true }]);
    const { message, history } = await failedTurn({ provider: 'ai-sdk', model: 'gemini' });

    expect(message).toContain("ai-sdk gemini (google.generative-ai): 403 Forbidden — Permission denied: Consumer 'api_key:[redacted]' has been suspended.");
    expect(gemini.requests.map((request) => [request.status, request.headers['x-goog-api-key']])).toEqual([[403, GEMINI_KEY]]);
    expectRedacted(GEMINI_KEY, history);
  });
});
