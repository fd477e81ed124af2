/**
 * agentConversation on the real dev server: history kept server-side across turns, messages
 * that arrive while a turn is parked (queue and supersede), idempotent sendMessage, and
 * continue-as-new with a parked turn (the test server suggests it after 40 events).
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { TurnpikeClient, TurnpikeRejectedError } from '../../client/turnpike-client.js';
import type { AgentConversationInput, AgentTurnResult, ModelSettings } from '../../workflows/types/index.js';
import { noteStarted } from '../support/history-recorder.js';
import { executionsOf, testTools, use } from '../support/test-tools.js';
import { waitForState, useTurnpikeWithFakes } from '../support/turnpike-harness.js';

const suite = useTurnpikeWithFakes({ tools: testTools });

const scripted: ModelSettings = { provider: 'scripted', model: 'demo' };
const anthropic: ModelSettings = { provider: 'anthropic', model: 'claude-sonnet-4-5', maxTokens: 256 };

function settings(model: ModelSettings, extra: Partial<AgentConversationInput> = {}): Omit<AgentConversationInput, 'carried' | 'conversationId'> {
  return { model, ...extra };
}

/** Notes the conversation and the message's turn for `npm run record-histories`. */
async function send(request: Parameters<TurnpikeClient['sendMessage']>[0]) {
  const reply = await suite.client.sendMessage(request);
  if (reply.turnNumber === 1) noteStarted(suite.client.conversation(request.conversationId));
  noteStarted(suite.client.turn(reply.turnWorkflowId));
  return reply;
}

async function turnResult(turnWorkflowId: string): Promise<AgentTurnResult> {
  return suite.client.turnResult(turnWorkflowId, { waitForStart: true, pollIntervalMs: 50 });
}

