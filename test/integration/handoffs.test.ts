/**
 * Handoffs on the real dev server, through the real OpenAI and Anthropic SDKs and the strict
 * fake providers: a turn's `transfer_to_<agent>` call moves the conversation to that agent,
 * whose own model, system prompt and tools answer from the same history on; it hands back the
 * same way. The handoff call is settled by the turn itself, never by an activity; bad agent
 * definitions are refused before anything starts; handoffs in a row are limited; and the active
 * agent survives the conversation's continue-as-new.
 */
import { randomUUID } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { z } from 'zod';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { defineTool } from '../../activities/tools.js';
import { parseTokenMap } from '../../api/auth.js';
import { buildApi } from '../../api/server.js';
import { TurnpikeClient, TurnpikeRejectedError } from '../../client/turnpike-client.js';
import { conversationEventsQuery } from '../../workflows/messages/definitions.js';
import { INVALID_TURN_INPUT } from '../../workflows/messages/rejection-types.js';
import type { ConversationEvent } from '../../workflows/types/turn-events.js';
import type { AgentConversationInput, AgentDefinition, AgentTurnResult, ModelSettings } from '../../workflows/types/index.js';
import type { FakeProvider, RecordedRequest, ScriptedEntry } from '../fake-provider/server.js';
import { useFakeProviders } from '../support/fake-providers.js';
import { noteStarted } from '../support/history-recorder.js';
import { executions, executionsOf, testTools } from '../support/test-tools.js';
import { startTurnpike, type TurnpikeHarness } from '../support/turnpike-harness.js';

/** A registered tool with a handoff tool's name: a handoff must never run it. */
const impostor = defineTool({
  name: 'transfer_to_billing',
  description: 'A registered tool that shares its name with a handoff tool.',
  inputSchema: z.object({}).loose(),
  async execute(_input, context) {
    executions.push({ toolName: 'transfer_to_billing', input: {}, toolCallId: context.toolCallId, idempotencyKey: context.idempotencyKey, attempt: 1 });
    return { ran: true };
  },
});

let fake: Awaited<ReturnType<typeof useFakeProviders>>;
let turnpike: TurnpikeHarness;
let client: TurnpikeClient;

beforeAll(async () => {
  fake = await useFakeProviders();
  turnpike = await startTurnpike({ tools: [...testTools, impostor] });
  client = new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue });
});
afterAll(async () => {
  await turnpike?.stop();
  await fake?.restore();
});
beforeEach(() => fake.reset());

const MODELS = { openai: ['gpt-4.1-mini', 'gpt-4.1'], anthropic: ['claude-sonnet-4-5', 'claude-haiku-4-5'] } as const;

function model(provider: 'openai' | 'anthropic', which: 0 | 1): ModelSettings {
  return { provider, model: MODELS[provider][which], maxTokens: 256 };
}

/** A triage agent that may hand to billing (and support), and a billing agent that may hand back. */
function agents(provider: 'openai' | 'anthropic'): Record<string, AgentDefinition> {
  return {
    triage: { model: model(provider, 0), system: 'You are triage.', tools: ['record_action'], handoffs: ['billing', 'support'], description: 'Routes every question.' },
    billing: { model: model(provider, 1), system: 'You are billing.', tools: ['flaky_action'], handoffs: ['triage'], description: 'Answers questions about invoices and refunds.' },
    support: { model: model(provider, 1), system: 'You are support.', tools: [], handoffs: ['triage'], description: 'Fixes broken things.' },
  };
}

type Settings = Omit<AgentConversationInput, 'carried' | 'conversationId'>;

async function send(conversationId: string, text: string, conversation: Settings) {
  const reply = await client.sendMessage({ conversationId, text, conversation });
  if (reply.turnNumber === 1) noteStarted(client.conversation(conversationId));
  noteStarted(client.turn(reply.turnWorkflowId));
  return reply;
}

async function turnResult(turnWorkflowId: string): Promise<AgentTurnResult> {
  return client.turnResult(turnWorkflowId, { waitForStart: true, pollIntervalMs: 50 });
}

