/**
 * Whole turns through the real OpenAI and Anthropic SDKs, talking HTTP to the strict fake
 * provider server, on the real dev server: every request the fake receives must be valid by
 * the real APIs' rules, provider faults are retried or fail the turn as designed, and no
 * secret ever enters workflow history.
 */
import { ApplicationFailure, WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { approveToolCallUpdate, submitToolResultUpdate, turnStateQuery } from '../../workflows/messages/definitions.js';
import type { agentTurn } from '../../workflows/index.js';
import { agentTurnStatusKey } from '../../workflows/context/search-attributes.js';
import { INVALID_TURN_INPUT } from '../../workflows/messages/rejection-types.js';
import type { AgentTurnInput, Message, ModelProvider, ToolMessage } from '../../workflows/types/index.js';
import type { FakeProvider } from '../fake-provider/server.js';
import { TEST_KEYS, useFakeProviders } from '../support/fake-providers.js';
import { historyText } from '../support/history-text.js';
import { executionsOf, testTools } from '../support/test-tools.js';
import { startTurnpike, waitForPending, type TurnpikeHarness } from '../support/turnpike-harness.js';

const SECRETS = TEST_KEYS;

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

function startProviderTurn(provider: ModelProvider, text: string, history: Message[] = []): Promise<WorkflowHandle<typeof agentTurn>> {
  return turnpike.startTurn({
    model: { provider, model: provider === 'openai' ? 'gpt-4.1-mini' : 'claude-sonnet-4-5', maxTokens: 512 },
    system: 'You are a careful operations agent.',
    ...(history.length > 0 ? { messages: [...history, { role: 'user', content: text }] } : { text }),
    modelCallOptions: fastRetries,
  });
}

function requestsOf(provider: FakeProvider) {
  return fake.requests.filter((request) => request.provider === provider);
}

async function failureOf(handle: WorkflowHandle): Promise<string> {
  const error = await handle.result().then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(WorkflowFailedError);
  // WorkflowFailedError -> ActivityFailure -> ApplicationFailure (the provider's message).
  let cause: unknown = error;
  const messages: string[] = [];
  while (cause instanceof Error) {
    messages.push(cause.message);
    cause = (cause as Error & { cause?: unknown }).cause;
  }
  return messages.join(' <- ');
}

describe.each(['openai', 'anthropic'] as const)('%s', (provider) => {
  it('runs a turn with server, approved, denied and client tools, and every request it sends is valid', async () => {
    fake.script(provider, [
      {
        text: 'Let me take care of that.',
        toolCalls: [
          { name: 'record_action', input: { action: 'audit' } },
          { name: 'guarded_action', input: { target: 'prod-db', count: 1 } },
          { name: 'guarded_action', input: { target: 'prod-cache', count: 2 } },
          { name: 'pick_colour', input: { options: ['red', 'blue'] } },
        ],
      },
      { text: 'All four calls are settled.' },
    ]);
    const handle = await startProviderTurn(provider, 'Do the maintenance.');
    const pending = await waitForPending(handle, 3);
    const [first, second] = pending.filter((call) => call.kind === 'approval');
    const client = pending.find((call) => call.kind === 'client-tool')!;
    await handle.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: first.approvalId!, approved: true, approver: 'alice' }] });
    await handle.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: second.approvalId!, approved: false, approver: 'bob', reason: 'cache is warm' }] });
    await handle.executeUpdate(submitToolResultUpdate, { args: [{ toolCallId: client.toolCallId, output: { colour: 'blue' } }] });

    const result = await handle.result();
    expect(result).toMatchObject({ status: 'completed', steps: 2, text: 'All four calls are settled.' });
    expect(result.toolCalls.map((call) => call.outcome)).toEqual(['executed', 'approved', 'denied', 'client']);
    expect(result.usage.inputTokens).toBeGreaterThan(0);
    expect(executionsOf(handle.workflowId).map((execution) => execution.toolName)).toEqual(['record_action', 'guarded_action']);

    const requests = requestsOf(provider);
    expect(requests).toHaveLength(2);
    expect(requests.flatMap((request) => request.errors)).toEqual([]);
    // The second request carries all four results, the denial's reason included.
    const secondBody = JSON.stringify(requests[1].body);
    expect(secondBody).toContain('cache is warm');
    expect(secondBody).toContain('blue');
  });

  it('retries a rate limit and completes the turn', async () => {
    fake.script(provider, [{ status: 429, headers: { 'retry-after': '1' } }, { text: 'Fine now.' }]);
    const handle = await startProviderTurn(provider, 'Hello');
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'completed', text: 'Fine now.' });
    expect(requestsOf(provider).map((request) => request.status)).toEqual([429, 200]);
  });

  it('fails the turn at once on a 401, naming the provider and the status', async () => {
    fake.script(provider, [{ status: 401, message: 'invalid x-api-key' }]);
    const handle = await startProviderTurn(provider, 'Hello');
    const message = await failureOf(handle);
    expect(message).toContain(`${provider}: 401`);
    expect(requestsOf(provider)).toHaveLength(1);
  });

  it('retries a storm of 500s up to the configured limit, then fails the turn', async () => {
    fake.script(provider, [{ status: 500 }, { status: 500 }, { status: 500 }, { text: 'never reached' }]);
    const handle = await startProviderTurn(provider, 'Hello');
    const message = await failureOf(handle);
    expect(message).toContain(`${provider}: 500`);
    expect(requestsOf(provider).map((request) => request.status)).toEqual([500, 500, 500]);
  });

  it('answers malformed tool-call arguments with an error result the model can correct', async () => {
    const badCall = provider === 'openai' ? { name: 'record_action', arguments: '{"action": "oops"' } : { name: 'record_action', input: { action: 42 } };
    fake.script(provider, [{ toolCalls: [badCall] }, { toolCalls: [{ name: 'record_action', input: { action: 'fixed' } }] }, { text: 'Corrected.' }]);
    const handle = await startProviderTurn(provider, 'Record something');
    const result = await handle.result();
    expect(result.toolCalls.map((call) => call.outcome)).toEqual(['error', 'executed']);
    expect(String(result.toolCalls[0].output)).toMatch(provider === 'openai' ? /not valid JSON/ : /Invalid input/);
    expect(requestsOf(provider).flatMap((request) => request.errors)).toEqual([]);
  });
});

