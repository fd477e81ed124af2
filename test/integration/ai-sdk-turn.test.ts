/**
 * Turns on provider `ai-sdk`: the real `@ai-sdk/google` registered on the worker by name,
 * talking HTTP to a strict fake of the Gemini API (test/fake-provider/gemini.ts), on the real dev
 * server. Thought signatures survive a park unchanged, faults are retried or fail the turn as on
 * the native providers, and neither the key nor the base URL enters workflow history.
 */
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { approveToolCallUpdate } from '../../workflows/messages/definitions.js';
import type { agentTurn } from '../../workflows/index.js';
import type { AgentTurnInput } from '../../workflows/types/index.js';
import { startFakeGemini, type FakeGemini } from '../fake-provider/gemini.js';
import { executionsOf, testTools } from '../support/test-tools.js';
import { startTurnpike, waitForPending, type TurnpikeHarness } from '../support/turnpike-harness.js';

const GEMINI_KEY = 'gemini-test-SECRET-5be1d0';

let gemini: FakeGemini;
let turnpike: TurnpikeHarness;

beforeAll(async () => {
  gemini = await startFakeGemini(GEMINI_KEY);
  const google = createGoogleGenerativeAI({ baseURL: gemini.baseURL, apiKey: GEMINI_KEY });
  turnpike = await startTurnpike({ tools: testTools, models: { gemini: google('gemini-2.5-flash'), flash3: google('gemini-3-flash-preview') } });
});

afterAll(async () => {
  await turnpike?.stop();
  await gemini?.close();
});

beforeEach(() => {
  gemini.requests.length = 0;
});

const fastRetries = { retry: { initialInterval: '50ms', backoffCoefficient: 1, maximumAttempts: 3 } };
const thinking = { google: { thinkingConfig: { includeThoughts: true, thinkingBudget: 1024 } } };

function startGeminiTurn(text: string, model: Partial<AgentTurnInput['model']> = {}): Promise<WorkflowHandle<typeof agentTurn>> {
  return turnpike.startTurn({ model: { provider: 'ai-sdk', model: 'gemini', ...model }, system: 'You are a careful operations agent.', text, modelCallOptions: fastRetries });
}

async function failureOf(handle: WorkflowHandle): Promise<{ message: string; types: string[] }> {
  const error = await handle.result().then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(WorkflowFailedError);
  const messages: string[] = [];
  const types: string[] = [];
  for (let cause: unknown = error; cause instanceof Error; cause = (cause as Error & { cause?: unknown }).cause) {
    messages.push(cause.message);
    const type = (cause as { type?: unknown }).type;
    if (typeof type === 'string') types.push(type);
  }
  return { message: messages.join(' <- '), types };
}

describe.each([true, false])('ai-sdk on @ai-sdk/google (stream: %s)', (stream) => {
  it('parks on an approval, completes once approved, and sends the thought signatures back unchanged', async () => {
    gemini.script([
      { thinking: 'The operator wants prod-db touched; that needs approval.', text: 'Asking for approval.', toolCalls: [{ name: 'guarded_action', args: { target: 'prod-db', count: 1 } }] },
      { thinking: 'It ran.', text: 'prod-db is done.' },
    ]);
    const handle = await startGeminiTurn('Do the maintenance on prod-db.', { providerOptions: thinking, stream });
    const [pending] = await waitForPending(handle, 1);
    expect(pending).toMatchObject({ kind: 'approval', toolName: 'guarded_action', input: { target: 'prod-db', count: 1 } });
    await handle.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: pending.approvalId!, approved: true, approver: 'alice' }] });

    const result = await handle.result();
    expect(result).toMatchObject({ status: 'completed', steps: 2, text: 'prod-db is done.' });
    expect(result.usage).toMatchObject({ inputTokens: 58, reasoningTokens: 40 });
    expect(executionsOf(handle.workflowId).map((execution) => execution.toolName)).toEqual(['guarded_action']);

    expect(gemini.requests.map((request) => [request.stream, request.status, request.errors])).toEqual([
      [stream, 200, []],
      [stream, 200, []],
    ]);
    // The call Gemini signed comes back on the next request with its signature unchanged, after
    // the thought that preceded it, and answered by a functionResponse.
    const issued = gemini.requests[0].reply!.flatMap((chunk) => chunk.candidates[0].content.parts);
    const signedCall = issued.find((part) => part.functionCall);
    expect(signedCall.thoughtSignature).toEqual(expect.any(String));
    const [user, model, toolTurn] = gemini.requests[1].body.contents;
    expect(user.role).toBe('user');
    expect(model.role).toBe('model');
    expect(model.parts).toContainEqual({
      functionCall: expect.objectContaining({ name: 'guarded_action', args: { target: 'prod-db', count: 1 } }),
      thoughtSignature: signedCall.thoughtSignature,
    });
    expect(model.parts).toContainEqual(expect.objectContaining({ text: 'The operator wants prod-db touched; that needs approval.', thought: true }));
    expect(toolTurn.parts[0].functionResponse).toMatchObject({ name: 'guarded_action' });
    expect(JSON.stringify(gemini.requests[1].body.contents)).toContain('prod-db');

    // The turn's history holds the signature (that is how it survives the park), never the key or the URL.
    const history = JSON.stringify(await handle.fetchHistory());
    expect(history).not.toContain(GEMINI_KEY);
    expect(history).not.toContain(gemini.baseURL);
  });
});

