/**
 * The fleet figure's token counter variant (scenarios/fleet.ts): its queue rate, the counter's
 * settings, and the workers' variables that turn it on with the provider's headers followed.
 */

export interface FleetCounter {
  tokensPerMinute: number;
  windowSeconds: number;
  expectedOutput: number;
  maxConcurrentCalls: number;
  /** The share of the counter's limit kept for interactive calls (B's). */
  interactiveShare: number;
}

/**
 * With the token counter, the queue's rate is nearer the limit (`--fleet-tokens-rate`): the
 * counter, not the rate's headroom, keeps the provider's windows within its limit, and the rate
 * stays a little under the counter's so that few calls wait in a worker (where priority no longer
 * applies) rather than in the queue.
 */
export const TOKENS_QUEUE_RATE = 7.5;
/**
 * The counter: the provider's 8,000 tokens per 10 s, held over any 10.5 s (the half second is the
 * margin for the time between a booking and its request's arrival at the provider): 45,714 a
 * minute. A call expects its request's characters ÷ 4 (about 15 tokens here: the bench's turns offer
 * no tools) plus `EXPECTED_OUTPUT` tokens: about the 100 the fake charges. A share of 15% is kept
 * for interactive calls: B's one call a second is 13% of it, so B's calls go at once, not behind
 * the bookings of A's calls waiting in the workers.
 */
const COUNTER: FleetCounter = { tokensPerMinute: 45_714, windowSeconds: 10.5, expectedOutput: 85, maxConcurrentCalls: 10, interactiveShare: 0.15 };

/** The counter for a window of `windowSeconds` (`--fleet-token-window`): the provider's 8,000 tokens over it. */
export function counterFor(windowSeconds: number | undefined): FleetCounter {
  return windowSeconds === undefined ? COUNTER : { ...COUNTER, windowSeconds, tokensPerMinute: Math.floor((8_000 * 60) / windowSeconds) };
}

/** The variables that give each worker the counter, in the PostgreSQL at `url`, and follow the provider's headers. */
export function counterEnvironment(url: string, counter: FleetCounter): Record<string, string> {
  return {
    TURNPIKE_MODEL_TOKENS_POSTGRES_URL: url,
    TURNPIKE_MODEL_TOKENS_PER_MINUTE: String(counter.tokensPerMinute),
    TURNPIKE_MODEL_TOKEN_WINDOW_SECONDS: String(counter.windowSeconds),
    TURNPIKE_MODEL_EXPECTED_OUTPUT_TOKENS: String(counter.expectedOutput),
    TURNPIKE_MODEL_MAX_CONCURRENT_CALLS: String(counter.maxConcurrentCalls),
    TURNPIKE_MODEL_TOKENS_INTERACTIVE_SHARE: String(counter.interactiveShare),
    TURNPIKE_MODEL_FOLLOW_PROVIDER_HEADERS: 'true',
  };
}