describe('secrets', () => {
  it('never puts a provider key into workflow history', async () => {
    fake.script('openai', [{ toolCalls: [{ name: 'record_action', input: { action: 'x' } }] }, { text: 'ok' }]);
    fake.script('anthropic', [{ text: 'ok' }]);
    const turns = [await startProviderTurn('openai', 'one'), await startProviderTurn('anthropic', 'two')];
    for (const handle of turns) {
      await handle.result();
      const text = historyText(await handle.fetchHistory());
      expect(text).toContain('ok'); // the payloads were decoded: the model's answer is readable
      for (const secret of Object.values(SECRETS)) expect(text).not.toContain(secret);
    }
    // The fake saw the keys, so they were really in use.
    expect(fake.requests.some((request) => JSON.stringify(request.headers).includes(SECRETS.openai))).toBe(true);
  });
});

/** Every tool call in `messages` is answered by exactly one result, in the next tool message. */
function expectEveryCallAnsweredOnce(messages: Message[]): void {
  messages.forEach((message, index) => {
    if (message.role !== 'assistant') return;
    const callIds = message.content.flatMap((part) => (part.type === 'tool-call' ? [part.toolCallId] : []));
    if (callIds.length === 0) return;
    const next = messages[index + 1] as ToolMessage | undefined;
    expect(next?.role).toBe('tool');
    expect(next!.content.map((result) => result.toolCallId)).toEqual(callIds);
  });
}

/** What the turn set `AgentTurnStatus` to, upsert by upsert, from its history. */
async function upsertedStatuses(handle: WorkflowHandle): Promise<string[]> {
  const history = await handle.fetchHistory();
  return history.events!.flatMap((event) => {
    const field = event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.AgentTurnStatus;
    return field?.data ? [JSON.parse(Buffer.from(field.data).toString('utf8')) as string] : [];
  });
}

