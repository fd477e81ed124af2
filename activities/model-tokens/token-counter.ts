/**
 * A tokens-per-minute limit the fleet shares (`modelCapacity.tokenLimit`): the counter's
 * interface, the booking rule, and the in-memory counter (one process only). The PostgreSQL
 * counter, which every worker of a fleet shares, is `postgres-token-counter.ts`.
 *
 * **Bookings, first come, first served.** A model call books the tokens it is expected to use
 * before it calls the provider. The counter gives it the earliest time, not before now and not
 * before any earlier booking, at which the window ending then (the bookings of the `windowMs`
 * before it) holds at most `limit` tokens with it; the call waits until that time and goes.
 * Since no booking is ever placed before an earlier one, the window ending at a new booking is the
 * fullest window it belongs to, so **no window of `windowMs` ever holds more than `limit` booked
 * tokens**, however many workers book. After the call its booking is settled to the tokens the
 * provider reported (less, or more, than expected): bookings of finished calls count what was
 * used, bookings of calls in flight what was expected.
 */

/** One call's booking: `tokens` counted at `atMs` under `key`. */
export interface TokenBooking {
  atMs: number;
  tokens: number;
}

export interface TokenBookingRequest {
  /** What the limit is of: turnpike books per model task queue. */
  key: string;
  /** The call's attempt, unique per key: settled and released by it. */
  id: string;
  /** Tokens the call is expected to use. */
  tokens: number;
  /** Tokens allowed in any window of `windowMs`. */
  limit: number;
  windowMs: number;
}

export interface ModelTokenCounter {
  /** Where it counts, for logs (no credentials). */
  readonly description: string;
  /**
   * Books the call (rule above) and says how long to wait before calling: 0 when it may go now.
   * A call expecting more tokens than `limit` can never fit: refused with a RangeError.
   */
  book(request: TokenBookingRequest): Promise<{ waitMs: number }>;
  /** Sets a booking's tokens to what the call used; 0 releases it (a call that never reached the provider). */
  settle(key: string, id: string, tokens: number): Promise<void>;
  /** Releases connections; a counter given to a worker is its owner's to close. */
  close?(): Promise<void>;
}

/** Refuses (RangeError) a call that expects more tokens than the limit allows in a window: it could never go. */
export function checkFits(tokens: number, limit: number, windowMs: number): void {
  if (tokens > limit) throw new RangeError(`a call expecting ${tokens} tokens can never fit a limit of ${limit} tokens per ${windowMs / 1_000} s`);
}

/**
 * When a booking of `tokens` may go, given the key's bookings in the window before now and after
 * it (`bookings`, any order): the earliest time at or after `nowMs` and after every booking at
 * which the window ending then holds at most `limit` with it. The windows are half-open: a booking
 * at `t` leaves the window ending at `t + windowMs`.
 */
export function earliestBooking(bookings: readonly TokenBooking[], nowMs: number, tokens: number, limit: number, windowMs: number): number {
  checkFits(tokens, limit, windowMs);
  const sorted = [...bookings].sort((a, b) => a.atMs - b.atMs);
  let at = Math.max(nowMs, sorted.length > 0 ? sorted[sorted.length - 1]!.atMs : nowMs);
  // `held`: the tokens of sorted[first..], the bookings in the window ending at `at`.
  let first = 0;
  let held = 0;
  const leave = () => {
    for (; first < sorted.length && sorted[first]!.atMs <= at - windowMs; first++) held -= sorted[first]!.tokens;
  };
  for (const booking of sorted) held += booking.tokens;
  leave();
  // Move past the oldest bookings one by one until the call fits beside the rest.
  while (held + tokens > limit) {
    at = Math.max(at, sorted[first]!.atMs + windowMs);
    leave();
  }
  return at;
}

/** Counts in this process's memory: for tests and a single worker. Two processes with their own each hold only their own calls. */
export class InMemoryModelTokenCounter implements ModelTokenCounter {
  readonly description = 'in memory (this process only)';
  private readonly bookings = new Map<string, Map<string, TokenBooking>>();

  constructor(private readonly clock: () => number = Date.now) {}

  async book({ key, id, tokens, limit, windowMs }: TokenBookingRequest): Promise<{ waitMs: number }> {
    const now = this.clock();
    const ofKey = this.bookings.get(key) ?? new Map<string, TokenBooking>();
    this.bookings.set(key, ofKey);
    // A booking of the same id is placed again, as the PostgreSQL counter does.
    ofKey.delete(id);
    for (const [other, booking] of ofKey) if (booking.atMs <= now - windowMs) ofKey.delete(other);
    const atMs = earliestBooking([...ofKey.values()], now, tokens, limit, windowMs);
    ofKey.set(id, { atMs, tokens });
    return { waitMs: atMs - now };
  }

  async settle(key: string, id: string, tokens: number): Promise<void> {
    const booking = this.bookings.get(key)?.get(id);
    if (booking) booking.tokens = tokens;
  }
}
