/**
 * Bounded history: a 10-step turn over a long conversation, with the compressing payload codec
 * every turnpike worker and client uses. Reports history bytes per step as stored and as they
 * would be without compression, and checks the turn stays well inside Temporal's limits
 * (2 MiB per payload, 50 MiB per history). Model steps carry the transcript by reference
 * (workflows/context/transcript.ts), so what a step adds to history does not grow with the conversation.
 */
import proto from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompressionCodec } from '../../codec/payload-codec.js';
import { approveToolCallUpdate, turnStateQuery } from '../../workflows/messages/definitions.js';
import type { Message } from '../../workflows/types/index.js';
import { testTools, use } from '../support/test-tools.js';
import { startTurnpike, type TurnpikeHarness } from '../support/turnpike-harness.js';

// A CommonJS module: Node's ESM loader sees only its default export.
const { temporal } = proto;

let turnpike: TurnpikeHarness;
beforeAll(async () => {
  turnpike = await startTurnpike({ tools: testTools });
});
afterAll(async () => turnpike?.stop());

/** A long, varied conversation: words drawn pseudo-randomly, so it compresses like real text. */
function longConversation(messages: number): Message[] {
  const words = 'order refund customer shipping invoice account balance delivery warehouse payment card address status request agent policy approval limit tracking carrier return'.split(' ');
  let seed = 7;
  const word = () => words[(seed = (seed * 1103515245 + 12345) % 2 ** 31) % words.length];
  return Array.from({ length: messages }, (_, index): Message => {
    const text = Array.from({ length: 60 }, () => word()).join(' ') + ` #${index} ${seed.toString(36)}`;
    return index % 2 === 0 ? { role: 'user', content: text } : { role: 'assistant', content: [{ type: 'text', text }] };
  });
}

/** The callModel activity inputs of a history, in order, decompressed: their JSON and its size. */
async function modelStepInputs(history: proto.temporal.api.history.v1.IHistory): Promise<Array<{ bytes: number; json: string }>> {
  const codec = new CompressionCodec();
  const inputs: Array<{ bytes: number; json: string }> = [];
  for (const event of history.events ?? []) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled?.activityType?.name !== 'callModel') continue;
    const [payload] = await codec.decode(scheduled.input?.payloads as never);
    const json = Buffer.from((payload as { data: Uint8Array }).data).toString('utf8');
    inputs.push({ bytes: json.length, json });
  }
  return inputs;
}

function historyBytes(history: proto.temporal.api.history.v1.IHistory): number {
  return temporal.api.history.v1.History.encode(history).finish().length;
}

/** The same history with every compressed payload decompressed: what it would weigh without the codec. */
async function uncompressed(history: proto.temporal.api.history.v1.IHistory): Promise<proto.temporal.api.history.v1.IHistory> {
  const codec = new CompressionCodec();
  const copy = temporal.api.history.v1.History.decode(temporal.api.history.v1.History.encode(history).finish());
  const visit = async (value: unknown): Promise<void> => {
    if (!value || typeof value !== 'object' || value instanceof Uint8Array) return;
    const record = value as Record<string, unknown>;
    if (Array.isArray(record.payloads)) record.payloads = await codec.decode(record.payloads as never);
    for (const child of Object.values(record)) await visit(child);
  };
  await visit(copy);
  return copy;
}

