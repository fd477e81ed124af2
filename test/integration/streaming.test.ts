/**
 * A turn's and a conversation's event streams on a real Temporal dev server with a real Worker
 * and the scripted model streaming its text as deltas.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import type { ConversationStreamEvent } from '../../client/conversation-events.js';
import type { TurnEvent, TurnEventRecord } from '../../workflows/types/turn-events.js';
import { useFakeProviders } from '../support/fake-providers.js';
import { noteStarted } from '../support/history-recorder.js';
import { testTools, use } from '../support/test-tools.js';
import { startTurnpike, waitForPending, type TurnpikeHarness } from '../support/turnpike-harness.js';

let turnpike: TurnpikeHarness;
let client: TurnpikeClient;
beforeAll(async () => {
  turnpike = await startTurnpike({ tools: testTools });
  client = new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue });
});
afterAll(async () => turnpike?.stop());

/** Reads events until one matches `until` (inclusive). */
async function readUntil(iterator: AsyncIterable<TurnEventRecord>, until: (event: TurnEvent) => boolean): Promise<TurnEventRecord[]> {
  const seen: TurnEventRecord[] = [];
  for await (const record of iterator) {
    seen.push(record);
    if (until(record.event)) break;
  }
  return seen;
}

function streamedText(records: TurnEventRecord[]): string {
  return records.map(({ event }) => (event.type === 'text-delta' ? event.text : '')).join('');
}

describe('turn events', () => {
  it('streams the events of a parked turn before it ends, in offset order, and the approval request', async () => {
    const handle = await turnpike.startTurn({ text: use('guarded_action', { target: 'door', count: 2 }) });
    const early = await readUntil(client.turnEvents(handle.workflowId), (event) => event.type === 'approval-requested');
    // The turn is still parked: nothing has ended it.
    expect((await handle.describe()).status.name).toBe('RUNNING');
    expect(early.map(({ offset }) => offset)).toEqual(early.map((_, index) => index));
    const types = early.map(({ event }) => event.type);
    expect(types).toEqual(['tool-input-start', 'tool-input-delta', 'step-finished', 'tool-call', 'approval-requested']);
    const [pending] = await waitForPending(handle);
    const request = early.at(-1)!.event;
    expect(request).toMatchObject({
      type: 'approval-requested',
      approvalId: pending.approvalId,
      toolCallId: pending.toolCallId,
      inputHash: pending.inputHash,
      expiresAt: pending.expiresAt,
      input: { target: 'door', count: 2 },
    });

    await client.approveToolCall(handle.workflowId, { approvalId: pending.approvalId!, approved: true, approver: 'alice' });
    const rest = await readUntil(client.turnEvents(handle.workflowId, { fromOffset: early.at(-1)!.offset + 1 }), (event) => event.type === 'turn-finished');
    const result = await handle.result();
    const restTypes = rest.map(({ event }) => event.type);
    expect(restTypes[0]).toBe('tool-result');
    expect(restTypes.slice(-2)).toEqual(['step-finished', 'turn-finished']);
    expect(new Set(restTypes.slice(1, -2))).toEqual(new Set(['text-delta']));
    expect(rest[0].event).toMatchObject({ type: 'tool-result', outcome: 'approved', output: { guarded: 'door', count: 2 } });
    // The deltas make up exactly the text the turn returns; the last event says how it ended.
    expect(streamedText(rest)).toBe(result.text);
    expect(rest.at(-1)!.event).toEqual({ type: 'turn-finished', status: 'completed', text: result.text, steps: 2, usage: result.usage });
  });

  it('gives a subscriber that connects after the turn parked the approval request', async () => {
    const handle = await turnpike.startTurn({ text: use('guarded_action', { target: 'late', count: 1 }) });
    const [pending] = await waitForPending(handle);
    const seen = await readUntil(client.turnEvents(handle.workflowId), (event) => event.type === 'approval-requested');
    expect(seen.at(-1)!.event).toMatchObject({ type: 'approval-requested', approvalId: pending.approvalId });
    await client.approveToolCall(handle.workflowId, { approvalId: pending.approvalId!, approved: false, reason: 'not today', approver: 'bob' });
    await handle.result();
  });

  it('stops a reader that aborts while the turn is parked, without waiting for another event', async () => {
    const handle = await turnpike.startTurn({ text: use('guarded_action', { target: 'abort', count: 1 }) });
    const abort = new AbortController();
    const iterator = client.turnEvents(handle.workflowId, { signal: abort.signal })[Symbol.asyncIterator]();
    let next = await iterator.next();
    while (!next.done && next.value.event.type !== 'approval-requested') next = await iterator.next();
    // The reader now long-polls a turn that will publish nothing until someone decides.
    const waiting = iterator.next();
    abort.abort();
    expect(await waiting).toEqual({ done: true, value: undefined });
    expect((await handle.describe()).status.name).toBe('RUNNING');
    const [pending] = await waitForPending(handle);
    await client.approveToolCall(handle.workflowId, { approvalId: pending.approvalId!, approved: true, approver: 'alice' });
    await handle.result();
  });

  it('resumes from an offset with every later event exactly once, also after the turn ended', async () => {
    const handle = await turnpike.startTurn({ text: `${use('record_action', { action: 'one' })} then ${use('record_action', { action: 'two' })}` });
    const all = await readUntil(client.turnEvents(handle.workflowId), (event) => event.type === 'turn-finished');
    await handle.result();
    expect(all.map(({ offset }) => offset)).toEqual(all.map((_, index) => index));
    // Disconnect after any event, reconnect from the next offset: the two halves are the whole.
    for (const cut of [0, 3, all.length - 2]) {
      const head = all.slice(0, cut + 1);
      const tail = await readUntil(client.turnEvents(handle.workflowId, { fromOffset: cut + 1 }), (event) => event.type === 'turn-finished');
      expect([...head, ...tail]).toEqual(all);
    }
    expect(all.filter(({ event }) => event.type === 'tool-result').map(({ event }) => (event as { output: unknown }).output)).toEqual([{ done: 'one' }, { done: 'two' }]);
  });
});

