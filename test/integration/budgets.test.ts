/**
 * Budgets a person can extend, on a real dev server with the scripted model (which reports token
 * usage) and a worker price table extended for it: a limit reached parks a budget approval,
 * listed and decided like a tool approval; extending it lets the turn go on, stopping it ends the
 * turn `budget-exceeded` with a valid history.
 */
import { randomUUID } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TurnpikeClient, type ParkedCall } from '../../client/turnpike-client.js';
import { turnStateQuery } from '../../workflows/messages/definitions.js';
import type { AgentTurnResult, ConversationState, Message, ModelSettings, ToolMessage } from '../../workflows/types/index.js';
import { useFakeProviders } from '../support/fake-providers.js';
import { noteStarted } from '../support/history-recorder.js';
import { testTools } from '../support/test-tools.js';
import { startTurnpike, waitForPending, waitForState, type TurnpikeHarness } from '../support/turnpike-harness.js';

let fake: Awaited<ReturnType<typeof useFakeProviders>>;
let turnpike: TurnpikeHarness;
let client: TurnpikeClient;
beforeAll(async () => {
  fake = await useFakeProviders();
  // USD 1,000 per million tokens: a scripted step of ~40 tokens costs ~USD 0.04.
  turnpike = await startTurnpike({ tools: testTools, prices: { 'scripted:demo': { input: 1000, output: 1000 } } });
  client = new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue });
});
afterAll(async () => {
  await turnpike?.stop();
  await fake?.restore();
});

const TWO_STEPS = 'look up order 1001 then look up order 1002';

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

