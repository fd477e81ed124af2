/**
 * The nested reader's cursor: its text form both ways, what it refuses, and that a reader resumed
 * after any record's cursor reads every later event of the turn and of each child exactly once,
 * in each stream's order (streams held in memory: the reading logic, not the server).
 */
import { describe, expect, it } from 'vitest';
import { encodeNestedCursor, MAX_CURSOR_CHARS, NestedCursorError, parseNestedCursor } from '../../client/nested-cursor.js';
import { readNestedTurnEvents, type NestedTurnEventRecord, type TurnEventAt } from '../../client/nested-turn-events.js';
import type { TurnEvent, TurnEventRecord } from '../../workflows/types/turn-events.js';

describe('the cursor as text', () => {
  it('is the plain offset while no child is open', () => {
    expect(encodeNestedCursor({ offset: 12, open: [] })).toBe('12');
    expect(parseNestedCursor('12')).toEqual({ offset: 12, open: [] });
  });

  it('lists each open child by its agent-started offsets, with the offset read in it', () => {
    const cursor = { offset: 12, open: [{ path: [5], offset: 7 }, { path: [5, 3], offset: 2 }, { path: [9] }] };
    expect(encodeNestedCursor(cursor)).toBe('12~5:7~5.3:2~9');
    expect(parseNestedCursor('12~5:7~5.3:2~9')).toEqual(cursor);
    // A grandchild stays open after its parent finished for the reader.
    expect(parseNestedCursor('12~5.3:2')).toEqual({ offset: 12, open: [{ path: [5, 3], offset: 2 }] });
  });

  it('has no text past its limits', () => {
    expect(encodeNestedCursor({ offset: 1, open: Array.from({ length: 33 }, (_, index) => ({ path: [index] })) })).toBeUndefined();
    expect(encodeNestedCursor({ offset: 1, open: [{ path: [1, 1, 1, 1, 1, 1, 1, 1, 1] }] })).toBeUndefined();
  });

  it('carries, after each part, what a live read showed ahead of its offset', () => {
    const cursor = {
      offset: 12,
      live: [{ step: 2, attempt: 1, units: 143 }],
      open: [{ path: [5], offset: 7, live: [{ step: 1, attempt: 1, units: 40 }, { step: 1, attempt: 2, units: 3 }] }, { path: [5, 3], live: [{ step: 1, attempt: 1, units: 9 }] }, { path: [9] }],
    };
    expect(encodeNestedCursor(cursor)).toBe('12_2-1-143~5:7_1-1-40_1-2-3~5.3_1-1-9~9');
    expect(parseNestedCursor('12_2-1-143~5:7_1-1-40_1-2-3~5.3_1-1-9~9')).toEqual(cursor);
    // Before the turn's first durable event its offset is -1, and only then.
    expect(parseNestedCursor('-1_1-1-5')).toEqual({ offset: -1, live: [{ step: 1, attempt: 1, units: 5 }], open: [] });
    // A cursor without live entries means what it always did.
    expect(parseNestedCursor('12~5:7')).toEqual({ offset: 12, open: [{ path: [5], offset: 7 }] });
    expect(encodeNestedCursor({ offset: 3, live: [], open: [{ path: [1], live: [] }] })).toBe('3~1');
  });

  it('has no text past its live limits', () => {
    const live = Array.from({ length: 17 }, (_, step) => ({ step, attempt: 1, units: 1 }));
    expect(encodeNestedCursor({ offset: 1, live, open: [] })).toBeUndefined();
    expect(encodeNestedCursor({ offset: 1, open: [{ path: [1], live }] })).toBeUndefined();
    const long = [{ step: 999_999_999_999_999, attempt: 999_999_999_999_999, units: 999_999_999_999_999 }];
    expect(encodeNestedCursor({ offset: 1, open: Array.from({ length: 11 }, (_, index) => ({ path: [index], live: long })) })).toBeUndefined();
  });

  it.each([
    ['-1_1-1-0', 'below 1'],
    ['-2_1-1-5', 'expected'],
    ['3_', 'expected'],
    ['3_1-1', 'expected'],
    ['3_1-0-5', 'below 1'],
    ['3_1-1-5_1-1-6', 'listed twice'],
    ['3.1-1-5', 'expected'],
    ['3_1-1-99999999999999999999', 'expected'],
    [`3${'_1-1-5'.repeat(17)}`, 'more than 16 live entries'],
    ['3~1_', 'is not'],
    ['3~1_1-1-5:2', 'is not'],
    ['3~1:2_1-1-0', 'below 1'],
    ['3~1:-1_1-1-5', 'is not'],
    ['3~1_a-1-5', 'is not'],
    [`3~1${'_1-1-5'.repeat(17)}`, 'more than 16 live entries'],
    ['3~4_1-1-5', 'started after where the cursor stands'],
  ])('refuses the live form %j', (text, why) => {
    expect(() => parseNestedCursor(text)).toThrow(NestedCursorError);
    expect(() => parseNestedCursor(text)).toThrow(why);
  });

  it.each([
    ['', 'expected'],
    ['abc', 'expected'],
    ['-1', 'expected'],
    ['1e3', 'expected'],
    ['12~', 'is not'],
    ['12~5:', 'is not'],
    ['12~5::3', 'is not'],
    ['12~a', 'is not'],
    ['12~5\n7', 'is not'],
    ['1234567890123456', 'expected'],
    ['12~5:7~5:8', 'listed twice'],
    ['4~5', 'started after where the cursor stands'],
    ['12~5~5.0', 'started after where the cursor stands'],
    ['12~5:2~5.3', 'started after where the cursor stands'],
    ['12~1.1.1.1.1.1.1.1.1', 'deeper than 8'],
    [`12${'~1'.repeat(33)}`, 'more than 32 children'],
    ['1'.repeat(MAX_CURSOR_CHARS + 1), `longer than ${MAX_CURSOR_CHARS}`],
  ])('refuses %j', (text, why) => {
    expect(() => parseNestedCursor(text)).toThrow(NestedCursorError);
    expect(() => parseNestedCursor(text)).toThrow(why);
  });
});

