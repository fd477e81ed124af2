/**
 * A child's tool calls count in its parent's `toolCalls` budget (issue #40), on the real dev
 * server through the real OpenAI SDK and the strict fake provider: a parent that called an agent
 * tool whose child made two calls has spent three, so its next agent tool call parks a budget
 * approval before a second child starts; a parent that hands over to a new run keeps counting
 * them. The same for a conversation's budget, whose spend keeps the child's calls across
 * continue-as-new. Several children of one step share what is left of the parent's budget
 * (issue #54): together they stay within its token and call limits, a call waiting for its
 * approval keeps its share, and what a child did not spend goes to the children after it.
 */
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgentTool } from '../../activities/agent-tools.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { turnStateQuery } from '../../workflows/messages/definitions.js';
import type { agentTurn } from '../../workflows/index.js';
import type { AgentTurnResult, ConversationState, Message, ModelSettings, ToolCallRecord } from '../../workflows/types/index.js';
import { useFakeProviders } from '../support/fake-providers.js';
import { noteStarted } from '../support/history-recorder.js';
import { executionsOf, testTools } from '../support/test-tools.js';
import { startTurnpike, waitForPending, waitForState, type TurnpikeHarness } from '../support/turnpike-harness.js';

const model: ModelSettings = { provider: 'openai', model: 'gpt-4.1-mini', maxTokens: 512 };
const researcher = defineAgentTool({
  name: 'researcher',
  description: 'Researches a target.',
  inputSchema: z.object({ target: z.string() }),
  agent: { model, system: 'You are the researcher.', tools: ['record_action'], maxSteps: 4 },
});
const reviewer = defineAgentTool({
  name: 'reviewer',
  description: 'Reviews a target, once a person agreed.',
  inputSchema: z.object({ target: z.string() }),
  agent: { model, system: 'You are the reviewer.', tools: [] },
  approval: true,
  approvers: ['carol'],
});

let fake: Awaited<ReturnType<typeof useFakeProviders>>;
let turnpike: TurnpikeHarness;
let client: TurnpikeClient;

beforeAll(async () => {
  fake = await useFakeProviders();
  turnpike = await startTurnpike({ tools: [...testTools, researcher, reviewer] });
  client = new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue });
});

afterAll(async () => {
  await turnpike?.stop();
  await fake?.restore();
});

beforeEach(() => fake.reset());

const research = (id: string, target: string) => ({ toolCalls: [{ id, name: 'researcher', input: { target } }] });
const lookups = (...actions: string[]) => ({ toolCalls: actions.map((action) => ({ name: 'record_action', input: { action } })) });

/** The parent calls the researcher; its child makes two lookups and answers; the parent calls the researcher again. */
const UP_TO_SECOND_CHILD = [research('call_research_1', 'prod-db'), lookups('inspect prod-db', 'inspect backups'), { text: 'prod-db has no backups.' }, research('call_research_2', 'staging-db')];

const childOf = (parentId: string, toolCallId: string) => turnpike.client.workflow.getHandle<typeof agentTurn>(`${parentId}/${toolCallId}`);
const childResultOf = (parentId: string, toolCallId: string): Promise<AgentTurnResult> => client.turnResult(`${parentId}/${toolCallId}`, { waitForStart: true, pollIntervalMs: 50 });
const outcomes = (records: ToolCallRecord[]) => records.map((call) => [call.toolCallId, call.outcome]);

/** Every tool call in these messages has exactly one result. */
function expectOneResultEach(messages: Message[]): void {
  const calls = messages.flatMap((message) => (message.role === 'assistant' ? message.content.filter((part) => part.type === 'tool-call').map((part) => part.toolCallId) : []));
  const results = messages.flatMap((message) => (message.role === 'tool' ? message.content.map((part) => part.toolCallId) : []));
  expect(results.sort()).toEqual(calls.sort());
}

