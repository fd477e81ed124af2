/**
 * The live channel beside the durable stream (activities/live-deltas.ts, client/live-merge.ts):
 * an OpenAI turn through the real SDK against the strict fake, streaming its tokens at a model's
 * pace, read with `turnEvents(id, { live: true })`. A reader that disconnects at a delta shown live
 * and resumes (through the same client, and through a client of its own) sees every event once,
 * in order; with the channel bringing nothing, or stopping mid-step, readers get everything from
 * the durable stream.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Client } from '@temporalio/client';
import { InProcessLiveDeltas, type LiveDeltaChannel, type LiveDeltaPiece } from '../../activities/live-deltas.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import type { TurnEventRecord } from '../../workflows/types/turn-events.js';
import { nonDeltaCount, readAll, shown, words } from '../support/live-view.js';
import { useFakeProviders } from '../support/fake-providers.js';
import { testTools } from '../support/test-tools.js';
import { startTurnpike, type TurnpikeHarness } from '../support/turnpike-harness.js';

/** The worker's channel; `stopped` makes it a broker that went down (it delivers nothing more). */
class SwitchableChannel implements LiveDeltaChannel {
  readonly inner = new InProcessLiveDeltas();
  stopAfter = Infinity;
  published = 0;
  publish(workflowId: string, piece: LiveDeltaPiece): void {
    if (++this.published > this.stopAfter) return;
    this.inner.publish(workflowId, piece);
  }
  subscribe(workflowId: string, listener: (piece: LiveDeltaPiece) => void): () => void {
    return this.inner.subscribe(workflowId, listener);
  }
}

let fake: Awaited<ReturnType<typeof useFakeProviders>>;
let turnpike: TurnpikeHarness;
const channel = new SwitchableChannel();

beforeAll(async () => {
  fake = await useFakeProviders();
  turnpike = await startTurnpike({ tools: testTools, liveDeltas: channel });
});
afterAll(async () => {
  await turnpike?.stop();
  await fake?.restore();
});
beforeEach(() => {
  fake.reset();
  channel.stopAfter = Infinity;
  channel.published = 0;
});

const FIRST = words(30, 'a');
const SECOND = words(60, 'b');

/** A two-step turn: text and a tool call, then text; tokens 10 ms apart. */
async function startTwoStepTurn() {
  fake.script('openai', [
    { text: FIRST, toolCalls: [{ name: 'record_action', input: { action: 'live' } }], stream: { eventIntervalMs: 10 } },
    { text: SECOND, stream: { eventIntervalMs: 10 } },
  ]);
  return turnpike.startTurn({ model: { provider: 'openai', model: 'gpt-4.1-mini', maxTokens: 512 }, text: 'Go.' });
}



