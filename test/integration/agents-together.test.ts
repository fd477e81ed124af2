/**
 * The agent features of #32 together, on the real dev server through the real OpenAI and
 * Anthropic SDKs and the strict fake providers: a sub-agent with a typed answer, whose validated
 * object is the parent's tool result; a sub-agent's spend counted in its parent's budget, and
 * the child given what remains of it; a typed message answered by the agent a handoff named; and
 * a parent cancelled while its child waits on a budget approval.
 */
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgentTool } from '../../activities/agent-tools.js';
import { TurnpikeClient, TurnpikeRejectedError, type ParkedCall } from '../../client/turnpike-client.js';
import { typedOutput } from '../../client/index.js';
import { turnStateQuery } from '../../workflows/messages/definitions.js';
import type { agentTurn } from '../../workflows/index.js';
import type { AgentDefinition, AgentTurnResult, Message, ModelProvider, ModelSettings } from '../../workflows/types/index.js';
import type { FakeProvider, RecordedRequest } from '../fake-provider/server.js';
import { useFakeProviders } from '../support/fake-providers.js';
import { executionsOf, testTools } from '../support/test-tools.js';
import { startTurnpike, waitForPending, waitForState, type TurnpikeHarness, waitForListed } from '../support/turnpike-harness.js';

const PROVIDERS = ['openai', 'anthropic'] as const;
const Finding = z.object({ target: z.string(), risk: z.enum(['low', 'high']), notes: z.array(z.string()) });

function modelOf(provider: ModelProvider, which: 0 | 1 = 0): ModelSettings {
  if (provider === 'openai') return { provider, model: which === 0 ? 'gpt-4.1-mini' : 'gpt-4.1', maxTokens: 512 };
  return { provider, model: which === 0 ? 'claude-sonnet-4-5' : 'claude-haiku-4-5', maxTokens: 512 };
}

function agentToolsOf(provider: ModelProvider) {
  return [
    defineAgentTool({
      name: `assess_${provider}`,
      description: 'Assesses a target and answers with a typed finding.',
      inputSchema: z.object({ target: z.string() }),
      agent: { model: modelOf(provider), system: 'You are the assessor.', tools: ['record_action'], output: { schema: Finding }, maxSteps: 4 },
    }),
    defineAgentTool({
      name: `research_${provider}`,
      description: 'Researches a target.',
      inputSchema: z.object({ target: z.string() }),
      agent: { model: modelOf(provider), system: 'You are the researcher.', tools: ['record_action'], maxSteps: 4 },
    }),
  ];
}

let fake: Awaited<ReturnType<typeof useFakeProviders>>;
let turnpike: TurnpikeHarness;
let client: TurnpikeClient;

beforeAll(async () => {
  fake = await useFakeProviders();
  turnpike = await startTurnpike({ tools: [...testTools, ...PROVIDERS.flatMap(agentToolsOf)] });
  client = new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue });
});

afterAll(async () => {
  await turnpike?.stop();
  await fake?.restore();
});

beforeEach(() => fake.reset());

function requestsOf(provider: FakeProvider): RecordedRequest[] {
  return fake.requests.filter((request) => request.provider === provider);
}

/** The structured-output request as each API takes it natively, or undefined when a request asks none. */
function nativeFormat(provider: FakeProvider, request: RecordedRequest): { type?: string; strict?: boolean; name?: string; schema?: { properties?: object } } | undefined {
  if (provider === 'openai') return request.body.response_format?.json_schema && { type: request.body.response_format.type, ...request.body.response_format.json_schema };
  return request.body.output_config?.format;
}

function systemOf(provider: FakeProvider, request: RecordedRequest): string | undefined {
  const { body } = request;
  if (provider === 'openai') return body.messages[0]?.role === 'system' ? body.messages[0].content : undefined;
  return typeof body.system === 'string' ? body.system : body.system?.map((block: { text: string }) => block.text).join('');
}

/** The text of the last tool result of a request, as the provider received it. */
function lastToolResult(provider: FakeProvider, request: RecordedRequest): string | undefined {
  const last = request.body.messages.at(-1);
  if (provider === 'openai') return last.role === 'tool' ? String(last.content) : undefined;
  const result = Array.isArray(last.content) ? last.content.find((block: { type: string }) => block.type === 'tool_result') : undefined;
  if (!result) return undefined;
  return typeof result.content === 'string' ? result.content : result.content.map((block: { text?: string }) => block.text ?? '').join('');
}