/** The budget approval a parent parks once its first child's calls are counted, and proof no second child started. */
async function parkedBeforeSecondChild(parent: WorkflowHandle) {
  const first = await childResultOf(parent.workflowId, 'call_research_1');
  expect(first).toMatchObject({ status: 'completed', budget: { toolCalls: 2 }, spend: { toolCalls: 2 } });
  const [pending] = await waitForPending(parent);
  // Its own researcher call and the child's two lookups: the second researcher call would make four.
  expect(pending).toMatchObject({ kind: 'budget', toolName: 'turnpike_budget', input: { exceeded: ['toolCalls'], budget: { toolCalls: 3 }, spent: { toolCalls: 3 }, extendBy: { toolCalls: 3 } } });
  const state = await parent.query(turnStateQuery);
  expect(state.budget).toMatchObject({ limits: { toolCalls: 3 }, spent: { toolCalls: 3 } });
  await expect(childOf(parent.workflowId, 'call_research_2').describe()).rejects.toThrow(/not found/i);
  return pending;
}

describe("a child's tool calls in its parent's toolCalls budget", () => {
  it('parks before the second child starts; extended, the turn completes with every call counted', async () => {
    fake.script('openai', [...UP_TO_SECOND_CHILD, lookups('inspect staging-db'), { text: 'staging-db is fine.' }, { text: 'prod-db needs backups; staging-db is fine.' }]);
    const parent = await turnpike.startTurn({ model, text: 'Research prod-db, then staging-db.', tools: ['researcher'], budget: { toolCalls: 3 } });
    const pending = await parkedBeforeSecondChild(parent);

    await client.approveToolCall(parent.workflowId, { approvalId: pending.approvalId!, approved: true, approver: 'carol' });
    const result = await parent.result();
    // Six calls now allowed; four spent before the second child, which was given the two left.
    expect((await childResultOf(parent.workflowId, 'call_research_2')).budget).toEqual({ toolCalls: 2 });
    expect(result).toMatchObject({ status: 'completed', text: 'prod-db needs backups; staging-db is fine.', budget: { toolCalls: 6 }, spend: { toolCalls: 5 } });
    expect(outcomes(result.toolCalls)).toEqual([
      ['call_research_1', 'executed'],
      ['call_research_2', 'executed'],
    ]);
    expectOneResultEach(result.messages);
    // The first child's two lookups run in parallel, in either order.
    expect(executionsOf(parent.workflowId).map((run) => (run.input as { action: string }).action).sort()).toEqual(['inspect backups', 'inspect prod-db', 'inspect staging-db']);
    expect(fake.requests.flatMap((request) => request.errors)).toEqual([]);
  });

  it('stopped there, the turn ends budget-exceeded, the second call answered without a child', async () => {
    fake.script('openai', UP_TO_SECOND_CHILD);
    const parent = await turnpike.startTurn({ model, text: 'Research prod-db, then staging-db.', tools: ['researcher'], budget: { toolCalls: 3 } });
    const pending = await parkedBeforeSecondChild(parent);

    await client.approveToolCall(parent.workflowId, { approvalId: pending.approvalId!, approved: false, approver: 'carol' });
    const result = await parent.result();
    expect(result).toMatchObject({ status: 'budget-exceeded', budget: { toolCalls: 3 }, spend: { toolCalls: 4 } });
    expect(outcomes(result.toolCalls)).toEqual([
      ['call_research_1', 'executed'],
      ['call_research_2', 'cancelled'],
    ]);
    expect(String(result.toolCalls[1].output)).toMatch(/budget stopped before "researcher" ran/);
    expectOneResultEach(result.messages);
    await expect(childOf(parent.workflowId, 'call_research_2').describe()).rejects.toThrow(/not found/i);
    expect(executionsOf(parent.workflowId)).toHaveLength(2);
    expect(fake.requests.flatMap((request) => request.errors)).toEqual([]);
  });
});

describe("a child's tool calls across the parent's hand-over", () => {
  it('still counts them in the run the parent handed over to', async () => {
    // Eight steps of one call each after the first child, enough for a history of 100 events to hand over.
    const padding = Array.from({ length: 8 }, (_, index) => lookups(`note ${index}`));
    fake.script('openai', [...UP_TO_SECOND_CHILD.slice(0, 3), ...padding, research('call_research_2', 'staging-db')]);
    const parent = await turnpike.startTurn({ model, text: 'Research prod-db, note it, then research staging-db.', tools: ['researcher', 'record_action'], maxSteps: 20, historyLimit: { events: 100 }, budget: { toolCalls: 11 } });
    const [pending] = await waitForPending(parent);
    // 1 + 2 of the first child + 8: the second researcher call would make twelve.
    expect(pending).toMatchObject({ kind: 'budget', input: { exceeded: ['toolCalls'], budget: { toolCalls: 11 }, spent: { toolCalls: 11 } } });
    const runs = [];
    for await (const execution of turnpike.client.workflow.list({ query: `WorkflowId = "${parent.workflowId}"` })) runs.push(execution);
    expect(runs.length).toBeGreaterThan(1);

    await client.approveToolCall(parent.workflowId, { approvalId: pending.approvalId!, approved: false });
    const result = await parent.result();
    expect(result).toMatchObject({ status: 'budget-exceeded', spend: { toolCalls: 12 } });
    expectOneResultEach(result.messages);
    await expect(childOf(parent.workflowId, 'call_research_2').describe()).rejects.toThrow(/not found/i);
  });
});

