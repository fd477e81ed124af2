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
 *
 * **A share kept for interactive calls.** First come, first served puts an interactive call behind
 * every booking a batch has made before it, up to a window ahead. With `reserved` tokens kept, the
 * bookings are in two lanes, each placed by the rule above among its own: the shared lane holds at
 * most `limit - reserved` in any window, the reserved lane at most `reserved`, so every window still
 * holds at most `limit`. Every call may book in the shared lane; an interactive call books in the
 * one where it goes first (the shared one when both let it go at once). The cost: while no
 * interactive call uses it, the reserve goes unused.
 */

/** One call's booking: `tokens` counted at `atMs` under `key`, in the reserved lane or the shared one. */
export interface TokenBooking {
  atMs: number;
  tokens: number;
  reserved?: boolean;
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
  /** Of `limit`, the tokens only interactive calls may book in any window. Default 0. */
  reserved?: number;
  /** Whether the call may book in the reserve. */
  interactive?: boolean;
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

/** The lanes a call may book in, with each one's limit: the shared lane, and the reserve for an interactive call. Refuses (RangeError) a call that fits neither. */
export function lanesOf({ tokens, limit, windowMs, reserved = 0, interactive = false }: TokenBookingRequest): Array<{ reserved: boolean; limit: number }> {
  if (!(Number.isInteger(reserved) && reserved >= 0 && reserved < limit)) throw new TypeError(`reserved must be a whole number of tokens from 0 to less than the limit ${limit} (got ${reserved})`);
  const lanes = [{ reserved: false, limit: limit - reserved }, ...(interactive && reserved > 0 ? [{ reserved: true, limit: reserved }] : [])];
  const fitting = lanes.filter((lane) => tokens <= lane.limit);
  if (fitting.length === 0) {
    checkFits(tokens, Math.max(...lanes.map((lane) => lane.limit)), windowMs);
  }
  return fitting;
}

/**
 * Where a booking goes (the rule above): in each lane it may use, `earliestBooking` among that
 * lane's bookings with that lane's limit; the earliest, the shared lane on a tie.
 */
export function placeBooking(bookings: readonly TokenBooking[], nowMs: number, request: TokenBookingRequest): { atMs: number; reserved: boolean } {
  const placements = lanesOf(request).map((lane) => ({
    reserved: lane.reserved,
    atMs: earliestBooking(bookings.filter((booking) => Boolean(booking.reserved) === lane.reserved), nowMs, request.tokens, lane.limit, request.windowMs),
  }));
  return placements.reduce((best, placement) => (placement.atMs < best.atMs ? placement : best));
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

  async book(request: TokenBookingRequest): Promise<{ waitMs: number }> {
    const { key, id, tokens, windowMs } = request;
    const now = this.clock();
    const ofKey = this.bookings.get(key) ?? new Map<string, TokenBooking>();
    this.bookings.set(key, ofKey);
    // A booking of the same id is placed again, as the PostgreSQL counter does.
    ofKey.delete(id);
    for (const [other, booking] of ofKey) if (booking.atMs <= now - windowMs) ofKey.delete(other);
    const { atMs, reserved } = placeBooking([...ofKey.values()], now, request);
    ofKey.set(id, { atMs, tokens, reserved });
    return { waitMs: atMs - now };
  }

  async settle(key: string, id: string, tokens: number): Promise<void> {
    const booking = this.bookings.get(key)?.get(id);
    if (booking) booking.tokens = tokens;
  }
}