/** Every tool call in these messages has exactly one result. */
function expectOneResultEach(messages: Message[]): void {
  const calls = messages.flatMap((message) => (message.role === 'assistant' ? message.content.filter((part) => part.type === 'tool-call').map((part) => part.toolCallId) : []));
  const results = messages.flatMap((message) => (message.role === 'tool' ? message.content.map((part) => part.toolCallId) : []));
  expect(results.sort()).toEqual(calls.sort());
}

const listedFor = (turnId: string, count: number): Promise<ParkedCall[]> => waitForListed(client, turnId, count);

const childOf = (parent: WorkflowHandle, toolCallId: string) => turnpike.client.workflow.getHandle<typeof agentTurn>(`${parent.workflowId}/${toolCallId}`);

/** The child's result, once the parent has started it. */
const childResultOf = (child: WorkflowHandle): Promise<AgentTurnResult> => client.turnResult(child.workflowId, { waitForStart: true, pollIntervalMs: 50 });

describe.each(PROVIDERS)('an agent tool with a typed answer (%s)', (provider) => {
  it("gives the parent the child's validated object as its tool result, and the child's steps asked natively for the schema", async () => {
    const finding = { target: 'prod-db', risk: 'high', notes: ['no backups'] };
    fake.script(provider, [
      { toolCalls: [{ id: 'call_assess', name: `assess_${provider}`, input: { target: 'prod-db' } }] },
      { toolCalls: [{ name: 'record_action', input: { action: 'inspect prod-db' } }] },
      // Invalid first (risk is not in the enum): the child sends it back and accepts the correction.
      { json: { target: 'prod-db', risk: 'medium', notes: [] } },
      { json: finding },
      { text: 'prod-db is at high risk.' },
    ]);
    const parent = await turnpike.startTurn({ model: modelOf(provider), system: 'You are the lead.', text: 'Assess prod-db.', tools: [`assess_${provider}`] });
    const child = childOf(parent, 'call_assess');
    const [parentResult, childResult] = await Promise.all([parent.result(), childResultOf(child)]);

    expect(childResult).toMatchObject({ status: 'completed', steps: 3, output: finding });
    expect(typedOutput(childResult, Finding)).toEqual(finding);
    expect(parentResult).toMatchObject({ status: 'completed', text: 'prod-db is at high risk.' });
    expect(parentResult.output).toBeUndefined();
    expect(parentResult.toolCalls).toEqual([expect.objectContaining({ toolCallId: 'call_assess', outcome: 'executed', isError: false, output: finding })]);
    expectOneResultEach(parentResult.messages);

    const requests = requestsOf(provider);
    expect(requests).toHaveLength(5);
    expect(requests.flatMap((request) => request.errors)).toEqual([]);
    const [parentFirst, ...rest] = requests;
    const parentLast = rest.pop()!;
    // The parent asked no schema; each of the child's three steps asked its own natively.
    for (const request of [parentFirst, parentLast]) {
      expect(systemOf(provider, request)).toBe('You are the lead.');
      expect(nativeFormat(provider, request)).toBeUndefined();
    }
    for (const request of rest) {
      expect(systemOf(provider, request)).toBe('You are the assessor.');
      const format = nativeFormat(provider, request)!;
      expect(format).toMatchObject({ type: 'json_schema' });
      if (provider === 'openai') expect(format).toMatchObject({ name: 'final_answer', strict: true });
      expect(Object.keys(format.schema?.properties ?? {}).sort()).toEqual(['notes', 'risk', 'target']);
    }
    // The parent's model received the child's validated object as JSON, not its text of a first attempt.
    expect(JSON.parse(lastToolResult(provider, parentLast)!)).toEqual(finding);
  });
});