describe('instant steps', () => {
  it('publish their deltas with their result: the same events, and no signal or workflow task of their own', async () => {
    // The scripted model answers each step in well under STEP_STREAM_FIRST_FLUSH_MS.
    const handle = await turnpike.startTurn({ text: `${use('record_action', { action: 'quick' })} then ${use('record_action', { action: 'again' })}` });
    const result = await handle.result();
    const all = await readUntil(client.turnEvents(handle.workflowId), (event) => event.type === 'turn-finished');
    const types = all.map(({ event }) => event.type);
    expect(types.filter((type) => type === 'step-finished')).toHaveLength(3);
    expect(types).toContain('tool-input-start');
    expect(streamedText(all)).toBe(result.text);
    // Each step's deltas come before its step-finished, as when they are signalled.
    const lastText = types.lastIndexOf('text-delta');
    expect(lastText).toBeGreaterThan(types.lastIndexOf('tool-result'));
    expect(lastText).toBeLessThan(types.lastIndexOf('step-finished'));
    const history = await handle.fetchHistory();
    const signals = (history.events ?? []).filter((event) => event.workflowExecutionSignaledEventAttributes);
    expect(signals).toEqual([]);
  });
});

describe('conversation events', () => {
  async function readConversation(conversationId: string, count: number, after?: string): Promise<ConversationStreamEvent[]> {
    const seen: ConversationStreamEvent[] = [];
    const abort = new AbortController();
    for await (const event of client.conversationEvents(conversationId, { after, signal: abort.signal })) {
      seen.push(event);
      if (seen.length === count) break;
    }
    return seen;
  }

  it('continues across continue-as-new, turn after turn, and resumes from a cursor', async () => {
    const conversationId = `conv-${randomUUID()}`;
    const turns: string[] = [];
    const finished = (events: ConversationStreamEvent[]) => events.filter(({ event }) => event.type === 'turn-finished').length;
    // A subscriber that is there from the first message on, through every continue-as-new.
    const live: ConversationStreamEvent[] = [];
    const following = (async () => {
      for await (const event of client.conversationEvents(conversationId)) {
        live.push(event);
        if (finished(live) === 6) break;
      }
    })();
    // The test server suggests continue-as-new after 40 events; six turns go well past it.
    for (let index = 0; index < 6; index++) {
      const reply = await client.sendMessage({ conversationId, text: use('record_action', { action: `c${index}` }), conversation: { model: { provider: 'scripted', model: 'demo' } } });
      if (index === 0) noteStarted(client.conversation(conversationId));
      noteStarted(client.turn(reply.turnWorkflowId));
      turns.push(reply.turnWorkflowId);
      await client.turnResult(reply.turnWorkflowId, { waitForStart: true, pollIntervalMs: 50 });
    }
    await following;
    const all: ConversationStreamEvent[] = [];
    for await (const event of client.conversationEvents(conversationId)) {
      all.push(event);
      if (finished(all) === 6) break;
    }
    const state = await client.conversationState(conversationId);
    expect(state.runs).toBeGreaterThanOrEqual(1);
    // What the live subscriber saw is what a late reader of the whole stream reads.
    expect(live).toEqual(all);
    expect(all.filter(({ event }) => event.type === 'turn-started').map(({ turnId }) => turnId)).toEqual(turns);
    const texts = await Promise.all(turns.map(async (turnId) => (await client.turnResult(turnId)).text));
    for (const [index, turnId] of turns.entries()) {
      const deltas = all.filter((event) => event.turnId === turnId && event.event.type === 'text-delta');
      expect(deltas.map(({ event }) => (event as { text: string }).text).join('')).toBe(texts[index]);
    }
    // Resume after an event inside the fourth turn: the rest arrives exactly once.
    const cut = all.findIndex((event) => event.turnId === turns[3] && event.event.type === 'tool-call');
    const rest = await readConversation(conversationId, all.length - cut - 1, all[cut].cursor);
    expect([...all.slice(0, cut + 1), ...rest]).toEqual(all);
  });
});