/** A turn that starts two children at offsets 1 and 3; the first starts a grandchild at its offset 1. */
function streamsOfATree(): Map<string, TurnEvent[]> {
  const finished: TurnEvent = { type: 'turn-finished', status: 'completed', text: 'done', steps: 1, usage: { inputTokens: 1, outputTokens: 1 } } as TurnEvent;
  const started = (toolCallId: string, turnId: string): TurnEvent => ({ type: 'agent-started', step: 1, toolCallId, toolName: `agent_${toolCallId}`, turnId });
  const delta = (text: string): TurnEvent => ({ type: 'text-delta', step: 1, attempt: 1, text });
  return new Map([
    ['t', [delta('a'), started('c1', 't/c1'), delta('b'), started('c2', 't/c2'), delta('c'), delta('d'), finished]],
    ['t/c1', [delta('e'), started('g', 't/c1/g'), delta('f'), finished]],
    ['t/c1/g', [delta('g'), delta('h'), delta('i'), finished]],
    ['t/c2', [delta('j'), delta('k'), finished]],
  ]);
}

function reading(streams: Map<string, TurnEvent[]>) {
  const read = async function* (turnId: string, options: { fromOffset?: number; signal?: AbortSignal }): AsyncGenerator<TurnEventRecord, void, undefined> {
    const events = streams.get(turnId) ?? [];
    for (let offset = options.fromOffset ?? 0; offset < events.length; offset++) {
      // Each stream moves at its own pace, so the streams interleave.
      for (let turns = 0; turns < turnId.length; turns++) await new Promise((resolve) => setImmediate(resolve));
      if (options.signal?.aborted) return;
      yield { offset, event: events[offset] };
    }
  };
  const eventAt: TurnEventAt = async (turnId, offset) => {
    const event = streams.get(turnId)?.[offset];
    return event ? { offset, event } : undefined;
  };
  return { read, eventAt };
}

async function readAll(records: AsyncIterable<NestedTurnEventRecord>, count = Infinity): Promise<NestedTurnEventRecord[]> {
  const read: NestedTurnEventRecord[] = [];
  if (count === 0) return read;
  for await (const record of records) {
    read.push(record);
    if (read.length >= count) break;
  }
  return read;
}

/** Each stream's offsets in the order read. */
function offsetsByStream(records: NestedTurnEventRecord[]): Record<string, number[]> {
  const byStream: Record<string, number[]> = {};
  for (const record of records) (byStream[record.turnId ?? 't'] ??= []).push(record.offset);
  return byStream;
}

