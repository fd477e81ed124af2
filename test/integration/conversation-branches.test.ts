/**
 * Conversations people can steer, on the real dev server with the strict OpenAI fake: regenerate
 * the last answer, edit an earlier message (its branch shares the history before it), parked
 * calls on the abandoned path ended with one result each, and branches read and made current.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Payload } from '@temporalio/common';
import type { Message, ModelSettings } from '../../workflows/types/index.js';
import { noteStarted } from '../support/history-recorder.js';
import { executionsOf, testTools } from '../support/test-tools.js';
import { useTurnpikeWithFakes } from '../support/turnpike-harness.js';

const suite = useTurnpikeWithFakes({ tools: testTools });

const openai: ModelSettings = { provider: 'openai', model: 'gpt-4.1-mini', maxTokens: 256 };

async function send(conversationId: string, text: string, messageId?: string) {
  const reply = await suite.client.sendMessage({ conversationId, text, ...(messageId ? { messageId } : {}), conversation: { model: openai } });
  if (reply.turnNumber === 1) noteStarted(suite.client.conversation(conversationId));
  noteStarted(suite.client.turn(reply.turnWorkflowId));
  return reply;
}

async function until<T>(what: string, read: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const value = await read().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function idle(conversationId: string, turns: number) {
  return until(`${turns} turns absorbed`, async () => {
    const state = await suite.client.conversationState(conversationId);
    return state.turns === turns && !state.currentTurn && state.queued.length === 0 ? state : undefined;
  });
}

const openaiRequests = () => suite.fake.requests.filter((request) => request.provider === 'openai');
/** Each message's text: a string content, or its text parts joined. */
const texts = (messages: Message[]) =>
  messages.map((message) =>
    typeof message.content === 'string'
      ? message.content
      : (message.content as Array<{ type: string; text?: string }>).map((part) => (part.type === 'text' ? part.text : `[${part.type}]`)).join(''),
  );

/** The decoded size of the conversation's newest run's input: what continue-as-new carried. */
async function carriedBytes(conversationId: string): Promise<number> {
  const history = await suite.client.conversation(conversationId).fetchHistory();
  const payloads = (history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads ?? []) as Payload[];
  let decoded = payloads;
  for (const codec of [...suite.turnpike.client.options.loadedDataConverter.payloadCodecs].reverse()) decoded = await codec.decode(decoded);
  return decoded.reduce((sum, payload) => sum + (payload.data?.length ?? 0), 0);
}