describe('ai-sdk faults', () => {
  it('retries a 429 (with retry-after), a 500 and a reset connection, then completes', async () => {
    gemini.script([{ status: 429, headers: { 'retry-after': '1' }, message: 'You exceeded your current quota, please check your plan.' }, { status: 500 }, { reset: true }, { text: 'Fine now.' }]);
    const handle = await turnpike.startTurn({
      model: { provider: 'ai-sdk', model: 'gemini' },
      text: 'Hello',
      modelCallOptions: { retry: { initialInterval: '50ms', backoffCoefficient: 1, maximumAttempts: 5 } },
    });
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'completed', text: 'Fine now.' });
    expect(gemini.requests.map((request) => request.status)).toEqual([429, 500, 'reset', 200]);
  });

  it('waits what a 429 asks (retry-after, or Gemini RetryInfo) before trying again', async () => {
    gemini.script([{ status: 429, retryDelay: '1.5s' }, { text: 'After the wait.' }]);
    const handle = await turnpike.startTurn({ model: { provider: 'ai-sdk', model: 'gemini' }, text: 'Hello', modelCallOptions: fastRetries });
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'completed', text: 'After the wait.' });
    const activity = (await handle.fetchHistory()).events!.find((event) => event.activityTaskStartedEventAttributes?.attempt === 2);
    const failure = activity?.activityTaskStartedEventAttributes?.lastFailure?.applicationFailureInfo;
    expect(failure?.type).toBe('ProviderRetryableError');
    expect(Number(failure?.nextRetryDelay?.seconds ?? 0) * 1000 + (failure?.nextRetryDelay?.nanos ?? 0) / 1e6).toBe(1500);
  });

  it('fails the turn at once on a 403, naming the model and the status', async () => {
    gemini.script([{ status: 403, message: 'Method doesn\'t allow unregistered callers.' }]);
    const handle = await turnpike.startTurn({ model: { provider: 'ai-sdk', model: 'gemini' }, text: 'Hello', modelCallOptions: fastRetries });
    const { message, types } = await failureOf(handle);
    expect(message).toContain("ai-sdk gemini (google.generative-ai): 403 Forbidden — Method doesn't allow unregistered callers.");
    expect(types).toContain('ProviderAuthenticationError');
    expect(gemini.requests).toHaveLength(1);
  });

  it('fails the turn at once on a model name the worker does not have', async () => {
    const handle = await turnpike.startTurn({ model: { provider: 'ai-sdk', model: 'mistral' }, text: 'Hello', modelCallOptions: fastRetries });
    const { message, types } = await failureOf(handle);
    expect(message).toContain('ai-sdk: this worker has no model named "mistral"; it has gemini, flash3');
    expect(types).toContain('InvalidModelSettings');
    expect(gemini.requests).toHaveLength(0);
  });
});