/** Waits until the conversation has absorbed `turns` finished turns. */
async function waitForIdle(conversationId: string, turns: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const state = await suite.client.conversationState(conversationId).catch(() => undefined);
    if (state && state.turns === turns && !state.currentTurn && state.queued.length === 0) return;
    if (Date.now() > deadline) throw new Error(`conversation never went idle: ${JSON.stringify(state)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function waitForParked(conversationId: string, count = 1) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const pending = await suite.client.conversationPending(conversationId).catch(() => []);
    if (pending.length === count) return pending;
    if (Date.now() > deadline) throw new Error(`no parked call in ${conversationId}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('agentConversation', () => {
  it('runs three turns where the caller sends only the new text, and the model receives the full history each time', async () => {
    const conversationId = `conv-${randomUUID()}`;
    suite.fake.script('anthropic', [
      { text: 'Hello! How can I help?' },
      { toolCalls: [{ name: 'record_action', input: { action: 'note' } }] },
      { text: 'Noted.' },
      { text: 'You asked me to take a note.' },
    ]);
    const texts = ['Hi there', 'Take a note', 'What did I ask?'];
    const turnIds: string[] = [];
    for (const text of texts) {
      const sent = await send({ conversationId, text, conversation: settings(anthropic, { system: 'Be brief.' }) });
      turnIds.push(sent.turnWorkflowId);
      await turnResult(sent.turnWorkflowId);
      await waitForIdle(conversationId, turnIds.length);
    }
    expect(turnIds).toEqual([1, 2, 3].map((n) => `${conversationId}/turn-${n}`));

    const requests = suite.fake.requests.filter((request) => request.provider === 'anthropic');
    expect(requests.flatMap((request) => request.errors)).toEqual([]);
    // Each turn's first request carries every earlier message: 1, then 3, then 7 messages.
    const firstOfTurn = [requests[0], requests[1], requests[3]];
    expect(firstOfTurn.map((request) => request.body.messages.length)).toEqual([1, 3, 7]);
    expect(JSON.stringify(firstOfTurn[2].body.messages)).toContain('Take a note');
    expect(JSON.stringify(firstOfTurn[2].body.messages)).toContain('Noted.');

    const history = await suite.client.history(conversationId);
    expect(history.total).toBe(8);
    expect(history.messages.filter((message) => message.role === 'user').map((message) => message.content)).toEqual(texts);
    const page = await suite.client.history(conversationId, { offset: 2, limit: 3 });
    expect(page).toEqual({ messages: history.messages.slice(2, 5), offset: 2, total: 8 });
  });

  it('queues a message that arrives while a turn waits for approval, and runs it after the approval', async () => {
    const conversationId = `conv-${randomUUID()}`;
    const first = await send({ conversationId, text: use('guarded_action', { target: 'queue', count: 1 }), conversation: settings(scripted) });
    const [parked] = await waitForParked(conversationId);
    const second = await send({ conversationId, text: 'look up order 1002', conversation: settings(scripted) });
    expect(second).toMatchObject({ turnWorkflowId: `${conversationId}/turn-2`, turnNumber: 2, queued: true });
    const waiting = await suite.client.conversationState(conversationId);
    expect(waiting).toMatchObject({ currentTurn: { turnWorkflowId: first.turnWorkflowId }, queued: [{ turnWorkflowId: second.turnWorkflowId }] });

    await suite.client.approveToolCall(parked.turnWorkflowId, { approvalId: parked.approvalId!, approved: true, approver: 'alice' });
    expect((await turnResult(first.turnWorkflowId)).toolCalls[0].outcome).toBe('approved');
    const secondResult = await turnResult(second.turnWorkflowId);
    expect(secondResult.text).toContain('Coffee grinder');
    await waitForIdle(conversationId, 2);
    const { messages } = await suite.client.history(conversationId);
    expect(messages.filter((message) => message.role === 'user').map((message) => message.content)).toEqual([
      use('guarded_action', { target: 'queue', count: 1 }),
      'look up order 1002',
    ]);
  });

  it('supersedes a parked turn: the parked call is answered with the reason, and the next request is valid for Anthropic', async () => {
    const conversationId = `conv-${randomUUID()}`;
    suite.fake.script('anthropic', [
      { toolCalls: [{ name: 'guarded_action', input: { target: 'old-plan', count: 1 } }, { name: 'record_action', input: { action: 'prep' } }] },
      { text: 'Understood, doing the new thing instead.' },
    ]);
    const first = await send({ conversationId, text: 'Do the old plan', conversation: settings(anthropic) });
    await waitForParked(conversationId);
    const second = await send({ conversationId, text: 'Never mind, new plan', policy: 'supersede', conversation: settings(anthropic) });
    expect(second.supersededTurn).toBe(first.turnWorkflowId);

    const superseded = await turnResult(first.turnWorkflowId);
    expect(superseded).toMatchObject({ status: 'cancelled', supersededBy: second.messageId });
    expect(superseded.toolCalls.map((call) => call.outcome)).toEqual(['cancelled', 'executed']);
    expect(String(superseded.toolCalls[0].output)).toMatch(/Superseded: A newer user message superseded this turn/);
    expect(executionsOf(first.turnWorkflowId).map((execution) => execution.toolName)).toEqual(['record_action']);

    expect((await turnResult(second.turnWorkflowId)).text).toBe('Understood, doing the new thing instead.');
    const requests = suite.fake.requests.filter((request) => request.provider === 'anthropic');
    expect(requests).toHaveLength(2);
    expect(requests.flatMap((request) => request.errors)).toEqual([]);
    expect(JSON.stringify(requests[1].body.messages)).toContain('superseded this turn');
  });

  it('starts one turn for a duplicate sendMessage with the same message id', async () => {
    const conversationId = `conv-${randomUUID()}`;
    const messageId = `msg-${randomUUID()}`;
    const request = { conversationId, messageId, text: use('record_action', { action: 'once' }), conversation: settings(scripted) };
    const [a, b] = await Promise.all([send(request), send(request)]);
    const c = await send(request);
    expect(b).toEqual(a);
    expect(c).toEqual(a);
    await turnResult(a.turnWorkflowId);
    await waitForIdle(conversationId, 1);
    expect((await suite.client.conversationState(conversationId)).turns).toBe(1);
    expect(executionsOf(a.turnWorkflowId)).toHaveLength(1);
  });

  it('rejects a malformed message with a clear error', async () => {
    const conversationId = `conv-${randomUUID()}`;
    await send({ conversationId, text: 'hello', conversation: settings(scripted) });
    const error = await send({ conversationId, text: '', conversation: settings(scripted) }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TurnpikeRejectedError);
    expect((error as TurnpikeRejectedError).message).toMatch(/Invalid sendMessage: text/);
    await waitForIdle(conversationId, 1);
  });

  it('sends a later message without `conversation`, and refuses a first one without it, naming what is missing', async () => {
    const conversationId = `conv-${randomUUID()}`;
    const first = await send({ conversationId, text: use('record_action', { action: 'first' }), conversation: settings(scripted) });
    await turnResult(first.turnWorkflowId);
    await waitForIdle(conversationId, 1);
    const later = await send({ conversationId, text: use('record_action', { action: 'later' }) });
    expect(later).toMatchObject({ turnWorkflowId: `${conversationId}/turn-2`, turnNumber: 2 });
    expect(await turnResult(later.turnWorkflowId)).toMatchObject({ status: 'completed' });
    expect(executionsOf(later.turnWorkflowId).map((execution) => execution.input)).toEqual([{ action: 'later' }]);

    const unknown = `conv-${randomUUID()}`;
    const error = await send({ conversationId: unknown, text: 'hello' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TurnpikeRejectedError);
    expect((error as TurnpikeRejectedError).type).toBe('InvalidRequest');
    expect((error as TurnpikeRejectedError).message).toBe(
      `Invalid sendMessage: conversation "${unknown}" is not running, so this message would create it, and creating it needs \`conversation\`, its settings (\`model\` or \`agents\`)`,
    );
    // Nothing was started under that id.
    expect(await suite.client.conversationState(unknown).catch((caught: unknown) => caught)).toBeInstanceOf(Error);
  });

  it('continues-as-new and keeps every message, while a parked turn stays reachable', async () => {
    const conversationId = `conv-${randomUUID()}`;
    const sent: string[] = [];
    for (let index = 0; index < 4; index++) {
      const text = use('record_action', { action: `step-${index}` });
      const reply = await send({ conversationId, text, conversation: settings(scripted) });
      sent.push(text);
      await turnResult(reply.turnWorkflowId);
      await waitForIdle(conversationId, index + 1);
    }
    const parkedText = use('guarded_action', { target: 'after-can', count: 1 });
    const parkedTurn = await send({ conversationId, text: parkedText, conversation: settings(scripted) });
    const [parked] = await waitForParked(conversationId);
    // More messages queue behind the parked turn and push the conversation past the threshold.
    const queuedTexts = ['look up order 1001', 'look up order 1003'];
    for (const text of queuedTexts) await send({ conversationId, text, conversation: settings(scripted) });
    const handle = suite.client.conversation(conversationId);
    await waitForState(suite.turnpike.client.workflow.getHandle(parked.turnWorkflowId), (state) => state.pending.length === 1);
    const deadline = Date.now() + 30_000;
    while ((await suite.client.conversationState(conversationId)).runs === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const during = await suite.client.conversationState(conversationId);
    expect(during.runs).toBeGreaterThanOrEqual(1);
    expect(during.currentTurn?.turnWorkflowId).toBe(parkedTurn.turnWorkflowId);
    expect((await suite.client.conversationPending(conversationId))[0].approvalId).toBe(parked.approvalId);

    await suite.client.approveToolCall(parked.turnWorkflowId, { approvalId: parked.approvalId!, approved: true, approver: 'bob' });
    await waitForIdle(conversationId, 7);
    const { messages, total } = await suite.client.history(conversationId, { limit: 1000 });
    expect(messages.filter((message) => message.role === 'user').map((message) => message.content)).toEqual([...sent, parkedText, ...queuedTexts]);
    // 7 turns, each one tool step: the user message, the assistant's call, its result, the answer.
    expect(total).toBe(7 * 4);
    const description = await handle.describe();
    expect(description.runId).not.toBe(description.raw.workflowExecutionInfo?.firstRunId);
  });
});