async function activitiesScheduled(handle: WorkflowHandle): Promise<string[]> {
  const history = await handle.fetchHistory();
  return history.events!.flatMap((event) => {
    const name = event.activityTaskScheduledEventAttributes?.activityType?.name;
    return name ? [name] : [];
  });
}

/** The providers' own values for a reply cut off by a limit, and for a refusal. */
const CUT_OFF_BY_LIMIT = { openai: ['length'], anthropic: ['max_tokens', 'model_context_window_exceeded'] } as const;
const REFUSED = { openai: ['content_filter'], anthropic: ['refusal'] } as const;

describe.each(['openai', 'anthropic'] as const)('%s: a reply that does not finish', (provider) => {
  it.each(CUT_OFF_BY_LIMIT[provider])('ends the turn as max-tokens on %s, with the partial text, in the result, turnState and AgentTurnStatus', async (wire) => {
    fake.script(provider, [
      { toolCalls: [{ name: 'record_action', input: { action: 'first' } }] },
      { text: 'Recorded. The summary of what happened is that the', finishReason: wire },
    ]);
    const handle = await startProviderTurn(provider, 'Record something, then summarise.');
    const result = await handle.result();

    expect(result).toMatchObject({
      status: 'max-tokens',
      steps: 2,
      text: 'Recorded. The summary of what happened is that the',
      cutOff: { step: 2, finishReason: 'length', providerFinishReason: wire },
    });
    expect(result.toolCalls.map((call) => call.outcome)).toEqual(['executed']);
    expect(result.messages.at(-1)).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'Recorded. The summary of what happened is that the' }] });
    expect(await handle.query(turnStateQuery)).toMatchObject({ status: 'max-tokens', pending: [] });
    expect((await handle.describe()).typedSearchAttributes.get(agentTurnStatusKey)).toBe('max-tokens');
    expect(await upsertedStatuses(handle)).toEqual(['running', 'max-tokens']);
    // Not retried, not continued: two model calls, each valid.
    expect(requestsOf(provider)).toHaveLength(2);
    expect(requestsOf(provider).flatMap((request) => request.errors)).toEqual([]);

    // Operators find it by status (visibility lags the workflow by a moment).
    const query = `WorkflowId="${handle.workflowId}" AND AgentTurnStatus IN ("max-tokens", "refused")`;
    const deadline = Date.now() + 20_000;
    let found = 0;
    while (found === 0 && Date.now() < deadline) {
      found = (await turnpike.client.workflow.count(query)).count;
      if (found === 0) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(found).toBe(1);
  });

  it('never runs or parks a tool call of a cut-off reply, answers each, and the history is valid input for the next turn', async () => {
    // The last call as each API returns one the limit cut: OpenAI's arguments stop mid-JSON;
    // Anthropic's input is the part written so far, which here even passes the tool's schema.
    const cutCall = provider === 'openai' ? { name: 'guarded_action', arguments: '{"target": "prod-db", "cou' } : { name: 'record_action', input: { action: 'dele' } };
    fake.script(provider, [
      {
        text: 'Starting the maintenance.',
        toolCalls: [{ name: 'record_action', input: { action: 'audit' } }, { name: 'pick_colour', input: { options: ['red', 'blue'] } }, cutCall],
        finishReason: CUT_OFF_BY_LIMIT[provider][0],
      },
    ]);
    const handle = await startProviderTurn(provider, 'Do the maintenance.');
    const result = await handle.result();

    expect(result).toMatchObject({ status: 'max-tokens', steps: 1, text: 'Starting the maintenance.', cutOff: { step: 1, finishReason: 'length' } });
    expect(result.toolCalls.map((call) => [call.toolName, call.outcome, call.isError])).toEqual([
      ['record_action', 'cancelled', true],
      ['pick_colour', 'cancelled', true],
      [cutCall.name, 'cancelled', true],
    ]);
    for (const call of result.toolCalls) expect(String(call.output)).toMatch(new RegExp(`cut off by the output token limit while it held this call to "${call.toolName}".*it did not run`));
    expectEveryCallAnsweredOnce(result.messages);
    expect(result.messages.map((message) => message.role)).toEqual(['assistant', 'tool']);
    // Nothing ran, nothing parked: no tool activity, no awaiting-input.
    expect(executionsOf(handle.workflowId)).toEqual([]);
    expect(await activitiesScheduled(handle)).toEqual(['callModel']);
    expect(await upsertedStatuses(handle)).toEqual(['running', 'max-tokens']);

    // The next turn sends that history back; the strict fake accepts it as the real API would.
    fake.script(provider, [{ text: 'Done in smaller steps.' }]);
    const next = await startProviderTurn(provider, 'Please try again, one step at a time.', [{ role: 'user', content: 'Do the maintenance.' }, ...result.messages]);
    expect(await next.result()).toMatchObject({ status: 'completed', text: 'Done in smaller steps.' });
    const requests = requestsOf(provider);
    expect(requests).toHaveLength(2);
    expect(requests.flatMap((request) => request.errors)).toEqual([]);
    expect(JSON.stringify(requests[1].body)).toContain('it did not run');
  });

  it.each(REFUSED[provider].flatMap((wire) => [
    [wire, 'with no content', { noContent: true as const }],
    [wire, 'with partial text', { text: 'I can help with part of' }],
  ]))('ends the turn as refused on %s %s, without retrying it', async (wire, _how, reply) => {
    fake.script(provider, [{ ...reply, finishReason: wire }]);
    const handle = await startProviderTurn(provider, 'Something the model will not do.');
    const result = await handle.result();

    const text = 'text' in reply ? reply.text : '';
    expect(result).toMatchObject({ status: 'refused', steps: 1, text, toolCalls: [], cutOff: { step: 1, finishReason: 'content-filter', providerFinishReason: wire } });
    // An empty reply adds no empty assistant message to the history.
    expect(result.messages).toEqual(text ? [{ role: 'assistant', content: [{ type: 'text', text }] }] : []);
    expect(await handle.query(turnStateQuery)).toMatchObject({ status: 'refused' });
    expect((await handle.describe()).typedSearchAttributes.get(agentTurnStatusKey)).toBe('refused');
    expect(requestsOf(provider)).toHaveLength(1);
  });
});

