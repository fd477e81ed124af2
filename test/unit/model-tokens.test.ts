/**
 * The fleet's tokens-per-minute limit (activities/model-tokens/): where a booking is placed, the
 * in-memory counter, the expected tokens of a call, and the options and variables refused.
 */
import { describe, expect, it } from 'vitest';
import { earliestBooking, InMemoryModelTokenCounter, lanesOf, placeBooking, type TokenBooking } from '../../activities/model-tokens/token-counter.js';
import { checkedModelTokenLimit, expectedTokens, IMAGE_TOKENS } from '../../activities/model-tokens/token-gate.js';
import { modelCapacityFromEnvironment } from '../../worker/model-capacity.js';
import type { ModelStepInput } from '../../workflows/types/index.js';

/** The most tokens any window of `windowMs` holds (half-open windows, as the counter's). */
function fullestWindow(bookings: TokenBooking[], windowMs: number): number {
  return Math.max(0, ...bookings.map((end) => bookings.filter((other) => other.atMs <= end.atMs && other.atMs > end.atMs - windowMs).reduce((sum, other) => sum + other.tokens, 0)));
}

describe('earliestBooking', () => {
  it('goes now while the window has room', () => {
    expect(earliestBooking([], 1_000, 100, 400, 10_000)).toBe(1_000);
    expect(earliestBooking([{ atMs: 500, tokens: 300 }], 1_000, 100, 400, 10_000)).toBe(1_000);
  });

  it('waits until enough of the oldest bookings have left the window', () => {
    const bookings = [
      { atMs: 0, tokens: 200 },
      { atMs: 2_000, tokens: 100 },
      { atMs: 3_000, tokens: 100 },
    ];
    // 400 held, 150 asked: the first booking (200) must leave, at 0 + 10 s.
    expect(earliestBooking(bookings, 4_000, 150, 400, 10_000)).toBe(10_000);
    // 250 asked: the first two must leave; 350 asked: all three.
    expect(earliestBooking(bookings, 4_000, 250, 400, 10_000)).toBe(12_000);
    expect(earliestBooking(bookings, 4_000, 350, 400, 10_000)).toBe(13_000);
  });

  it('never places a booking before an earlier one, even when it would fit there', () => {
    expect(earliestBooking([{ atMs: 9_000, tokens: 10 }], 1_000, 10, 400, 10_000)).toBe(9_000);
  });

  it('counts bookings at the same instant together', () => {
    const bookings = [
      { atMs: 0, tokens: 100 },
      { atMs: 0, tokens: 100 },
      { atMs: 0, tokens: 100 },
      { atMs: 0, tokens: 100 },
    ];
    expect(earliestBooking(bookings, 10, 100, 400, 1_000)).toBe(1_000);
  });

  it('refuses a call larger than the limit', () => {
    expect(() => earliestBooking([], 0, 401, 400, 60_000)).toThrow(RangeError);
  });

  it('keeps every window within the limit however the calls arrive', () => {
    let seed = 7;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    const bookings: TokenBooking[] = [];
    let now = 0;
    for (let call = 0; call < 500; call++) {
      now += Math.floor(random() * 300);
      const tokens = 1 + Math.floor(random() * 250);
      const atMs = earliestBooking(bookings, now, tokens, 1_000, 5_000);
      expect(atMs).toBeGreaterThanOrEqual(now);
      bookings.push({ atMs, tokens });
    }
    expect(fullestWindow(bookings, 5_000)).toBeLessThanOrEqual(1_000);
  });
});