describe('an agent tool under a parent with a token budget (openai)', () => {
  const step = (inputTokens: number, outputTokens: number) => ({ usage: { inputTokens, outputTokens } });

  it("counts the child's tokens in the parent's budget, which parks before its next step, and gives the child what remains", async () => {
    fake.script('openai', [
      { toolCalls: [{ id: 'call_research', name: 'research_openai', input: { target: 'prod-db' } }], ...step(10, 5) },
      // The child's only step: 100 tokens, within none of what is left, but a final answer needs no further check.
      { text: 'prod-db looks fine.', ...step(60, 40) },
      { text: 'The researcher says prod-db looks fine.', ...step(10, 5) },
    ]);
    const parent = await turnpike.startTurn({ model: modelOf('openai'), text: 'Research prod-db.', tools: ['research_openai'], budget: { totalTokens: 100 } });
    const child = childOf(parent, 'call_research');
    const childResult = await childResultOf(child);
    expect(childResult).toMatchObject({ status: 'completed', budget: { totalTokens: 85 }, spend: { inputTokens: 60, outputTokens: 40 } });

    const [pending] = await waitForPending(parent);
    expect(pending).toMatchObject({ kind: 'budget', toolName: 'turnpike_budget', input: { exceeded: ['totalTokens'], budget: { totalTokens: 100 }, spent: { inputTokens: 70, outputTokens: 45, toolCalls: 1 } } });
    const state = await parent.query(turnStateQuery);
    expect(state).toMatchObject({ status: 'awaiting-input', step: 1 });
    // Only the parent's first step and the child's ran: the parent parked before its next model step.
    expect(requestsOf('openai')).toHaveLength(2);

    await client.extendBudget(parent.workflowId, pending.approvalId!, { totalTokens: 1_000 }, { approver: 'carol' });
    const result = await parent.result();
    expect(result).toMatchObject({ status: 'completed', steps: 2, text: 'The researcher says prod-db looks fine.', budget: { totalTokens: 1_100 } });
    expect(result.usage).toMatchObject({ inputTokens: 80, outputTokens: 50 });
    expect(result.decisions).toEqual([expect.objectContaining({ approvalId: pending.approvalId, toolName: 'turnpike_budget', outcome: 'approved', approver: 'carol' })]);
    expectOneResultEach(result.messages);
    expect(requestsOf('openai').flatMap((request) => request.errors)).toEqual([]);
  });

  it('cancelling the parent while its child waits on a budget approval settles both', async () => {
    fake.script('openai', [
      { toolCalls: [{ id: 'call_research', name: 'research_openai', input: { target: 'prod-db' } }], ...step(10, 5) },
      // The child's first step spends more than the 15 tokens it was given: it parks before its second.
      { toolCalls: [{ name: 'record_action', input: { action: 'inspect prod-db' } }], ...step(15, 5) },
    ]);
    const parent = await turnpike.startTurn({ model: modelOf('openai'), text: 'Research prod-db.', tools: ['research_openai'], budget: { totalTokens: 30 } });
    const child = childOf(parent, 'call_research');
    const [parked] = await listedFor(child.workflowId, 1);
    expect(parked).toMatchObject({ kind: 'budget', toolName: 'turnpike_budget', parentTurnId: parent.workflowId, parentToolCallId: 'call_research' });
    const childState = await waitForState(child, (state) => state.pending.length === 1);
    expect(childState.budget?.limits).toEqual({ totalTokens: 15 });
    await waitForState(parent, (state) => (state.children?.length ?? 0) === 1);

    await parent.cancel();
    const [parentResult, childResult] = await Promise.all([parent.result(), childResultOf(child)]);
    expect(childResult.status).toBe('cancelled');
    expect(childResult.toolCalls.map((call) => [call.toolName, call.outcome])).toEqual([['record_action', 'executed']]);
    expectOneResultEach(childResult.messages);
    expect(JSON.stringify(childResult.messages)).not.toContain('turnpike_budget');
    expect((await child.query(turnStateQuery)).pending).toEqual([]);
    expect(parentResult.status).toBe('cancelled');
    expect(parentResult.toolCalls).toEqual([expect.objectContaining({ toolCallId: 'call_research', outcome: 'cancelled', isError: true })]);
    expectOneResultEach(parentResult.messages);
    expect(executionsOf(parent.workflowId).map((run) => run.toolName)).toEqual(['record_action']);
    // The child's budget approval is no longer listed.
    await listedFor(child.workflowId, 0);
    expect(requestsOf('openai').flatMap((request) => request.errors)).toEqual([]);
  });
});