describe('reasoning models', () => {
  const thinkingModel = { provider: 'anthropic' as const, model: 'claude-sonnet-4-6', maxTokens: 4000, thinking: { type: 'enabled' as const, budgetTokens: 2048 } };

  it('carries Anthropic thinking, signed, across a parked approval and a worker restart, and leaves it out for OpenAI', async () => {
    fake.script('anthropic', [
      {
        thinking: [{ text: 'prod-db needs one guarded action; that requires approval.' }],
        toolCalls: [{ name: 'guarded_action', input: { target: 'prod-db', count: 1 } }],
        usage: { inputTokens: 40, outputTokens: 30, reasoningTokens: 20 },
      },
      { text: 'The guarded action on prod-db ran.', usage: { inputTokens: 60, outputTokens: 8, cachedInputTokens: 32 } },
    ]);
    const handle = await turnpike.startTurn({ model: thinkingModel, text: 'Run the guarded action on prod-db.', modelCallOptions: fastRetries });
    const [pending] = await waitForPending(handle, 1);

    // The worker that made the first call goes away; a new one resumes the turn from history.
    await turnpike.stopWorker();
    await turnpike.startWorker();
    await handle.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: pending.approvalId!, approved: true, approver: 'alice' }] });
    const result = await handle.result();

    expect(result).toMatchObject({ status: 'completed', steps: 2, text: 'The guarded action on prod-db ran.' });
    // costUsd from the built-in price table: 68 plain × $3 + 32 cached × $0.30 + 38 out × $15 per million.
    expect(result.usage).toEqual({ inputTokens: 100, outputTokens: 38, cachedInputTokens: 32, reasoningTokens: 20, costUsd: 0.0007836 });
    const [reasoning, call] = (result.messages[0] as Extract<Message, { role: 'assistant' }>).content;
    expect(reasoning).toEqual({ type: 'reasoning', provider: 'anthropic', text: 'prod-db needs one guarded action; that requires approval.', signature: expect.any(String) });
    expect(call).toMatchObject({ type: 'tool-call', toolName: 'guarded_action' });

    // The continuation was accepted by the fake's signature check, the thinking block first.
    const requests = requestsOf('anthropic');
    expect(requests.map((request) => request.status)).toEqual([200, 200]);
    expect(requests.flatMap((request) => request.errors)).toEqual([]);
    expect(requests[1].body.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    expect(requests[1].body.messages[1].content[0]).toEqual({
      type: 'thinking',
      thinking: 'prod-db needs one guarded action; that requires approval.',
      signature: (reasoning as { signature: string }).signature,
    });

    // The next turn takes that history to OpenAI: no reasoning is sent, and the fake accepts it.
    fake.script('openai', [{ text: 'It ran once, approved by alice.' }]);
    const next = await startProviderTurn('openai', 'What happened?', [{ role: 'user', content: 'Run the guarded action on prod-db.' }, ...result.messages]);
    expect(await next.result()).toMatchObject({ status: 'completed', text: 'It ran once, approved by alice.' });
    const [openaiRequest] = requestsOf('openai');
    expect(openaiRequest.errors).toEqual([]);
    const sent = JSON.stringify(openaiRequest.body);
    expect(sent).toContain('guarded_action');
    expect(sent).not.toContain('requires approval');
    expect(sent).not.toContain((reasoning as { signature: string }).signature);
  });

  it('sends max_completion_tokens and reasoning_effort to an OpenAI reasoning model, and max_tokens to others', async () => {
    fake.script('openai', [{ text: 'Thought about it.', usage: { inputTokens: 50, outputTokens: 40, reasoningTokens: 32, cachedInputTokens: 16 } }, { text: 'Plain.' }]);
    const reasoning = await turnpike.startTurn({ model: { provider: 'openai', model: 'o4-mini', maxTokens: 1000, reasoningEffort: 'high' }, text: 'Think.', modelCallOptions: fastRetries });
    // costUsd from the built-in price table: 34 plain × $1.10 + 16 cached × $0.275 + 40 out × $4.40 per million.
    expect((await reasoning.result()).usage).toEqual({ inputTokens: 50, outputTokens: 40, cachedInputTokens: 16, reasoningTokens: 32, costUsd: 0.0002178 });
    const plain = await startProviderTurn('openai', 'Answer.');
    expect(await plain.result()).toMatchObject({ status: 'completed', text: 'Plain.' });

    const [first, second] = requestsOf('openai');
    expect([first.errors, second.errors]).toEqual([[], []]);
    expect(first.body).toMatchObject({ model: 'o4-mini', max_completion_tokens: 1000, reasoning_effort: 'high' });
    expect(first.body).not.toHaveProperty('max_tokens');
    expect(second.body).toMatchObject({ model: 'gpt-4.1-mini', max_tokens: 512 });
    expect(second.body).not.toHaveProperty('max_completion_tokens');
  });

  it.each([
    [{ ...thinkingModel, thinking: { type: 'enabled', budgetTokens: 100 } }, 'model.thinking.budgetTokens must be an integer of at least 1024'],
    [{ ...thinkingModel, thinking: { type: 'enabled', budget_tokens: 2048 } }, 'model.thinking has unknown field(s) budget_tokens'],
    [{ provider: 'openai', model: 'gpt-4.1-mini', thinking: { type: 'adaptive' } }, 'model.thinking is an Anthropic option'],
    [{ provider: 'openai', model: 'o4-mini', reasoningEffort: 'max' }, 'model.reasoningEffort must be one of'],
  ])('fails a turn with malformed provider options at once, as InvalidTurnInput naming the field (%j)', async (model, message) => {
    const handle = await turnpike.startTurn({ model: model as AgentTurnInput['model'], text: 'Hi', modelCallOptions: fastRetries });
    const error = await handle.result().then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(WorkflowFailedError);
    const cause = (error as WorkflowFailedError).cause;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect((cause as ApplicationFailure).type).toBe(INVALID_TURN_INPUT);
    expect(cause!.message).toContain(`agentTurn input.${message}`);
    // It failed before any model call.
    expect(fake.requests).toEqual([]);
    expect(await activitiesScheduled(handle)).toEqual([]);
  });
});