describe('a reader resumed after a cursor', () => {
  it('reads every later event of the turn and of each child exactly once, wherever it stopped', async () => {
    const streams = streamsOfATree();
    const { read, eventAt } = reading(streams);
    const whole = await readAll(readNestedTurnEvents(read, eventAt, 't'));
    const everything = Object.fromEntries([...streams].map(([id, events]) => [id, events.map((_, offset) => offset)]));
    expect(offsetsByStream(whole)).toEqual(everything);
    expect(whole.map((record) => record.cursor).every((cursor) => cursor !== undefined && parseNestedCursor(cursor))).toBe(true);
    expect(whole.find((record) => record.turnId === 't/c1/g')).toMatchObject({ parentToolCallId: 'g', path: ['agent_c1', 'agent_g'] });
    for (let stop = 1; stop < whole.length; stop++) {
      const before = await readAll(readNestedTurnEvents(read, eventAt, 't'), stop);
      const after = await readAll(readNestedTurnEvents(read, eventAt, 't', { after: before.at(-1)!.cursor! }));
      expect(offsetsByStream([...before, ...after]), `resumed after ${before.at(-1)!.cursor}`).toEqual(everything);
      // A resumed child keeps its place in the tree.
      expect(after.filter((record) => record.turnId === 't/c1/g').every((record) => record.parentToolCallId === 'g' && record.path?.join() === 'agent_c1,agent_g')).toBe(true);
    }
  });

  it('is the plain offset for the turn’s own events while no child is open', async () => {
    const { read, eventAt } = reading(streamsOfATree());
    const whole = await readAll(readNestedTurnEvents(read, eventAt, 't'));
    const own = whole.filter((record) => record.turnId === undefined);
    expect(own[0].cursor).toBe('0');
    expect(own[1].cursor).toBe('1~1');
    expect(whole.at(-1)!.cursor).toBe(String(streamsOfATree().get('t')!.length - 1));
  });

  it('reads each stream live with what its part showed ahead, and gives live records a cursor that carries it', async () => {
    const streams = streamsOfATree();
    const { eventAt } = reading(streams);
    const asked: Array<{ turnId: string; fromOffset?: number; live?: boolean; liveAhead?: unknown }> = [];
    // A live read of t shows one piece of step 1 ahead of offset 0, then the durable events.
    const read = async function* (turnId: string, options: { fromOffset?: number; live?: boolean; liveAhead?: Array<{ step: number; attempt: number; units: number }> }): AsyncGenerator<TurnEventRecord, void, undefined> {
      asked.push({ turnId, ...options });
      if (turnId === 't' && options.live && options.fromOffset === undefined) yield { offset: -1, event: { type: 'text-delta', step: 1, attempt: 1, text: 'x' }, live: [{ step: 1, attempt: 1, units: 1 }] };
      const events = streams.get(turnId)!;
      for (let offset = options.fromOffset ?? 0; offset < events.length; offset++) yield { offset, event: events[offset] };
    };
    const whole = await readAll(readNestedTurnEvents(read, eventAt, 't', { live: true }));
    expect(whole[0]).toMatchObject({ offset: -1, live: [{ step: 1, attempt: 1, units: 1 }], cursor: '-1_1-1-1' });
    expect(whole[1].cursor).toBe('0');
    expect(asked.every((each) => each.live === true)).toBe(true);

    asked.length = 0;
    await readAll(readNestedTurnEvents(read, eventAt, 't', { after: '3_1-1-4~1:1_2-1-7~1.1~3' }));
    expect(asked.map(({ turnId, fromOffset, live, liveAhead }) => ({ turnId, fromOffset, live, liveAhead }))).toEqual(
      expect.arrayContaining([
        { turnId: 't', fromOffset: 4, live: true, liveAhead: [{ step: 1, attempt: 1, units: 4 }] },
        { turnId: 't/c1', fromOffset: 2, live: true, liveAhead: [{ step: 2, attempt: 1, units: 7 }] },
        { turnId: 't/c1/g', fromOffset: 0, live: undefined, liveAhead: undefined },
        { turnId: 't/c2', fromOffset: 0, live: undefined, liveAhead: undefined },
      ]),
    );
  });

  it('refuses a cursor naming an offset that started no child', async () => {
    const { read, eventAt } = reading(streamsOfATree());
    await expect(readAll(readNestedTurnEvents(read, eventAt, 't', { after: '4~2' }))).rejects.toThrow('offset 2 of turn t started no child turn');
    await expect(readAll(readNestedTurnEvents(read, eventAt, 't', { after: '4~1:3~1.2' }))).rejects.toThrow('offset 2 of turn t/c1 started no child turn');
  });
});