describe('live deltas', () => {
  it('shows deltas live, and a reader that reconnects at a live delta sees every event once, in order', async () => {
    const client = new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue, liveDeltas: channel });
    const handle = await startTwoStepTurn();
    const whole = readAll(client.turnEvents(handle.workflowId, { live: true }));

    // A reader that leaves at its third live delta of the second step, then resumes twice:
    // through the same client, and, after its second live delta there, through a new client.
    const first: TurnEventRecord[] = [];
    let live = 0;
    for await (const record of client.turnEvents(handle.workflowId, { live: true })) {
      first.push(record);
      if (record.live !== undefined && record.event.type === 'text-delta' && record.event.step === 2 && ++live === 3) break;
    }
    const cut = first.at(-1)!;
    const second: TurnEventRecord[] = [];
    live = 0;
    for await (const record of client.turnEvents(handle.workflowId, { live: true, fromOffset: cut.offset + 1, liveAhead: cut.live })) {
      second.push(record);
      if (record.live !== undefined && ++live === 2) break;
    }
    const resumeAt = second.at(-1) ?? cut;
    const other = new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue, liveDeltas: channel });
    const third = await readAll(other.turnEvents(handle.workflowId, { live: true, fromOffset: resumeAt.offset + 1, liveAhead: resumeAt.live }));
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'completed', text: SECOND });

    const durable = await readAll(new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue }).turnEvents(handle.workflowId));
    const expected = shown(durable);
    expect(expected.texts).toEqual({ 1: FIRST, 2: SECOND });
    expect(shown(await whole)).toEqual(expected);
    expect(shown([...first, ...second, ...third])).toEqual(expected);
    // The whole reader was shown deltas live, and offsets never go back.
    const records = await whole;
    expect(records.filter((record) => record.live !== undefined).length).toBeGreaterThan(0);
    for (const [index, record] of records.entries()) if (index > 0) expect(record.offset).toBeGreaterThanOrEqual(records[index - 1]!.offset);
    expect(records.at(-1)!.event.type).toBe('turn-finished');
  });

  it("shows a step's text live while the durable reads are held, then confirms it from the durable stream without repeating it", async () => {
    // Every query of this client waits at the gate: the feed learns nothing from the durable stream.
    let resolveGate!: () => void;
    const gate = new Promise<void>((resolve) => (resolveGate = resolve));
    let closed = true;
    const open = () => {
      closed = false;
      resolveGate();
    };
    const held = new Client({
      connection: turnpike.client.connection,
      namespace: turnpike.client.options.namespace,
      dataConverter: turnpike.client.options.dataConverter,
      interceptors: { workflow: [{ query: async (input, next) => (await gate, next(input)) }] },
    });
    const client = new TurnpikeClient({ client: held, taskQueue: turnpike.taskQueue, liveDeltas: channel });
    const handle = await startTwoStepTurn();
    let openedByReader = false;
    let durableBeforeOpen = -1;
    const texts: Record<number, string> = {};
    const reading = (async () => {
      const records: TurnEventRecord[] = [];
      for await (const record of client.turnEvents(handle.workflowId, { live: true })) {
        records.push(record);
        if (record.event.type === 'text-delta') texts[record.event.step] = (texts[record.event.step] ?? '') + record.event.text;
        if (closed && texts[1] === FIRST && texts[2] === SECOND) {
          openedByReader = true;
          durableBeforeOpen = nonDeltaCount(records);
          open();
        }
      }
      return records;
    })();
    await handle.result();
    open();
    const records = await reading;
    // Both steps' whole text reached the reader before any durable read answered.
    expect(openedByReader).toBe(true);
    expect(durableBeforeOpen).toBe(0);
    const expected = shown(await readAll(new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue }).turnEvents(handle.workflowId)));
    expect(shown(records)).toEqual(expected);
    expect(records.at(-1)!.event.type).toBe('turn-finished');
  });

  it('falls back to the durable stream when the channel brings nothing, or stops mid-step', async () => {
    // A client whose channel the worker does not publish to: API and worker in two processes without a broker.
    const apart = new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue, liveDeltas: new InProcessLiveDeltas() });
    const handle = await startTwoStepTurn();
    const apartRecords = await readAll(apart.turnEvents(handle.workflowId, { live: true }));
    await handle.result();
    const durable = shown(await readAll(new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue }).turnEvents(handle.workflowId)));
    expect(shown(apartRecords)).toEqual(durable);
    expect(apartRecords.some((record) => record.live !== undefined)).toBe(false);

    // The broker goes down after 20 pieces, in the first step.
    channel.stopAfter = 20;
    const client = new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue, liveDeltas: channel });
    const stopping = await startTwoStepTurn();
    const records = await readAll(client.turnEvents(stopping.workflowId, { live: true }));
    await stopping.result();
    const expected = shown(await readAll(new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue }).turnEvents(stopping.workflowId)));
    expect(expected.texts).toEqual({ 1: FIRST, 2: SECOND });
    expect(shown(records)).toEqual(expected);
    expect(channel.published).toBeGreaterThan(20);
  });
});