describe('a retried model step', () => {
  let fake: Awaited<ReturnType<typeof useFakeProviders>>;
  beforeAll(async () => {
    fake = await useFakeProviders();
  });
  afterAll(async () => fake?.restore());

  it('is marked step-retry with its attempt, and the turn returns what an uninterrupted run returns', async () => {
    fake.reset();
    fake.script('openai', [{ status: 500 }, { text: 'Second time lucky.' }]);
    const handle = await turnpike.startTurn({
      model: { provider: 'openai', model: 'gpt-4.1-mini', maxTokens: 256 },
      text: 'Go.',
      modelCallOptions: { retry: { initialInterval: '50ms', backoffCoefficient: 1, maximumAttempts: 3 } },
    });
    const events = await readUntil(client.turnEvents(handle.workflowId), (event) => event.type === 'turn-finished');
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'completed', text: 'Second time lucky.' });
    const retry = events.find(({ event }) => event.type === 'step-retry');
    expect(retry?.event).toEqual({ type: 'step-retry', step: 1, attempt: 2 });
    // Any deltas of the step come from the attempt that succeeded, after the mark.
    const deltas = events.filter(({ event }) => event.type === 'text-delta');
    for (const delta of deltas) {
      expect(delta.offset).toBeGreaterThan(retry!.offset);
      expect(delta.event).toMatchObject({ step: 1, attempt: 2 });
    }
    expect(events.at(-1)!.event).toMatchObject({ type: 'turn-finished', text: result.text });
  });
});
