/**
 * Budgets a person can extend, on a real dev server with the scripted model (which reports token
 * usage) and a worker price table extended for it: a limit reached parks a budget approval,
 * listed and decided like a tool approval; extending it lets the turn go on, stopping it ends the
 * turn `budget-exceeded` with a valid history.
 */
import { WorkflowFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TurnpikeClient, type ParkedCall } from '../../client/turnpike-client.js';
import { turnStateQuery } from '../../workflows/definitions.js';
import type { AgentTurnResult, Message, ToolMessage } from '../../workflows/types.js';
import { testTools } from '../support/test-tools.js';
import { startTurnpike, waitForPending, waitForState, type TurnpikeHarness } from '../support/turnpike-harness.js';

let turnpike: TurnpikeHarness;
let client: TurnpikeClient;
beforeAll(async () => {
  // USD 1,000 per million tokens: a scripted step of ~40 tokens costs ~USD 0.04.
  turnpike = await startTurnpike({ tools: testTools, prices: { 'scripted:demo': { input: 1000, output: 1000 } } });
  client = new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue });
});
afterAll(async () => turnpike?.stop());

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