describe('placeBooking, with a share kept for interactive calls', () => {
  const request = { key: 'q', id: 'x', limit: 1_000, windowMs: 10_000, reserved: 200 };
  // The shared lane holds 800 over the next window: a batch call waits a window, an interactive one need not.
  const shared: TokenBooking[] = [0, 1, 2, 3, 4, 5, 6, 7].map((index) => ({ atMs: 1_000 + index * 1_000, tokens: 100 }));

  it('puts an interactive call in the reserve when the shared lane would make it wait', () => {
    expect(placeBooking(shared, 9_000, { ...request, tokens: 100 })).toEqual({ atMs: 11_000, reserved: false });
    expect(placeBooking(shared, 9_000, { ...request, tokens: 100, interactive: true })).toEqual({ atMs: 9_000, reserved: true });
    // The reserve is a lane of its own: first come, first served among interactive calls.
    const full = [...shared, { atMs: 9_000, tokens: 100, reserved: true }, { atMs: 9_000, tokens: 100, reserved: true }];
    expect(placeBooking(full, 9_500, { ...request, tokens: 100, interactive: true })).toEqual({ atMs: 11_000, reserved: false });
  });

  it('keeps the reserve for later: an interactive call that can go now in the shared lane goes there', () => {
    expect(placeBooking(shared.slice(0, 4), 9_000, { ...request, tokens: 100, interactive: true })).toEqual({ atMs: 9_000, reserved: false });
  });

  it('is the first-come rule when nothing is reserved', () => {
    expect(placeBooking(shared, 9_000, { ...request, reserved: 0, tokens: 250, interactive: true })).toEqual({ atMs: earliestBooking(shared, 9_000, 250, 1_000, 10_000), reserved: false });
  });

  it('refuses a call that fits no lane it may use, and a reserve that leaves no shared lane', () => {
    expect(() => lanesOf({ ...request, tokens: 900 })).toThrow(RangeError);
    expect(() => lanesOf({ ...request, tokens: 900, interactive: true })).toThrow(/can never fit a limit of 800/);
    expect(lanesOf({ ...request, tokens: 150, interactive: true })).toEqual([{ reserved: false, limit: 800 }, { reserved: true, limit: 200 }]);
    expect(lanesOf({ ...request, tokens: 300, interactive: true })).toEqual([{ reserved: false, limit: 800 }]);
    expect(() => lanesOf({ ...request, tokens: 1, reserved: 1_000 })).toThrow(/reserved must be a whole number/);
  });

  it('keeps every window within the limit, and the shared lane within its share, however the calls arrive', () => {
    let seed = 5;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    const bookings: TokenBooking[] = [];
    let now = 0;
    const waits = { interactive: [] as number[], batch: [] as number[] };
    // Ten times the limit in batch calls, and interactive ones (2%) under the reserve.
    for (let call = 0; call < 1_000; call++) {
      now += Math.floor(random() * 200);
      const interactive = random() < 0.02;
      const tokens = 1 + Math.floor(random() * (interactive ? 40 : 150));
      const placed = placeBooking(bookings, now, { ...request, tokens, interactive });
      expect(placed.atMs).toBeGreaterThanOrEqual(now);
      if (placed.reserved) expect(interactive).toBe(true);
      waits[interactive ? 'interactive' : 'batch'].push(placed.atMs - now);
      bookings.push({ atMs: placed.atMs, tokens, reserved: placed.reserved });
    }
    expect(fullestWindow(bookings, 10_000)).toBeLessThanOrEqual(1_000);
    expect(fullestWindow(bookings.filter((booking) => !booking.reserved), 10_000)).toBeLessThanOrEqual(800);
    expect(fullestWindow(bookings.filter((booking) => booking.reserved), 10_000)).toBeLessThanOrEqual(200);
    // Batch calls wait far ahead; nearly every interactive one goes at once.
    expect(waits.interactive.length).toBeGreaterThan(10);
    expect(Math.min(...waits.batch.slice(100))).toBeGreaterThan(10_000);
    expect(waits.interactive.filter((wait) => wait === 0).length).toBeGreaterThanOrEqual(waits.interactive.length * 0.9);
    expect(Math.max(...waits.interactive)).toBeLessThanOrEqual(10_000);
  });
});

describe('InMemoryModelTokenCounter', () => {
  it('books in order, says how long to wait, and counts a settled call at what it used', async () => {
    let now = 0;
    const counter = new InMemoryModelTokenCounter(() => now);
    const request = { key: 'q', limit: 300, windowMs: 1_000 };
    expect(await counter.book({ ...request, id: 'a', tokens: 200 })).toEqual({ waitMs: 0 });
    expect(await counter.book({ ...request, id: 'b', tokens: 200 })).toEqual({ waitMs: 1_000 });
    // a settled to 50: a call of 50 fits beside a and b, but not before b, booked at 1,000.
    await counter.settle('q', 'a', 50);
    now = 500;
    expect(await counter.book({ ...request, id: 'c', tokens: 50 })).toEqual({ waitMs: 500 });
    // Another key has a window of its own.
    expect(await counter.book({ ...request, key: 'other', id: 'a', tokens: 300 })).toEqual({ waitMs: 0 });
  });

  it('releases a booking settled to 0', async () => {
    const counter = new InMemoryModelTokenCounter(() => 0);
    const request = { key: 'q', limit: 100, windowMs: 1_000 };
    await counter.book({ ...request, id: 'a', tokens: 100 });
    await counter.settle('q', 'a', 0);
    expect(await counter.book({ ...request, id: 'b', tokens: 100 })).toEqual({ waitMs: 0 });
  });
});