/** The budget approvals `listParkedCalls` shows for this turn, once visibility has them. */
async function listed(turnId: string): Promise<ParkedCall[]> {
  for (let attempt = 0; attempt < 300; attempt++) {
    const calls = (await client.listParkedCalls()).filter((call) => call.turnWorkflowId === turnId);
    if (calls.length > 0) return calls;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the listing never showed turn ${turnId}`);
}

function noBudgetCallIn(result: AgentTurnResult): void {
  expect(result.toolCalls.map((call) => call.toolName)).not.toContain('turnpike_budget');
  expect(JSON.stringify(result.messages)).not.toContain('turnpike_budget');
}

describe('token budgets', () => {
  it('parks a budget approval when the turn reaches its token budget; extending it lets the turn complete', async () => {
    const handle = await turnpike.startTurn({ text: TWO_STEPS, budget: { totalTokens: 30 } });
    const [pending] = await waitForPending(handle);
    expect(pending).toMatchObject({
      kind: 'budget',
      toolCallId: 'budget-1',
      toolName: 'turnpike_budget',
      input: { exceeded: ['totalTokens'], budget: { totalTokens: 30 }, extendBy: { totalTokens: 30 } },
    });
    expect(pending.approvalId).toMatch(/^apr_/);
    const state = await handle.query(turnStateQuery);
    expect(state).toMatchObject({ status: 'awaiting-input', step: 1, budget: { limits: { totalTokens: 30 } } });
    const spent = state.budget!.spent;
    expect(spent.inputTokens + spent.outputTokens).toBeGreaterThanOrEqual(30);
    expect(spent.toolCalls).toBe(1);

    const [listedCall] = await listed(handle.workflowId);
    expect(listedCall).toMatchObject({ kind: 'budget', approvalId: pending.approvalId, toolName: 'turnpike_budget', input: pending.input });

    await client.extendBudget(handle.workflowId, pending.approvalId!, { totalTokens: 100_000 }, { approver: 'carol' });
    const result = await handle.result();
    expect(result.status).toBe('completed');
    expect(result.steps).toBe(3);
    expect(result.budget).toEqual({ totalTokens: 100_030 });
    expect(result.spend).toMatchObject({ inputTokens: result.usage.inputTokens, outputTokens: result.usage.outputTokens, toolCalls: 2 });
    expect(result.decisions).toEqual([
      expect.objectContaining({ approvalId: pending.approvalId, toolCallId: 'budget-1', toolName: 'turnpike_budget', outcome: 'approved', approver: 'carol', editedInput: { extendBy: { totalTokens: 100_000 } } }),
    ]);
    noBudgetCallIn(result);
    expectEveryCallAnsweredOnce(result.messages);
  });

  it('refuses an extension that is not a budget, and keeps the approval parked', async () => {
    const handle = await turnpike.startTurn({ text: TWO_STEPS, budget: { totalTokens: 30 } });
    const [pending] = await waitForPending(handle);
    const refused = await client.extendBudget(handle.workflowId, pending.approvalId!, { totalTokens: -5 }).catch((error: unknown) => error);
    expect((refused as { type?: string }).type).toBe('InvalidEditedInput');
    expect((await handle.query(turnStateQuery)).pending).toHaveLength(1);
    // Approved as shown: the default extension (30 more) is not enough for the next step, which asks again.
    await client.approveToolCall(handle.workflowId, { approvalId: pending.approvalId!, approved: true, approver: 'carol' });
    const state = await waitForState(handle, (current) => current.pending[0]?.toolCallId === 'budget-2');
    expect(state.budget!.limits).toEqual({ totalTokens: 60 });
    await client.approveToolCall(handle.workflowId, { approvalId: state.pending[0].approvalId!, approved: false, approver: 'carol' });
    expect((await handle.result()).status).toBe('budget-exceeded');
  });

  it('stops the turn when the approver says stop: budget-exceeded, a valid history the next turn continues from', async () => {
    const handle = await turnpike.startTurn({ text: TWO_STEPS, budget: { totalTokens: 30 } });
    const [pending] = await waitForPending(handle);
    await client.approveToolCall(handle.workflowId, { approvalId: pending.approvalId!, approved: false, approver: 'dave', reason: 'enough' });
    const result = await handle.result();
    expect(result.status).toBe('budget-exceeded');
    expect(result.steps).toBe(1);
    expect(result.toolCalls).toHaveLength(1);
    expect(result.decisions).toEqual([expect.objectContaining({ toolName: 'turnpike_budget', outcome: 'denied', approver: 'dave', reason: 'enough' })]);
    noBudgetCallIn(result);
    expectEveryCallAnsweredOnce(result.messages);
    expect((await handle.query(turnStateQuery)).pending).toEqual([]);

    const history: Message[] = [{ role: 'user', content: TWO_STEPS }, ...result.messages, { role: 'user', content: 'thanks' }];
    const next = await (await turnpike.startTurn({ messages: history })).result();
    expect(next.status).toBe('completed');
  });

  it('ends budget-exceeded when nobody decides before approvalTimeout', async () => {
    const handle = await turnpike.startTurn({ text: TWO_STEPS, budget: { inputTokens: 10 }, approvalTimeout: '1s' });
    const result = await handle.result();
    expect(result.status).toBe('budget-exceeded');
    expect(result.decisions).toEqual([expect.objectContaining({ toolName: 'turnpike_budget', outcome: 'expired', automatic: true })]);
    expectEveryCallAnsweredOnce(result.messages);
  });

  it('settles a parked budget approval when the turn is cancelled', async () => {
    const handle = await turnpike.startTurn({ text: TWO_STEPS, budget: { totalTokens: 30 } });
    await waitForPending(handle);
    await handle.cancel();
    const result = await handle.result();
    expect(result.status).toBe('cancelled');
    expect(result.decisions).toEqual([expect.objectContaining({ toolName: 'turnpike_budget', outcome: 'cancelled' })]);
    expect((await handle.query(turnStateQuery)).pending).toEqual([]);
  });
});

describe('budgets across a hand-over', () => {
  it('keeps the extended limits and the wall clock when a long turn continues as new', async () => {
    const steps = Array.from({ length: 10 }, (_, index) => `use record_action with {"action":"a${index}"}`).join(' then ');
    const handle = await turnpike.startTurn({ text: steps, maxSteps: 20, historyLimit: { events: 100 }, budget: { toolCalls: 3, wallTime: '1h' } });
    const approvers = ['ann', 'ben', 'cat'];
    const wallTimes: number[] = [];
    for (const [index, approver] of approvers.entries()) {
      const state = await waitForState(handle, (current) => current.pending[0]?.toolCallId === `budget-${index + 1}`);
      wallTimes.push((state.pending[0].input as { spent: { wallTimeMs: number } }).spent.wallTimeMs);
      // Each extension grew the limits of the run that carried them on.
      expect(state.budget!.limits).toEqual({ toolCalls: 3 * (index + 1), wallTime: '1h' });
      await client.approveToolCall(handle.workflowId, { approvalId: state.pending[0].approvalId!, approved: true, approver });
    }
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'completed', spend: { toolCalls: 10 }, budget: { toolCalls: 12, wallTime: '1h' } });
    // Wall time runs from the turn's first run, not the current one's: it only grows.
    expect([...wallTimes, result.spend!.wallTimeMs]).toEqual([...wallTimes, result.spend!.wallTimeMs].sort((a, b) => a - b));
    expect(result.decisions!.map((decision) => [decision.toolCallId, decision.approver])).toEqual([
      ['budget-1', 'ann'],
      ['budget-2', 'ben'],
      ['budget-3', 'cat'],
    ]);
    expect(result.toolCalls.map((call) => call.outcome)).toEqual(Array(10).fill('executed'));
    const runs = [];
    for await (const execution of turnpike.client.workflow.list({ query: `WorkflowId = "${handle.workflowId}"` })) runs.push(execution);
    expect(runs.length).toBeGreaterThan(1);

    // Exactly: a workflow reads the clock as its workflow task's start, so each wall time the
    // turn reported is the time from its first run's start to one of its workflow tasks, in
    // whichever run it was measured (the last one for the result): whatever ran between the runs
    // and however late a run's first task started.
    const histories = await Promise.all(runs.map(async (run) => (await turnpike.client.workflow.getHandle(handle.workflowId, run.runId).fetchHistory()).events ?? []));
    const eventMs = (event: (typeof histories)[number][number]) => tsToMs(event.eventTime);
    const firstRunStart = Math.min(...histories.map((events) => eventMs(events[0])));
    const taskStarts = new Set(histories.flat().filter((event) => event.workflowTaskStartedEventAttributes).map((event) => eventMs(event) - firstRunStart));
    for (const wallTimeMs of [...wallTimes, result.spend!.wallTimeMs]) expect(taskStarts).toContain(wallTimeMs);
  });
});

describe('tool-call budgets', () => {
  it("parks before a step's calls would go over, and a stop answers each of them", async () => {
    const handle = await turnpike.startTurn({ text: 'look up order 1001 and look up order 1002', budget: { toolCalls: 1 } });
    const [pending] = await waitForPending(handle);
    expect(pending).toMatchObject({ kind: 'budget', input: { exceeded: ['toolCalls'], extendBy: { toolCalls: 1 }, spent: { toolCalls: 0 } } });
    await client.approveToolCall(handle.workflowId, { approvalId: pending.approvalId!, approved: false });
    const result = await handle.result();
    expect(result.status).toBe('budget-exceeded');
    expect(result.toolCalls.map((call) => [call.toolName, call.outcome, call.isError])).toEqual([
      ['lookup_order', 'cancelled', true],
      ['lookup_order', 'cancelled', true],
    ]);
    expect(String(result.toolCalls[0].output)).toMatch(/budget stopped before "lookup_order" ran/);
    expectEveryCallAnsweredOnce(result.messages);
  });

  it('answers each of the waiting calls when the turn is cancelled: they did not run', async () => {
    const handle = await turnpike.startTurn({ text: 'look up order 1001 and look up order 1002', budget: { toolCalls: 1 } });
    await waitForPending(handle);
    await handle.cancel();
    const result = await handle.result();
    expect(result.status).toBe('cancelled');
    expect(result.toolCalls.map((call) => [call.outcome, call.output])).toEqual([
      ['cancelled', 'The turn was cancelled while its budget approval waited; "lookup_order" did not run.'],
      ['cancelled', 'The turn was cancelled while its budget approval waited; "lookup_order" did not run.'],
    ]);
    expect(result.decisions).toEqual([expect.objectContaining({ toolCallId: 'budget-1', outcome: 'cancelled' })]);
    expectEveryCallAnsweredOnce(result.messages);
  });

  it('runs the calls once the budget is extended', async () => {
    const handle = await turnpike.startTurn({ text: 'look up order 1001 and look up order 1002', budget: { toolCalls: 1 } });
    const [pending] = await waitForPending(handle);
    await client.approveToolCall(handle.workflowId, { approvalId: pending.approvalId!, approved: true, approver: 'erin' });
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'completed', budget: { toolCalls: 2 }, spend: { toolCalls: 2 } });
    expect(result.toolCalls.map((call) => call.outcome)).toEqual(['executed', 'executed']);
  });
});

describe('cost budgets', () => {
  it("prices each step from the worker's table and parks when the cost budget is reached", async () => {
    const handle = await turnpike.startTurn({ text: TWO_STEPS, budget: { costUsd: 0.01 } });
    const [pending] = await waitForPending(handle);
    const input = pending.input as { exceeded: string[]; spent: { costUsd?: number; inputTokens: number; outputTokens: number } };
    expect(input.exceeded).toEqual(['costUsd']);
    expect(input.spent.costUsd).toBeCloseTo((input.spent.inputTokens + input.spent.outputTokens) / 1000, 8);
    await client.approveToolCall(handle.workflowId, { approvalId: pending.approvalId!, approved: false });
    const result = await handle.result();
    expect(result.status).toBe('budget-exceeded');
    expect(result.usage.costUsd).toBeCloseTo((result.usage.inputTokens + result.usage.outputTokens) / 1000, 8);
    expect(result.spend?.costUsd).toBe(result.usage.costUsd);

    // The stream says so: each step's cost with its usage, and the budget approval.
    const events = [];
    for await (const { event } of client.turnEvents(handle.workflowId)) events.push(event);
    const finished = events.filter((event) => event.type === 'step-finished');
    expect(finished).toHaveLength(1);
    for (const { usage } of finished) expect(usage.costUsd).toBeCloseTo((usage.inputTokens + usage.outputTokens) / 1000, 10);
    expect(events.filter((event) => event.type === 'budget-requested')).toEqual([
      expect.objectContaining({ step: 1, approvalId: pending.approvalId, toolCallId: 'budget-1', toolName: 'turnpike_budget', input: pending.input, inputHash: pending.inputHash }),
    ]);
  });

  it('asks a person when the model has no price, and goes on without a cost limit once approved', async () => {
    const handle = await turnpike.startTurn({ text: TWO_STEPS, model: { provider: 'scripted', model: 'unpriced' }, budget: { costUsd: 1 } });
    const [pending] = await waitForPending(handle);
    expect(pending.reason).toMatch(/no price for scripted:unpriced/);
    expect(pending.input).toMatchObject({ exceeded: ['costUsd'], spent: { costUnknown: true }, extendBy: {} });
    await client.approveToolCall(handle.workflowId, { approvalId: pending.approvalId!, approved: true });
    const result = await handle.result();
    expect(result.status).toBe('completed');
    expect(result.budget).toEqual({});
    expect(result.spend).toMatchObject({ costUnknown: true });
    expect(result.usage.costUsd).toBeUndefined();
  });
});

describe('invalid budgets', () => {
  it.each([
    [{ totalTokens: -1 }, /input\.budget\.totalTokens must be a non-negative integer/],
    [{ tokens: 5 }, /input\.budget\.tokens is not a budget limit/],
    [{ wallTime: 'soon' }, /input\.budget\.wallTime must be a positive Temporal duration/],
    [{ costUsd: '1' }, /input\.budget\.costUsd must be a non-negative number/],
  ])('fails the turn at once with InvalidTurnInput naming the field: %j', async (budget, message) => {
    const handle = await turnpike.startTurn({ text: TWO_STEPS, budget: budget as never });
    const error = await handle.result().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(WorkflowFailedError);
    const cause = (error as WorkflowFailedError).cause as { type?: string; message: string };
    expect(cause.type).toBe('InvalidTurnInput');
    expect(cause.message).toMatch(message);
  });
});


describe('costs by provider', () => {
  it.each([
    // 600 plain input at 2.50, 400 cached at 1.25, 200 output at 10 (USD per million).
    ['openai', { provider: 'openai', model: 'gpt-4o-2024-08-06' }, { inputTokens: 1000, cachedInputTokens: 400, outputTokens: 200 }, 0.004],
    // Anthropic reports cache reads apart: 2,000 plain at 3, 1,000 read at 0.30, 100 output at 15.
    ['anthropic', { provider: 'anthropic', model: 'claude-sonnet-4-5', maxTokens: 256 }, { inputTokens: 3000, cachedInputTokens: 1000, outputTokens: 100 }, 0.0078],
  ] as const)('prices %s steps from the built-in table and parks once the cost budget is reached', async (provider, model, usage, stepCost) => {
    fake.reset();
    fake.script(provider, [{ toolCalls: [{ name: 'lookup_order', input: { orderId: '1001' } }], usage }, { text: 'Found it.', usage }]);
    const handle = await turnpike.startTurn({ text: 'look up order 1001', model: model as ModelSettings, budget: { costUsd: 0.001 } });
    const [pending] = await waitForPending(handle);
    expect(pending.input).toMatchObject({ exceeded: ['costUsd'], spent: { costUsd: stepCost }, extendBy: { costUsd: 0.001 } });
    await client.extendBudget(handle.workflowId, pending.approvalId!, { costUsd: 1 }, { approver: 'finance' });
    const result = await handle.result();
    expect(result.status).toBe('completed');
    expect(result.usage.costUsd).toBeCloseTo(2 * stepCost, 10);
    expect(result.spend?.costUsd).toBe(result.usage.costUsd);
    expect(result.budget).toEqual({ costUsd: 1.001 });
  });
});

describe('conversation budgets', () => {
  const scripted: ModelSettings = { provider: 'scripted', model: 'demo' };

  async function send(conversationId: string, text: string, budget: { totalTokens?: number; toolCalls?: number }) {
    const reply = await client.sendMessage({ conversationId, text, conversation: { model: scripted, budget } });
    if (reply.turnNumber === 1) noteStarted(client.conversation(conversationId));
    noteStarted(client.turn(reply.turnWorkflowId));
    return reply;
  }

  async function idleAfter(conversationId: string, turns: number): Promise<ConversationState> {
    for (let attempt = 0; attempt < 300; attempt++) {
      const state = await client.conversationState(conversationId).catch(() => undefined);
      if (state && state.turns === turns && !state.currentTurn && state.queued.length === 0) return state;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`conversation ${conversationId} never absorbed ${turns} turns`);
  }

  it('refuses a conversation whose budget is invalid before starting it', async () => {
    const conversationId = `conv-${randomUUID()}`;
    const refused = await send(conversationId, 'hello', { totalTokens: -3 }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ type: 'InvalidRequest', message: "Invalid sendMessage: the conversation's budget.totalTokens must be a non-negative integer" });
    await expect(turnpike.client.workflow.getHandle(conversationId).describe()).rejects.toThrow(/not found/i);
  });

  it('gives each turn what remains, and counts every turn across continue-as-new', async () => {
    const conversationId = `conv-${randomUUID()}`;
    const budget = { totalTokens: 1_000_000, toolCalls: 1_000 };
    let spentTokens = 0;
    let spentCalls = 0;
    let state: ConversationState | undefined;
    for (let turn = 1; turn <= 20 && !(state && state.runs >= 1 && turn > 3); turn++) {
      const reply = await send(conversationId, `look up order ${1000 + turn}`, budget);
      const result = await client.turnResult(reply.turnWorkflowId, { waitForStart: true, pollIntervalMs: 50 });
      expect(result.status).toBe('completed');
      // Given what the earlier turns left.
      expect(result.budget).toEqual({ totalTokens: budget.totalTokens - spentTokens, toolCalls: budget.toolCalls - spentCalls });
      spentTokens += result.spend!.inputTokens + result.spend!.outputTokens;
      spentCalls += result.spend!.toolCalls;
      state = await idleAfter(conversationId, turn);
    }
    expect(state!.runs).toBeGreaterThanOrEqual(1);
    expect(state!.budget!.limits).toEqual(budget);
    expect(state!.budget!.spent.inputTokens + state!.budget!.spent.outputTokens).toBe(spentTokens);
    expect(state!.budget!.spent.toolCalls).toBe(spentCalls);
  });

  it('settles a waiting budget approval when a newer message supersedes the turn', async () => {
    const conversationId = `conv-${randomUUID()}`;
    const first = await send(conversationId, TWO_STEPS, { totalTokens: 30 });
    const [pending] = await waitForPending(turnpike.client.workflow.getHandle(first.turnWorkflowId));
    expect(pending.kind).toBe('budget');
    const second = await client.sendMessage({ conversationId, text: 'never mind', policy: 'supersede', conversation: { model: scripted } });
    const result = await client.turnResult(first.turnWorkflowId, { pollIntervalMs: 50 });
    expect(result.status).toBe('cancelled');
    expect(result.supersededBy).toBeDefined();
    expect(result.decisions).toEqual([expect.objectContaining({ toolCallId: 'budget-1', outcome: 'superseded' })]);
    expectEveryCallAnsweredOnce(result.messages);
    // The first turn spent the conversation's budget: the next one asks before its first step.
    const [next] = await waitForPending(turnpike.client.workflow.getHandle(second.turnWorkflowId));
    expect(next).toMatchObject({ kind: 'budget', toolCallId: 'budget-1', input: { exceeded: ['totalTokens'], budget: { totalTokens: 0 } } });
    await client.approveToolCall(second.turnWorkflowId, { approvalId: next.approvalId!, approved: false });
    expect((await client.turnResult(second.turnWorkflowId, { pollIntervalMs: 50 })).status).toBe('budget-exceeded');
    await idleAfter(conversationId, 2);
  });

  it("parks a turn that starts with nothing left; the extension granted there grows the conversation's budget", async () => {
    const conversationId = `conv-${randomUUID()}`;
    const first = await send(conversationId, 'look up order 1001', { totalTokens: 40 });
    expect((await client.turnResult(first.turnWorkflowId, { waitForStart: true, pollIntervalMs: 50 })).status).toBe('completed');
    await idleAfter(conversationId, 1);

    const second = await send(conversationId, 'look up order 1002', { totalTokens: 40 });
    const [pending] = await waitForPending(turnpike.client.workflow.getHandle(second.turnWorkflowId));
    // Nothing left: the turn asks before its first model step, offering the conversation's own limit.
    expect(pending.input).toMatchObject({ exceeded: ['totalTokens'], budget: { totalTokens: 0 }, extendBy: { totalTokens: 40 } });
    await client.extendBudget(second.turnWorkflowId, pending.approvalId!, { totalTokens: 10_000 }, { approver: 'carol' });
    expect((await client.turnResult(second.turnWorkflowId, { pollIntervalMs: 50 })).status).toBe('completed');
    const state = await idleAfter(conversationId, 2);
    expect(state.budget!.limits).toEqual({ totalTokens: 10_040 });
  });

  it('counts what a failed turn spent before it failed, and gives the next turn what remains', async () => {
    const conversationId = `conv-${randomUUID()}`;
    const model: ModelSettings = { provider: 'openai', model: 'gpt-4.1-mini' };
    const usage = { inputTokens: 100, outputTokens: 7 };
    fake.reset();
    // One step with a tool call, then a request the API refuses: the turn fails (not retryable).
    fake.script('openai', [{ toolCalls: [{ name: 'lookup_order', input: { orderId: '1001' } }], usage }, { status: 400, message: 'Invalid request.' }, { text: 'Fine now.', usage }]);
    const budget = { totalTokens: 10_000, toolCalls: 10 };
    const first = await client.sendMessage({ conversationId, text: 'Look up order 1001.', conversation: { model, budget } });
    noteStarted(client.conversation(conversationId));
    noteStarted(client.turn(first.turnWorkflowId));
    await expect(client.turnResult(first.turnWorkflowId, { waitForStart: true, pollIntervalMs: 50 })).rejects.toThrow();
    const state = await idleAfter(conversationId, 1);
    expect(state.failedTurns).toEqual([first.turnWorkflowId]);
    expect(state.budget!.spent).toMatchObject({ inputTokens: 100, outputTokens: 7, toolCalls: 1 });
    expect(state.budget!.limits).toEqual(budget);

    const second = await client.sendMessage({ conversationId, text: 'Try again.', conversation: { model, budget } });
    noteStarted(client.turn(second.turnWorkflowId));
    const result = await client.turnResult(second.turnWorkflowId, { waitForStart: true, pollIntervalMs: 50 });
    expect(result.status).toBe('completed');
    expect(result.budget).toEqual({ totalTokens: 10_000 - 107, toolCalls: 9 });
  });
});