describe('history size', () => {
  it('keeps a 10-step turn over a 400-message conversation well inside the limits', async () => {
    const conversation = longConversation(400);
    const steps = Array.from({ length: 9 }, (_, index) => use('record_action', { action: `step-${index}` })).join(' then ');
    const handle = await turnpike.startTurn({ messages: [...conversation, { role: 'user', content: steps }] });
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'completed', steps: 10 });

    const stored = await handle.fetchHistory();
    const storedBytes = historyBytes(stored);
    const plainBytes = historyBytes(await uncompressed(stored));
    const largestPayload = Math.max(...(stored.events ?? []).flatMap((event) => {
      const scheduled = event.activityTaskScheduledEventAttributes?.input?.payloads ?? [];
      return scheduled.map((payload) => payload.data?.length ?? 0);
    }));
    const conversationBytes = JSON.stringify(conversation).length;
    console.log(
      `history-size: conversation ${conversation.length} messages (${conversationBytes} bytes JSON), ${result.steps} steps, ` +
        `${stored.events?.length} events; history ${storedBytes} bytes stored vs ${plainBytes} without compression ` +
        `(${Math.round(storedBytes / result.steps)} vs ${Math.round(plainBytes / result.steps)} bytes per step, ${(plainBytes / storedBytes).toFixed(1)}x); largest stored payload ${largestPayload} bytes`,
    );
    // The conversation is in history once (the start event), not once per step.
    expect(plainBytes).toBeLessThan(conversationBytes + result.steps * 8 * 1024);
    expect(storedBytes).toBeLessThan(plainBytes);
    expect(largestPayload).toBeLessThan(conversationBytes);
  });

  it('adds the same history per model step after 10, 100 and 1,000 prior messages', async () => {
    const prompt = [0, 1].map((index) => use('record_action', { action: `step-${index}` })).join(' then ');
    const rows: Array<{ messages: number; conversationBytes: number; stepInputs: number[]; perStep: number }> = [];
    for (const length of [10, 100, 1000]) {
      const conversation = longConversation(length);
      const sizes: Record<number, number> = {};
      let stepInputs: number[] = [];
      for (const steps of [1, 3]) {
        const handle = await turnpike.startTurn({ messages: [...conversation, { role: 'user', content: steps === 1 ? 'hello' : prompt }] });
        expect(await handle.result()).toMatchObject({ status: 'completed', steps });
        const history = await handle.fetchHistory();
        sizes[steps] = historyBytes(await uncompressed(history));
        if (steps === 3) {
          const inputs = await modelStepInputs(history);
          stepInputs = inputs.map((input) => input.bytes);
          // Not one message of the conversation is in any step's input (long ones go by reference from the first step).
          if (length > 10) for (const input of inputs) expect(input.json).not.toContain(`#${length - 2} `);
        }
      }
      rows.push({ messages: length, conversationBytes: JSON.stringify(conversation).length, stepInputs, perStep: (sizes[3] - sizes[1]) / 2 });
    }
    console.log(`history-size per model step: ${rows.map((row) => `${row.messages} messages (${row.conversationBytes} B): step inputs ${row.stepInputs.join(' / ')} B, ${row.perStep} B per step uncompressed`).join('; ')}`);
    const [ten, , thousand] = rows;
    // Every step carries only its own step's messages: the same size at every length (but for
    // the digits of the transcript's length).
    expect(thousand.stepInputs).toHaveLength(3);
    thousand.stepInputs.forEach((bytes, step) => expect(Math.abs(bytes - ten.stepInputs[step])).toBeLessThanOrEqual(16));
    for (const row of rows) expect(Math.max(...row.stepInputs)).toBeLessThan(4 * 1024);
    // The target of issue #14: per step at 1,000 prior messages at most 1.2x that at 10 (here, uncompressed).
    expect(thousand.perStep).toBeLessThanOrEqual(1.2 * ten.perStep);
    // Before history-by-reference, every step copied the conversation (518 KB here).
    expect(thousand.perStep).toBeLessThan(thousand.conversationBytes / 50);
  });

  it('adds these events, and no others, for one approval park', async () => {
    // The same activities with and without the wait: a 2-step turn, and one whose tool call parks.
    const plain = await turnpike.startTurn({ text: use('record_action', { action: 'plain' }) });
    await plain.result();
    const parked = await turnpike.startTurn({ text: use('guarded_action', { target: 'park', count: 1 }) });
    // Watched through its history, not queries: a query that comes while the first workflow task
    // waits on its local activity makes the worker end that task early, one task (3 events) more
    // that has nothing to do with the park.
    while (!countTypes(await parked.fetchHistory()).has('TIMER_STARTED')) await new Promise((resolve) => setTimeout(resolve, 50));
    const [pending] = (await parked.query(turnStateQuery)).pending;
    await parked.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: pending.approvalId!, approved: true, approver: 'alice' }] });
    expect(await parked.result()).toMatchObject({ status: 'completed', steps: 2 });

    const added = countTypes(await parked.fetchHistory());
    for (const [type, count] of countTypes(await plain.fetchHistory())) added.set(type, (added.get(type) ?? 0) - count);
    const park = Object.fromEntries([...added].filter(([, count]) => count !== 0));
    console.log(`history-size: one approval park adds ${Object.values(park).reduce((sum, count) => sum + count, 0)} events: ${JSON.stringify(park)}`);
    expect(park).toEqual({
      // What a hand-written workflow's park costs too: the task that takes the update, and the update.
      WORKFLOW_TASK_SCHEDULED: 1,
      WORKFLOW_TASK_STARTED: 1,
      WORKFLOW_TASK_COMPLETED: 1,
      WORKFLOW_EXECUTION_UPDATE_ACCEPTED: 1,
      WORKFLOW_EXECUTION_UPDATE_COMPLETED: 1,
      // AgentTurnStatus/AgentPendingTools at the park and at the resume, and the parked calls
      // for listings (the memo), in the same workflow tasks.
      UPSERT_WORKFLOW_SEARCH_ATTRIBUTES: 2,
      WORKFLOW_PROPERTIES_MODIFIED: 1,
      // The expiry timer; it is not cancelled when the decision comes first.
      TIMER_STARTED: 1,
      // (The park-memo patch's marker is recorded as every turn starts, so both turns have it.)
    });
  });
});

/** The history's event types, without the EVENT_TYPE_ prefix. */
function names(history: proto.temporal.api.history.v1.IHistory): string[] {
  return (history.events ?? []).map((event) => temporal.api.enums.v1.EventType[event.eventType!].replace(/^EVENT_TYPE_/, ''));
}

/** How many events of each type a history has. */
function countTypes(history: proto.temporal.api.history.v1.IHistory): Map<string, number> {
  const counts = new Map<string, number>();
  for (const type of names(history)) counts.set(type, (counts.get(type) ?? 0) + 1);
  return counts;
}