describe("a child's tool calls in a conversation's toolCalls budget", () => {
  async function idleAfter(conversationId: string, turns: number): Promise<ConversationState> {
    for (let attempt = 0; attempt < 300; attempt++) {
      const state = await client.conversationState(conversationId).catch(() => undefined);
      if (state && state.turns === turns && !state.currentTurn && state.queued.length === 0) return state;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`conversation ${conversationId} never absorbed ${turns} turns`);
  }

  it("parks the turn before its second child starts, and keeps the child's calls in the conversation's spend across continue-as-new", async () => {
    const conversationId = `conv-${randomUUID()}`;
    const conversation = { model, tools: ['researcher'], budget: { toolCalls: 3 } };
    fake.script('openai', UP_TO_SECOND_CHILD);
    const first = await client.sendMessage({ conversationId, text: 'Research prod-db, then staging-db.', conversation });
    noteStarted(client.conversation(conversationId));
    const turn = client.turn(first.turnWorkflowId);
    noteStarted(turn);
    const pending = await parkedBeforeSecondChild(turn);

    fake.script('openai', [{ text: 'staging-db is fine.' }, { text: 'prod-db needs backups; staging-db is fine.' }]);
    await client.approveToolCall(first.turnWorkflowId, { approvalId: pending.approvalId!, approved: true, approver: 'carol' });
    const result = await client.turnResult(first.turnWorkflowId, { pollIntervalMs: 50 });
    expect(result).toMatchObject({ status: 'completed', budget: { toolCalls: 6 }, spend: { toolCalls: 4 } });
    expectOneResultEach(result.messages);
    let state = await idleAfter(conversationId, 1);
    // The extension granted in the turn grows the conversation's limit; its spend has the child's calls.
    expect(state.budget).toMatchObject({ limits: { toolCalls: 6 }, spent: { toolCalls: 4 } });

    // Turns without calls until the conversation continues as new: each is given the two calls left.
    for (let turns = 2; turns <= 20 && state.runs === 0; turns++) {
      fake.script('openai', [{ text: `Reply ${turns}.` }]);
      const reply = await client.sendMessage({ conversationId, text: `Message ${turns}.`, conversation });
      noteStarted(client.turn(reply.turnWorkflowId));
      expect(await client.turnResult(reply.turnWorkflowId, { waitForStart: true, pollIntervalMs: 50 })).toMatchObject({ status: 'completed', budget: { toolCalls: 2 } });
      state = await idleAfter(conversationId, turns);
    }
    expect(state.runs).toBeGreaterThanOrEqual(1);
    expect(state.budget).toMatchObject({ limits: { toolCalls: 6 }, spent: { toolCalls: 4 } });
    expect(fake.requests.flatMap((request) => request.errors)).toEqual([]);
  });
});

