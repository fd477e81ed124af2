/**
 * A provider's request rate limit, as the fake enforces it: at most `limit` requests admitted in
 * any window of `windowMs`; a request over it gets the real 429 with `retry-after` (the request
 * is not admitted, and does not count). Install it as the fake's default reply:
 *
 *   const limit = requestRateLimit({ limit: 8, windowMs: 2_000 });
 *   fake.setDefault('openai', limit.respond);
 *   … limit.rejected, limit.admitted, limit.busiestWindow()
 */
import type { ScriptedResponse } from './server.js';

export interface RequestRateLimit {
  /** The fake's reply to one request: `reply` while under the limit, else a 429. */
  respond(): ScriptedResponse;
  /** Requests answered 429. */
  readonly rejected: number;
  /** When each admitted request arrived (ms since the epoch). */
  readonly admitted: readonly number[];
  /** The most requests admitted in any one window. */
  busiestWindow(): number;
}

export function requestRateLimit({ limit, windowMs, reply = { text: 'ok' } }: { limit: number; windowMs: number; reply?: ScriptedResponse }): RequestRateLimit {
  const admitted: number[] = [];
  let rejected = 0;
  return {
    respond() {
      const now = Date.now();
      const inWindow = admitted.filter((at) => at > now - windowMs);
      if (inWindow.length >= limit) {
        rejected++;
        const waitMs = inWindow[0]! + windowMs - now;
        return { status: 429, headers: { 'retry-after': String(Math.max(1, Math.ceil(waitMs / 1_000))) } };
      }
      admitted.push(now);
      return reply;
    },
    get rejected() {
      return rejected;
    },
    admitted,
    busiestWindow() {
      let most = 0;
      for (let first = 0, last = 0; last < admitted.length; last++) {
        while (admitted[last]! - admitted[first]! >= windowMs) first++;
        most = Math.max(most, last - first + 1);
      }
      return most;
    },
  };
}