describe('conversation branches', () => {
  it('regenerates the last answer of a 4-turn conversation: the model gets the history without it, the new answer is current, the old one a branch', async () => {
    const conversationId = `branch-${randomUUID()}`;
    suite.fake.script('openai', [{ text: 'A1' }, { text: 'A2' }, { text: 'A3' }, { text: 'A4 (old)' }, { text: 'A4 (new)' }]);
    for (const [index, text] of ['Q1', 'Q2', 'Q3', 'Q4'].entries()) {
      await send(conversationId, text);
      await idle(conversationId, index + 1);
    }
    const regenerated = await suite.client.regenerate(conversationId, { options: { system: 'Answer again.' } });
    expect(regenerated).toMatchObject({ branch: 'branch-1', turnWorkflowId: `${conversationId}/turn-5`, queued: false });
    noteStarted(suite.client.turn(regenerated.turnWorkflowId));
    await idle(conversationId, 5);

    const requests = openaiRequests();
    expect(requests).toHaveLength(5);
    expect(requests.flatMap((request) => request.errors)).toEqual([]);
    const asked = JSON.stringify(requests[4].body.messages);
    expect(asked).not.toContain('A4 (old)');
    expect(asked).toContain('Answer again.');
    expect((requests[4].body.messages as Array<{ role: string }>).filter((message) => message.role !== 'system')).toHaveLength(7);

    const current = await suite.client.history(conversationId);
    expect(texts(current.messages)).toEqual(['Q1', 'A1', 'Q2', 'A2', 'Q3', 'A3', 'Q4', 'A4 (new)']);
    const old = await suite.client.history(conversationId, { branch: 'main' });
    expect(texts(old.messages)).toEqual(['Q1', 'A1', 'Q2', 'A2', 'Q3', 'A3', 'Q4', 'A4 (old)']);
    const listed = await suite.client.branches(conversationId);
    expect(listed).toEqual({
      current: 'branch-1',
      branches: [
        { id: 'main', reason: 'start', forkedAt: 0, messages: 8, current: false, lastTurn: `${conversationId}/turn-4` },
        { id: 'branch-1', reason: 'regenerate', forkedFrom: 'main', forkedAt: 7, messages: 8, current: true, lastTurn: `${conversationId}/turn-5` },
      ],
    });
    expect((await suite.client.conversationState(conversationId)).branch).toBe('branch-1');

    // Made current again, the old answer is the history the next message continues.
    await suite.client.switchBranch(conversationId, 'main');
    suite.fake.script('openai', [{ text: 'A5' }]);
    await send(conversationId, 'Q5');
    await idle(conversationId, 6);
    expect(JSON.stringify(openaiRequests().at(-1)!.body.messages)).toContain('A4 (old)');
    expect(texts((await suite.client.history(conversationId, { branch: 'branch-1' })).messages).at(-1)).toBe('A4 (new)');
  });

  it('edits message 2 of 5: the new branch shares message 1, the old one stays whole, and its parked calls end with one result each', async () => {
    const conversationId = `branch-${randomUUID()}`;
    // A large first exchange, so that a copied prefix would show in what the conversation carries.
    const big = randomBytes(15_000).toString('hex').slice(0, 30_000);
    const bigAnswer = randomBytes(15_000).toString('hex').slice(0, 30_000);
    suite.fake.script('openai', [
      { text: bigAnswer },
      { text: 'A2' },
      { text: 'A3' },
      { text: 'A4' },
      { toolCalls: [{ name: 'guarded_action', input: { target: 'old-path', count: 1 } }, { name: 'guarded_action', input: { target: 'old-path', count: 2 } }] },
      { text: 'A2 (edited)' },
    ]);
    const ids = ['m1', 'm2', 'm3', 'm4', 'm5'].map((id) => `${id}-${randomUUID()}`);
    for (const [index, text] of [big, 'Q2', 'Q3', 'Q4'].entries()) {
      await send(conversationId, text, ids[index]);
      await idle(conversationId, index + 1);
    }
    const fifth = await send(conversationId, 'Q5: do the guarded thing', ids[4]);
    await until('two parked calls', async () => ((await suite.client.turnState(fifth.turnWorkflowId)).pending.length === 2 ? true : undefined));

    const edited = await suite.client.editMessage(conversationId, { messageId: ids[1], text: 'Q2 (edited)' });
    expect(edited).toMatchObject({ branch: 'branch-1', supersededTurn: fifth.turnWorkflowId, queued: true, messageId: ids[1] });
    noteStarted(suite.client.turn(edited.turnWorkflowId));

    // The parked calls on the abandoned path: one result each, and no tool ran.
    const abandoned = await suite.client.turnResult(fifth.turnWorkflowId);
    expect(abandoned.status).toBe('cancelled');
    expect(abandoned.toolCalls.map((call) => call.outcome)).toEqual(['cancelled', 'cancelled']);
    expect(executionsOf(fifth.turnWorkflowId)).toEqual([]);
    await idle(conversationId, 6);

    const requests = openaiRequests();
    expect(requests.flatMap((request) => request.errors)).toEqual([]);
    const first = requests.at(-1)!.body.messages as Array<{ role: string; content: unknown }>;
    expect(first.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
    expect(JSON.stringify(first)).toContain(big);
    expect(first[2].content).toBe('Q2 (edited)');

    const old = (await suite.client.history(conversationId, { branch: 'main' })).messages;
    expect(texts(old).slice(0, 9)).toEqual([big, bigAnswer, 'Q2', 'A2', 'Q3', 'A3', 'Q4', 'A4', 'Q5: do the guarded thing']);
    const callIds = JSON.stringify(old.filter((message) => message.role === 'assistant')).match(/"toolCallId":"[^"]+"/g) ?? [];
    const resultIds = JSON.stringify(old.filter((message) => message.role === 'tool')).match(/"toolCallId":"[^"]+"/g) ?? [];
    expect(callIds).toHaveLength(2);
    expect(resultIds.sort()).toEqual(callIds.sort());
    expect(texts((await suite.client.history(conversationId)).messages)).toEqual([big, bigAnswer, 'Q2 (edited)', 'A2 (edited)']);

    // Payloads: the conversation carries both branches in under twice one branch, the shared prefix once.
    const before = (await suite.client.conversationState(conversationId)).runs;
    // Short exchanges on the new branch until the conversation continues as new (the test server suggests it after 40 events).
    for (let turns = 7; (await suite.client.conversationState(conversationId)).runs === before; turns++) {
      if (turns > 20) throw new Error('the conversation never continued as new');
      suite.fake.script('openai', [{ text: `A${turns}` }]);
      await send(conversationId, `Q${turns} on the new branch`);
      await idle(conversationId, turns);
    }
    const both = await carriedBytes(conversationId);
    const oneBranch = JSON.stringify(old).length;
    const prefix = big.length + bigAnswer.length;
    console.log(`conversation-branches: carried ${both} bytes for both branches; the old branch alone is ${oneBranch} bytes, its shared prefix ${prefix}`);
    expect(both).toBeLessThan(2 * oneBranch);
    expect(both).toBeLessThan(oneBranch + prefix / 2);
  });

  it('refuses an edit of a message the branch does not hold, and a switch to a branch that does not exist', async () => {
    const conversationId = `branch-${randomUUID()}`;
    suite.fake.script('openai', [{ text: 'A1' }]);
    await send(conversationId, 'Q1');
    await idle(conversationId, 1);
    await expect(suite.client.editMessage(conversationId, { messageId: 'nope', text: 'x' })).rejects.toThrow(/not a user message of the current branch/);
    await expect(suite.client.switchBranch(conversationId, 'branch-9')).rejects.toThrow(/no branch "branch-9"/);
    expect(await suite.client.branches(conversationId)).toEqual({ current: 'main', branches: [{ id: 'main', reason: 'start', forkedAt: 0, messages: 2, current: true, lastTurn: `${conversationId}/turn-1` }] });
  });
});