describe.each(PROVIDERS)('a typed message answered after a handoff (%s)', (provider) => {
  const agents: Record<string, AgentDefinition> = {
    triage: { model: modelOf(provider, 0), system: 'You are triage.', tools: [], handoffs: ['billing'] },
    billing: { model: modelOf(provider, 1), system: 'You are billing.', tools: [], handoffs: ['triage'] },
  };
  const Refund = z.object({ order: z.string(), refundable: z.boolean() });

  it("asks the handed-to agent's turn for the message's typed answer, and returns its object", async () => {
    const conversationId = `together-${randomUUID()}`;
    fake.script(provider, [{ toolCalls: [{ name: 'transfer_to_billing', input: {} }] }, { json: { order: '1001', refundable: true } }]);
    const reply = await client.sendMessage({ conversationId, text: 'Can order 1001 be refunded?', conversation: { agents, agent: 'triage' }, output: { schema: Refund } });
    const handedOff = await client.turnResult(reply.turnWorkflowId, { waitForStart: true, pollIntervalMs: 50 });
    expect(handedOff.handoff).toEqual({ to: 'billing' });
    const answered: AgentTurnResult = await client.turnResult(`${reply.turnWorkflowId}/handoff-1`, { waitForStart: true, pollIntervalMs: 50 });
    expect(answered).toMatchObject({ status: 'completed', output: { order: '1001', refundable: true } });
    expect(typedOutput(answered, Refund)).toEqual({ order: '1001', refundable: true });

    const requests = requestsOf(provider);
    expect(requests).toHaveLength(2);
    expect(requests.flatMap((request) => request.errors)).toEqual([]);
    expect(systemOf(provider, requests[1])).toBe('You are billing.');
    for (const request of requests) expect(Object.keys(nativeFormat(provider, request)?.schema?.properties ?? {}).sort()).toEqual(['order', 'refundable']);

    // The next message, untyped, gets an untyped turn from the agent now active.
    fake.script(provider, [{ text: 'Anything else?' }]);
    const next = await client.sendMessage({ conversationId, text: 'Thanks.', conversation: { agents, agent: 'triage' } });
    const nextResult = await client.turnResult(next.turnWorkflowId, { waitForStart: true, pollIntervalMs: 50 });
    expect(nextResult).toMatchObject({ status: 'completed', text: 'Anything else?' });
    expect(nextResult.output).toBeUndefined();
    expect(nativeFormat(provider, requestsOf(provider)[2])).toBeUndefined();
  });
});

it('refuses a typed message that an agent it may be handed to could not be asked for', async () => {
  const agents: Record<string, AgentDefinition> = {
    triage: { model: modelOf('openai'), system: 'You are triage.', tools: [], handoffs: ['billing'] },
    billing: { model: modelOf('anthropic'), system: 'You are billing.', tools: [], handoffs: ['triage'] },
  };
  // OpenAI takes an open object (sent non-strict); Anthropic's structured outputs cannot express one.
  const output = { schema: z.object({ order: z.string(), notes: z.record(z.string(), z.string()) }) };
  const error = await client.sendMessage({ conversationId: `together-${randomUUID()}`, text: 'Refund order 1001.', conversation: { agents, agent: 'triage' }, output }).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(TurnpikeRejectedError);
  expect((error as TurnpikeRejectedError).type).toBe('InvalidRequest');
  expect((error as TurnpikeRejectedError).message).toMatch(/additionalProperties must be false.*for agent "billing", which a handoff may give this message/);
  expect(fake.requests).toHaveLength(0);
});

it('refuses at definition time an agent tool whose typed answer its provider could not be asked for', () => {
  const define = (provider: ModelProvider) =>
    defineAgentTool({ name: `open_${provider}`, description: 'Answers an open map.', inputSchema: z.object({}), agent: { model: modelOf(provider), output: { schema: z.object({ codes: z.record(z.string(), z.string()) }) } } });
  expect(() => define('anthropic')).toThrow(/agent\.output\..*additionalProperties must be false for Anthropic structured outputs/);
  expect(() => define('openai')).not.toThrow();
  // Constraints Anthropic refuses (an integer's bounds, a length) are sent in descriptions, not refused.
  const bounded = { schema: z.object({ nights: z.number().int(), code: z.string().min(4) }) };
  expect(() => defineAgentTool({ name: 'bounded', description: 'Answers bounded.', inputSchema: z.object({}), agent: { model: modelOf('anthropic'), output: bounded } })).not.toThrow();
});