/** Waits until the conversation has absorbed the turns of `messages` user messages, handoffs included. */
async function waitForIdle(conversationId: string, messages: number) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const state = await client.conversationState(conversationId).catch(() => undefined);
    if (state && state.turns === messages && !state.currentTurn && state.queued.length === 0) return state;
    if (Date.now() > deadline) throw new Error(`conversation never went idle: ${JSON.stringify(state)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function requestsOf(provider: FakeProvider): RecordedRequest[] {
  return fake.requests.filter((request) => request.provider === provider);
}

/** What a request told the model: its model, system prompt, tool names, and its last message. */
function seen(provider: 'openai' | 'anthropic', request: RecordedRequest) {
  const { body } = request;
  if (provider === 'openai') {
    const system = body.messages[0]?.role === 'system' ? body.messages[0].content : undefined;
    const last = body.messages.at(-1);
    return { model: body.model, system, tools: (body.tools ?? []).map((tool: { function: { name: string } }) => tool.function.name), last: last.role === 'tool' ? String(last.content) : undefined };
  }
  const last = body.messages.at(-1);
  const result = Array.isArray(last.content) ? last.content.find((block: { type: string }) => block.type === 'tool_result') : undefined;
  const text = result ? (typeof result.content === 'string' ? result.content : result.content.map((block: { text?: string }) => block.text ?? '').join('')) : undefined;
  return { model: body.model, system: typeof body.system === 'string' ? body.system : body.system?.map((block: { text: string }) => block.text).join(''), tools: (body.tools ?? []).map((tool: { name: string }) => tool.name), last: text };
}

async function conversationEvents(conversationId: string): Promise<ConversationEvent[]> {
  const page = await client.conversation(conversationId).query(conversationEventsQuery, {});
  return page.events.map(({ event }) => event);
}

describe.each(['openai', 'anthropic'] as const)('handoffs (%s)', (provider) => {
  it('moves the conversation to the agent it is handed to, keeps it there for the next message, and hands back', async () => {
    const conversationId = `handoff-${randomUUID()}`;
    const entries: ScriptedEntry[] = [
      { toolCalls: [{ name: 'transfer_to_billing', input: { reason: 'a refund' } }] },
      { text: 'Billing here: your refund is on its way.' },
      { toolCalls: [{ name: 'transfer_to_triage', input: {} }] },
      { text: 'Triage again: what else can I do?' },
    ];
    fake.script(provider, entries);
    const settings: Settings = { agents: agents(provider), agent: 'triage' };

    const first = await send(conversationId, 'I want a refund for order 1001.', settings);
    const handedOff = await turnResult(first.turnWorkflowId);
    expect(handedOff.status).toBe('completed');
    expect(handedOff.handoff).toEqual({ to: 'billing' });
    expect(handedOff.steps).toBe(1);
    expect(handedOff.toolCalls).toMatchObject([{ toolName: 'transfer_to_billing', outcome: 'executed', output: 'Transferred to billing.', isError: false }]);
    const afterFirst = await waitForIdle(conversationId, 1);
    expect(afterFirst.agent).toBe('billing');

    const requests = requestsOf(provider);
    expect(requests.flatMap((request) => request.errors)).toEqual([]);
    expect(seen(provider, requests[0])).toMatchObject({ model: MODELS[provider][0], system: 'You are triage.', tools: ['record_action', 'transfer_to_billing', 'transfer_to_support'] });
    // The next request is the billing agent's, on the same history, which ends with the handoff's result.
    expect(seen(provider, requests[1])).toEqual({ model: MODELS[provider][1], system: 'You are billing.', tools: ['flaky_action', 'transfer_to_triage'], last: 'Transferred to billing.' });

    const second = await send(conversationId, 'Thanks. Something else now.', settings);
    expect((await turnResult(second.turnWorkflowId)).handoff).toEqual({ to: 'triage' });
    const afterSecond = await waitForIdle(conversationId, 2);
    expect(afterSecond.agent).toBe('triage');
    const all = requestsOf(provider);
    expect(all).toHaveLength(4);
    expect(all.flatMap((request) => request.errors)).toEqual([]);
    expect(seen(provider, all[2])).toMatchObject({ model: MODELS[provider][1], system: 'You are billing.', tools: ['flaky_action', 'transfer_to_triage'] });
    expect(seen(provider, all[3])).toEqual({ model: MODELS[provider][0], system: 'You are triage.', tools: ['record_action', 'transfer_to_billing', 'transfer_to_support'], last: 'Transferred to triage.' });

    const history = await client.history(conversationId);
    // Each message: the user's, the handing agent's call, its result, the new agent's answer.
    expect(history.total).toBe(8);
    expect(history.messages.filter((message) => message.role === 'user').map((message) => message.content)).toEqual(['I want a refund for order 1001.', 'Thanks. Something else now.']);
    const events = await conversationEvents(conversationId);
    expect(events.filter((event) => event.type === 'handoff')).toEqual([
      { type: 'handoff', turnId: first.turnWorkflowId, from: 'triage', to: 'billing' },
      { type: 'handoff', turnId: second.turnWorkflowId, from: 'billing', to: 'triage' },
    ]);
    const started = events.filter((event) => event.type === 'turn-started').map((event) => event.turnId);
    expect(started).toEqual([first.turnWorkflowId, `${conversationId}/turn-1/handoff-1`, second.turnWorkflowId, `${conversationId}/turn-2/handoff-1`]);
    expect((await turnResult(`${conversationId}/turn-1/handoff-1`)).text).toBe('Billing here: your refund is on its way.');
  });
});

describe('handoffs', () => {
  it('settles the handoff call in the workflow, never as an activity: the first handoff of a step wins, the others and every other call settle', async () => {
    const conversationId = `handoff-${randomUUID()}`;
    fake.script('openai', [
      {
        toolCalls: [
          { name: 'record_action', input: { action: 'note the request' } },
          { name: 'transfer_to_support', input: { reason: 'it is broken' } },
          { name: 'transfer_to_billing', input: {} },
        ],
      },
      { text: 'Support here.' },
    ]);
    const withImpostor = agents('openai');
    withImpostor.triage = { ...withImpostor.triage!, tools: ['record_action', 'transfer_to_billing'] };
    const sent = await send(conversationId, 'My router is broken.', { agents: withImpostor });
    const result = await turnResult(sent.turnWorkflowId);
    expect(result).toMatchObject({ status: 'completed', handoff: { to: 'support' }, steps: 1 });
    expect(result.toolCalls).toMatchObject([
      { toolName: 'record_action', outcome: 'executed', isError: false, output: { done: 'note the request' } },
      { toolName: 'transfer_to_support', outcome: 'executed', isError: false, output: 'Transferred to support.' },
      { toolName: 'transfer_to_billing', outcome: 'error', isError: true, output: expect.stringMatching(/Only one handoff per step is followed: the conversation goes to support, not to billing/) },
    ]);
    const state = await waitForIdle(conversationId, 1);
    expect(state.agent).toBe('support');

    // The registered tool named like the billing handoff never ran; only record_action ran, as an activity.
    expect(executionsOf(sent.turnWorkflowId).map((execution) => execution.toolName)).toEqual(['record_action']);
    const history = await client.turn(sent.turnWorkflowId).fetchHistory();
    const activities = history.events!.flatMap((event) => event.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
    expect(activities).toEqual(['callModel', 'executeTool']);
    const requests = requestsOf('openai');
    expect(requests.flatMap((request) => request.errors)).toEqual([]);
    expect(requests).toHaveLength(2);
    // The model was offered the handoff tool in place of the registered one of the same name.
    expect(seen('openai', requests[0]).tools).toEqual(['record_action', 'transfer_to_billing', 'transfer_to_support']);
    expect(requests[0].body.tools[1].function.description).toMatch(/^Hand the conversation to the billing agent, .*Answers questions about invoices/);
    expect(seen('openai', requests[1])).toMatchObject({ system: 'You are support.', tools: ['transfer_to_triage'] });
  });

  it('refuses invalid agents before anything starts, with a clear error', async () => {
    const valid = agents('openai');
    const cases: Array<[Settings, RegExp]> = [
      [{ agents: { ...valid, triage: { ...valid.triage!, handoffs: ['billing', 'nobody'] } } }, /agents\.triage: handoffs names "nobody", which is not one of agents/],
      [{ agents: { 'two words': { model: model('openai', 0) } } }, /agents\.two words: the name must match/],
      [{ agents: valid, agent: 'ghost' }, /agent "ghost" is not one of agents \(triage, billing, support\)/],
      [{ agents: { solo: { model: model('openai', 0), handoffs: ['solo'] } } }, /agents\.solo: handoffs names the agent itself/],
      [{ agents: {} }, /agents must name at least one agent/],
    ];
    for (const [settings, message] of cases) {
      const conversationId = `handoff-${randomUUID()}`;
      const error = await client.sendMessage({ conversationId, text: 'hello', conversation: settings }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(TurnpikeRejectedError);
      expect((error as TurnpikeRejectedError).type).toBe('InvalidRequest');
      expect((error as TurnpikeRejectedError).message).toMatch(message);
      await expect(client.conversation(conversationId).describe()).rejects.toThrow();
    }
    expect(fake.requests).toHaveLength(0);

    // A turn started on its own checks its handoffs as it checks the rest of its input.
    const turn = await turnpike.startTurn({ text: 'hello', handoffs: [{ agent: 'two words', description: '' }] });
    const failure = await turn.result().then(() => undefined, (caught: unknown) => caught as WorkflowFailedError);
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    expect(failure!.cause).toMatchObject({ type: INVALID_TURN_INPUT, message: expect.stringMatching(/agentTurn input\.handoffs\[0\]\.agent must match/) });
  });

  it('takes agents over HTTP with the first message, and refuses invalid ones with 400', async () => {
    const api = await buildApi({ client, tokens: parseTokenMap('alice-token:alice') });
    try {
      const post = async (conversationId: string, body: unknown) => {
        const response = await api.inject({
          method: 'POST',
          url: `/api/conversations/${conversationId}/messages`,
          headers: { authorization: 'Bearer alice-token', 'content-type': 'application/json' },
          payload: JSON.stringify(body),
        });
        return { status: response.statusCode, body: response.json() as { error?: { type: string; message: string } } };
      };
      const valid = agents('openai');
      const refused = await post(`handoff-${randomUUID()}`, { text: 'hello', agents: { ...valid, billing: { ...valid.billing!, handoffs: ['nobody'] } } });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toEqual({ type: 'InvalidRequest', message: expect.stringMatching(/agents\.billing: handoffs names "nobody"/) });

      fake.script('openai', [{ toolCalls: [{ name: 'transfer_to_billing', input: {} }] }, { text: 'Billing here.' }]);
      const conversationId = `handoff-${randomUUID()}`;
      const accepted = await post(conversationId, { text: 'A refund, please.', agents: valid, agent: 'triage' });
      expect(accepted.status).toBe(202);
      expect((await waitForIdle(conversationId, 1)).agent).toBe('billing');
      expect(requestsOf('openai').map((request) => seen('openai', request).system)).toEqual(['You are triage.', 'You are billing.']);
    } finally {
      await api.close();
    }
  });

  it('follows at most 5 handoffs in a row without a user message; a sixth gets an error result, and a user message allows more', async () => {
    const conversationId = `handoff-${randomUUID()}`;
    const pingPong: Record<string, AgentDefinition> = {
      ping: { model: model('openai', 0), system: 'You are ping.', tools: [], handoffs: ['pong'] },
      pong: { model: model('openai', 1), system: 'You are pong.', tools: [], handoffs: ['ping'] },
    };
    const to = (agent: string): ScriptedEntry => ({ toolCalls: [{ name: `transfer_to_${agent}`, input: {} }] });
    fake.script('openai', [to('pong'), to('ping'), to('pong'), to('ping'), to('pong'), to('ping'), { text: 'Pong answers.' }, to('ping'), { text: 'Ping answers.' }]);
    const settings: Settings = { agents: pingPong };
    const first = await send(conversationId, 'Who answers?', settings);
    const state = await waitForIdle(conversationId, 1);
    expect(state.agent).toBe('pong');
    const refusedTurn = await turnResult(`${conversationId}/turn-1/handoff-5`);
    expect(refusedTurn.handoff).toBeUndefined();
    expect(refusedTurn.text).toBe('Pong answers.');
    expect(refusedTurn.toolCalls).toMatchObject([{ toolName: 'transfer_to_ping', outcome: 'error', isError: true, output: expect.stringMatching(/handed between agents 5 times in a row without a user message/) }]);
    expect((await turnResult(first.turnWorkflowId)).handoff).toEqual({ to: 'pong' });

    await send(conversationId, 'And now?', settings);
    expect((await waitForIdle(conversationId, 2)).agent).toBe('ping');
    const requests = requestsOf('openai');
    expect(requests).toHaveLength(9);
    expect(requests.flatMap((request) => request.errors)).toEqual([]);
    expect(seen('openai', requests[8]).system).toBe('You are ping.');
    expect((await conversationEvents(conversationId)).filter((event) => event.type === 'handoff')).toHaveLength(6);
  });

  it('keeps the active agent across the conversation’s continue-as-new', async () => {
    const conversationId = `handoff-${randomUUID()}`;
    fake.script('openai', [{ toolCalls: [{ name: 'transfer_to_billing', input: {} }] }]);
    const settings: Settings = { agents: agents('openai') };
    await send(conversationId, 'Refund, please.', settings);
    await waitForIdle(conversationId, 1);
    // Plain answers (the fake's default) until the test server's suggestion (40 events) has moved the conversation to a new run.
    let messages = 1;
    while ((await client.conversationState(conversationId)).runs === 0) {
      if (messages >= 12) throw new Error('the conversation never continued-as-new');
      const reply = await send(conversationId, `message ${++messages}`, settings);
      await turnResult(reply.turnWorkflowId);
      await waitForIdle(conversationId, messages);
    }
    const before = requestsOf('openai').length;
    const last = await send(conversationId, 'Who are you now?', settings);
    await turnResult(last.turnWorkflowId);
    const state = await waitForIdle(conversationId, messages + 1);
    expect(state.runs).toBeGreaterThanOrEqual(1);
    expect(state.agent).toBe('billing');
    const requests = requestsOf('openai');
    expect(requests).toHaveLength(before + 1);
    expect(requests.flatMap((request) => request.errors)).toEqual([]);
    expect(seen('openai', requests.at(-1)!)).toMatchObject({ model: MODELS.openai[1], system: 'You are billing.', tools: ['flaky_action', 'transfer_to_triage'] });
  });
});
