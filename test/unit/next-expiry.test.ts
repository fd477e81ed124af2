import { describe, expect, it } from 'vitest';
import { NEXT_EXPIRY_NONE, nextExpiry } from '../../workflows/context/next-expiry.js';
import { parseParkedCursor } from '../../client/expiry-pages.js';

describe('TurnpikeNextExpiry value', () => {
  it('is the soonest expiry of the parked calls a person decides, as an ISO instant', () => {
    expect(
      nextExpiry([
        { kind: 'approval', expiresAt: '2026-12-03T10:00:00.000Z' },
        { kind: 'budget', expiresAt: '2026-12-03T09:30:00.000Z' },
        { kind: 'client-tool', expiresAt: '2026-12-03T09:00:00.000Z' },
        { kind: 'elicitation', expiresAt: '2026-12-03T08:00:00.000Z' },
      ]),
    ).toBe('2026-12-03T09:30:00.000Z');
    expect(nextExpiry([{ kind: 'approval', expiresAt: '2026-12-03T10:00:00Z' }])).toBe('2026-12-03T10:00:00.000Z');
  });

  it('is the far-future NEXT_EXPIRY_NONE when no decision is parked, client-side calls and questions only included', () => {
    expect(nextExpiry([])).toBe(NEXT_EXPIRY_NONE);
    expect(nextExpiry([{ kind: 'client-tool', expiresAt: '2026-12-03T09:00:00.000Z' }, { kind: 'elicitation', expiresAt: '2026-12-03T09:00:00.000Z' }])).toBe(NEXT_EXPIRY_NONE);
    expect(new Date(NEXT_EXPIRY_NONE).toISOString()).toBe(NEXT_EXPIRY_NONE);
  });
});

describe('a parked page cursor', () => {
  const cursor = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');

  it('reads back the expiry and turn id it was made of', () => {
    expect(parseParkedCursor(cursor(['2026-12-03T10:00:00.000Z', 'turn-1']))).toEqual({ expiry: '2026-12-03T10:00:00.000Z', turnId: 'turn-1' });
    expect(parseParkedCursor(cursor([NEXT_EXPIRY_NONE, 'a/b']))).toEqual({ expiry: NEXT_EXPIRY_NONE, turnId: 'a/b' });
  });

  it('refuses anything else: not base64url JSON, another shape, an instant not in the ISO form it was made in, an empty id', () => {
    for (const bad of ['', 'not a cursor', '%%%', cursor({ expiry: '2026-12-03T10:00:00.000Z' }), cursor(['2026-12-03T10:00:00.000Z']), cursor(['2026-12-03', 'turn-1']), cursor(['tomorrow', 'turn-1']), cursor(['2026-12-03T10:00:00.000Z', '']), cursor([1, 'turn-1'])]) {
      expect(parseParkedCursor(bad), bad).toBeUndefined();
    }
  });
});