describe("a step's agent tool calls share what is left of the parent's budget", () => {
  type Body = { messages: Array<{ role: string; content: unknown }> };
  const steps = (body: Body) => body.messages.filter((message) => message.role === 'assistant').length;
  const systemOf = (body: Body) => String(body.messages.find((message) => message.role === 'system')?.content ?? '');
  const twenty = { inputTokens: 16, outputTokens: 4 };

  it('gives three parallel children a third each, so together they stay within its tokens and calls; the parent then parks', async () => {
    // The parent's first step (15 tokens) calls the researcher three times. Each child would take
    // 20 tokens and two lookups a step, for three steps.
    fake.setDefault('openai', (body: Body) => {
      if (systemOf(body).includes('researcher')) return steps(body) < 2 ? { ...lookups('inspect', 'inspect backups'), usage: twenty } : { text: 'Fine.', usage: twenty };
      return steps(body) === 0 ? { toolCalls: ['a', 'b', 'c'].map((target) => ({ id: `call_research_${target}`, name: 'researcher', input: { target } })) } : { text: 'All fine.' };
    });
    const parent = await turnpike.startTurn({ model, text: 'Research a, b and c.', tools: ['researcher'], budget: { totalTokens: 75, toolCalls: 9 } });

    // 60 tokens and 6 calls are left after the parent's step and its three calls: a third each.
    for (const target of ['a', 'b', 'c']) {
      const child = childOf(parent.workflowId, `call_research_${target}`);
      const state = await waitForState(child, (turn) => turn.budget !== undefined);
      expect(state.budget!.limits).toEqual({ totalTokens: 20, toolCalls: 2 });
      // Its first step spent its 20 tokens: it asks before its second.
      const [pending] = await waitForPending(child);
      expect(pending).toMatchObject({ kind: 'budget', input: { exceeded: ['totalTokens'], spent: { inputTokens: 16, outputTokens: 4, toolCalls: 2 } } });
      await client.approveToolCall(child.workflowId, { approvalId: pending.approvalId!, approved: false, approver: 'carol' });
    }

    // The children spent 60 tokens and 6 calls, no more: the parent is at its limits, and asks before its next step.
    const [pending] = await waitForPending(parent);
    expect(pending).toMatchObject({ kind: 'budget', input: { exceeded: ['totalTokens'], budget: { totalTokens: 75, toolCalls: 9 }, spent: { inputTokens: 58, outputTokens: 17, toolCalls: 9 } } });
    await client.approveToolCall(parent.workflowId, { approvalId: pending.approvalId!, approved: false, approver: 'carol' });
    const result = await parent.result();
    expect(result).toMatchObject({ status: 'budget-exceeded', budget: { totalTokens: 75, toolCalls: 9 }, spend: { inputTokens: 58, outputTokens: 17, toolCalls: 9 } });
    expectOneResultEach(result.messages);
    expect(executionsOf(parent.workflowId)).toHaveLength(6);
    expect(fake.requests.flatMap((request) => request.errors)).toEqual([]);
  });

  it("holds a share for a call that waits for its approval, and gives it what the child before it did not spend", async () => {
    fake.setDefault('openai', (body: Body) => {
      if (systemOf(body).includes('researcher')) return steps(body) === 0 ? lookups('inspect a') : { text: 'a is fine.' };
      if (systemOf(body).includes('reviewer')) return { text: 'b looks right.' };
      return steps(body) === 0
        ? { toolCalls: [{ id: 'call_research_a', name: 'researcher', input: { target: 'a' } }, { id: 'call_review_b', name: 'reviewer', input: { target: 'b' } }] }
        : { text: 'a is fine; b looks right.' };
    });
    const parent = await turnpike.startTurn({ model, text: 'Research a and review b.', tools: ['researcher', 'reviewer'], budget: { toolCalls: 7 } });

    // Five calls are left after the step's two; the reviewer's call may still start a child, so the researcher gets half.
    const researched = await childResultOf(parent.workflowId, 'call_research_a');
    expect(researched).toMatchObject({ status: 'completed', budget: { toolCalls: 2 }, spend: { toolCalls: 1 } });
    const [approval] = await waitForPending(parent);
    expect(approval).toMatchObject({ toolCallId: 'call_review_b' });
    // The parent gives the researcher's share back as it takes the child's result (its tool-result
    // event); a decision that reached it before would find the share still held.
    for await (const { event } of client.turnEvents(parent.workflowId)) {
      if (event.type === 'tool-result' && event.toolCallId === 'call_research_a') break;
    }
    await client.approveToolCall(parent.workflowId, { approvalId: approval.approvalId!, approved: true, approver: 'carol' });

    // The researcher spent one of its two: the reviewer gets the four left.
    expect(await childResultOf(parent.workflowId, 'call_review_b')).toMatchObject({ status: 'completed', budget: { toolCalls: 4 }, spend: { toolCalls: 0 } });
    const result = await parent.result();
    expect(result).toMatchObject({ status: 'completed', text: 'a is fine; b looks right.', budget: { toolCalls: 7 }, spend: { toolCalls: 3 } });
    expectOneResultEach(result.messages);
  });
});
