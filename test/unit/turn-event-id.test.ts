/**
 * The SSE id of a turn's events route (api/turn-event-id.ts): a durable record's is its offset as
 * before; a live record's carries what it showed ahead; both parse back to where a reader resumes,
 * and anything the route did not write is refused with a reason.
 */
import { describe, expect, it } from 'vitest';
import { formatTurnEventId, MAX_LIVE_AHEAD_ENTRIES, MAX_TURN_EVENT_ID_CHARS, parseTurnEventId, TurnEventIdError } from '../../api/turn-event-id.js';

describe('the turn event id', () => {
  it('is the plain offset for a record without live, and resumes after it', () => {
    expect(formatTurnEventId({ offset: 0 })).toBe('0');
    expect(formatTurnEventId({ offset: 41, live: [] })).toBe('41');
    expect(parseTurnEventId('41')).toEqual({ fromOffset: 42 });
    expect(parseTurnEventId('999999999999999')).toEqual({ fromOffset: 1e15 });
  });

  it("carries a live record's step-attempts shown ahead, and resumes with them as liveAhead", () => {
    const live = [
      { step: 2, attempt: 1, units: 143 },
      { step: 3, attempt: 2, units: 1 },
    ];
    expect(formatTurnEventId({ offset: 17, live })).toBe('17.2-1-143.3-2-1');
    expect(parseTurnEventId('17.2-1-143.3-2-1')).toEqual({ fromOffset: 18, liveAhead: live });
    // Before the first durable event, a live delta's offset is -1.
    expect(formatTurnEventId({ offset: -1, live: [{ step: 1, attempt: 1, units: 12 }] })).toBe('-1.1-1-12');
    expect(parseTurnEventId('-1.1-1-12')).toEqual({ fromOffset: 0, liveAhead: [{ step: 1, attempt: 1, units: 12 }] });
  });

  it('round-trips every id it writes, within its bounds', () => {
    for (let entries = 1; entries <= MAX_LIVE_AHEAD_ENTRIES; entries++) {
      const live = Array.from({ length: entries }, (_, index) => ({ step: 1000 + index, attempt: 1 + (index % 3), units: 5_000 + index }));
      const id = formatTurnEventId({ offset: 123_456, live })!;
      expect(id.length).toBeLessThanOrEqual(MAX_TURN_EVENT_ID_CHARS);
      expect(parseTurnEventId(id)).toEqual({ fromOffset: 123_457, liveAhead: live });
    }
  });

  it('writes no id past its bounds (a reconnect resumes from the last id sent)', () => {
    const many = Array.from({ length: MAX_LIVE_AHEAD_ENTRIES + 1 }, (_, index) => ({ step: index, attempt: 1, units: 1 }));
    expect(formatTurnEventId({ offset: 1, live: many })).toBeUndefined();
    const long = Array.from({ length: MAX_LIVE_AHEAD_ENTRIES }, (_, index) => ({ step: 1e14 + index, attempt: 1e14, units: 1e14 }));
    expect(formatTurnEventId({ offset: 1, live: long })).toBeUndefined();
    expect(formatTurnEventId({ offset: 1, live: [{ step: 1, attempt: 1, units: 1e16 }] })).toBeUndefined();
  });

  it.each([
    ['', 'starts with no offset'],
    ['x1', 'starts with no offset'],
    ['-1', 'an offset is 0 or more'],
    ['-2.1-1-1', 'starts with no offset'],
    ['1.5', 'is not <step>-<attempt>-<units>'],
    ['1.', 'is not <step>-<attempt>-<units>'],
    ['1..1-1-1', 'is not <step>-<attempt>-<units>'],
    ['1.1-1-1.', 'is not <step>-<attempt>-<units>'],
    ['1.a-1-1', 'is not <step>-<attempt>-<units>'],
    ['1.1-1--1', 'is not <step>-<attempt>-<units>'],
    ['1.1.5-1-1', 'is not <step>-<attempt>-<units>'],
    ['1.1-0-4', 'attempt or units below 1'],
    ['1.1-1-0', 'attempt or units below 1'],
    ['1.2-1-4.2-1-5', 'appears twice'],
    ['1234567890123456', 'starts with no offset'],
    ['1.1-1-1234567890123456', 'is not <step>-<attempt>-<units>'],
    ['1.1e3-1-1', 'is not <step>-<attempt>-<units>'],
    ['1.eyJzdGVwIjoxfQ', 'is not <step>-<attempt>-<units>'],
    [`1${'.1-1-1'.repeat(MAX_LIVE_AHEAD_ENTRIES + 1)}`, `more than ${MAX_LIVE_AHEAD_ENTRIES} live entries`],
    [`1.1-1-1${'0'.repeat(MAX_TURN_EVENT_ID_CHARS)}`, `longer than ${MAX_TURN_EVENT_ID_CHARS} characters`],
  ])('refuses %j: %s', (id, why) => {
    expect(() => parseTurnEventId(id)).toThrow(TurnEventIdError);
    expect(() => parseTurnEventId(id)).toThrow(why);
  });
});