describe('expectedTokens', () => {
  const input: ModelStepInput = { model: { provider: 'openai', model: 'gpt-4.1-mini' }, system: 'Be brief.', messages: [{ role: 'user', content: 'x'.repeat(400) }], tools: [] };

  it("is the request's characters ÷ 4 plus the step's maxTokens, or the expected output", () => {
    const characters = JSON.stringify(['Be brief.', input.messages, []]).length;
    expect(expectedTokens(input, 1_000)).toBe(Math.ceil(characters / 4) + 1_000);
    expect(expectedTokens({ ...input, model: { ...input.model, maxTokens: 64 } }, 1_000)).toBe(Math.ceil(characters / 4) + 64);
  });

  it('counts an image as IMAGE_TOKENS, not by its bytes', () => {
    const image = { type: 'image' as const, source: { type: 'base64' as const, mediaType: 'image/png', data: 'A'.repeat(400_000) } };
    const withImage: ModelStepInput = { ...input, messages: [{ role: 'user', content: [{ type: 'text', text: 'x'.repeat(400) }, image] }] };
    const characters = JSON.stringify(['Be brief.', [{ role: 'user', content: [{ type: 'text', text: 'x'.repeat(400) }, null] }], []]).length;
    expect(expectedTokens(withImage, 0)).toBe(Math.ceil(characters / 4) + IMAGE_TOKENS);
  });
});

describe('the options', () => {
  const counter = new InMemoryModelTokenCounter();

  it('fills in the defaults', () => {
    expect(checkedModelTokenLimit({ tokensPerMinute: 60_000, counter })).toEqual({ tokensPerMinute: 60_000, windowSeconds: 60, counter, outputTokens: 1_000, maxWaitSeconds: 60, interactiveShare: 0 });
  });

  it.each([
    [{ tokensPerMinute: 0, counter }, /tokenLimit\.tokensPerMinute: must be a whole number of at least 1/],
    [{ tokensPerMinute: 1.5, counter }, /tokensPerMinute/],
    [{ tokensPerMinute: 6, windowSeconds: 5, counter }, /allows no whole token in a window of 5 s/],
    [{ tokensPerMinute: 1_000, windowSeconds: 0.5, counter }, /windowSeconds: must be a number of seconds from 1 to 3600/],
    [{ tokensPerMinute: 1_000, outputTokens: -1, counter }, /outputTokens/],
    [{ tokensPerMinute: 1_000, maxWaitSeconds: 600, counter }, /maxWaitSeconds: .*5 minutes/],
    [{ tokensPerMinute: 1_000, counter: {} }, /tokenLimit\.counter: expected a ModelTokenCounter/],
    [{ tokensPerMinute: 1_000, counter, estimate: 5 }, /tokenLimit\.estimate: must be a function/],
    [{ tokensPerMinute: 1_000, counter, interactiveShare: 0.6 }, /tokenLimit\.interactiveShare: must be a number from 0 to 0\.5/],
  ])('refuses %j', (options, message) => {
    expect(() => checkedModelTokenLimit(options as never)).toThrow(message);
  });

  it('reads the variables, and needs the counter\'s database with a limit', () => {
    const url = 'postgresql://turnpike:secret@127.0.0.1:5432/postgres';
    const capacity = modelCapacityFromEnvironment({ TURNPIKE_MODEL_TOKENS_PER_MINUTE: '48000', TURNPIKE_MODEL_TOKEN_WINDOW_SECONDS: '10', TURNPIKE_MODEL_EXPECTED_OUTPUT_TOKENS: '200', TURNPIKE_MODEL_TOKENS_INTERACTIVE_SHARE: '0.15', TURNPIKE_MODEL_TOKENS_POSTGRES_URL: url });
    expect(capacity?.tokenLimit).toMatchObject({ tokensPerMinute: 48_000, windowSeconds: 10, outputTokens: 200, interactiveShare: 0.15 });
    expect(capacity?.tokenLimit?.counter.description).not.toContain('secret');
    expect(() => modelCapacityFromEnvironment({ TURNPIKE_MODEL_TOKENS_PER_MINUTE: '48000' })).toThrow(/TURNPIKE_MODEL_TOKENS_POSTGRES_URL is needed/);
    expect(() => modelCapacityFromEnvironment({ TURNPIKE_MODEL_TOKEN_WINDOW_SECONDS: '10' })).toThrow(/TURNPIKE_MODEL_TOKENS_PER_MINUTE is needed/);
    expect(() => modelCapacityFromEnvironment({ TURNPIKE_MODEL_TOKENS_PER_MINUTE: 'lots', TURNPIKE_MODEL_TOKENS_POSTGRES_URL: url })).toThrow(/TURNPIKE_MODEL_TOKENS_PER_MINUTE must be a number/);
  });
});
