/**
 * A provider's request rate limit, as the fake enforces it: at most `limit` requests admitted in
 * any window of `windowMs`; a request over it gets the real 429 with `retry-after` (the request
 * is not admitted, and does not count). Install it as the fake's default reply:
 *
 *   const limit = requestRateLimit({ limit: 8, windowMs: 2_000 });
 *   fake.setDefault('openai', limit.respond);
 *   … limit.rejected, limit.admitted, limit.busiestWindow()
 *
 * `providerRateLimit` enforces a requests-per-minute and a tokens-per-minute limit together, with
 * OpenAI's own 429 body and headers.
 */
import type { ScriptedResponse } from './server.js';

export interface RequestRateLimit {
  /** The fake's reply to one request: `reply` while under the limit, else a 429. */
  respond(body?: { model?: string }): ScriptedResponse;
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
    busiestWindow: () => busiest(admitted, windowMs),
  };
}

/** The most of `times` (ascending) in any one window of `windowMs`. */
function busiest(times: readonly number[], windowMs: number): number {
  let most = 0;
  for (let first = 0, last = 0; last < times.length; last++) {
    while (times[last]! - times[first]! >= windowMs) first++;
    most = Math.max(most, last - first + 1);
  }
  return most;
}

/**
 * An OpenAI organisation's limits on one model, as api.openai.com enforces them: at most
 * `requestsPerMinute` requests and `tokensPerMinute` tokens a minute, held pro rata over any window
 * of `windowMs` (default a minute; OpenAI may enforce a limit over shorter periods, e.g. 600 RPM
 * as 100 requests in 10 s). Each admitted request is charged its reply's tokens (`tokensPerCall`, the
 * reply's input plus output usage). A request over either limit is not admitted and gets the real
 * 429: the error body names the limit (`Rate limit reached for <model> … on tokens per min (TPM):
 * Limit …, Used …, Requested …`), with `retry-after` and the `x-ratelimit-*` headers OpenAI sends.
 */
export interface ProviderRateLimit extends RequestRateLimit {
  /** 429s by the limit that refused them. */
  readonly rejectedBy: { requests: number; tokens: number };
  /** When each 429 was answered (ms since the epoch). */
  readonly rejectedAt: readonly number[];
  /** Tokens each admitted request is charged. */
  readonly tokensPerCall: number;
  /** Admitted requests a second the tighter of the two limits allows. */
  readonly callsPerSecond: number;
}

export function providerRateLimit({
  requestsPerMinute,
  tokensPerMinute,
  windowMs = 60_000,
  reply = { text: 'ok', usage: { inputTokens: 90, outputTokens: 10 } },
}: {
  requestsPerMinute: number;
  tokensPerMinute: number;
  windowMs?: number;
  reply?: ScriptedResponse & { usage?: { inputTokens?: number; outputTokens?: number } };
}): ProviderRateLimit {
  const usage = 'usage' in reply ? reply.usage : undefined;
  const requestLimit = Math.floor((requestsPerMinute * windowMs) / 60_000);
  const tokenLimit = Math.floor((tokensPerMinute * windowMs) / 60_000);
  const tokensPerCall = (usage?.inputTokens ?? 10) + (usage?.outputTokens ?? 5);
  const admitted: number[] = [];
  /** The admitted requests still in the window, oldest first. */
  const window: number[] = [];
  const rejectedBy = { requests: 0, tokens: 0 };
  const rejectedAt: number[] = [];
  const seconds = (ms: number) => `${Math.max(0.001, ms / 1_000).toFixed(3).replace(/\.?0+$/, '')}s`;
  return {
    tokensPerCall,
    callsPerSecond: (Math.min(requestLimit, Math.floor(tokenLimit / tokensPerCall)) * 1_000) / windowMs,
    respond(body?: { model?: string }) {
      const now = Date.now();
      while (window.length > 0 && window[0]! <= now - windowMs) window.shift();
      const requests = window.length;
      const tokens = requests * tokensPerCall;
      const overRequests = requests + 1 > requestLimit;
      const overTokens = tokens + tokensPerCall > tokenLimit;
      if (overRequests || overTokens) {
        // The window frees room when its oldest admitted requests leave it.
        const callsToFree = overRequests ? requests + 1 - requestLimit : Math.ceil((tokens + tokensPerCall - tokenLimit) / tokensPerCall);
        const waitMs = window[Math.max(0, callsToFree - 1)]! + windowMs - now;
        const model = body?.model ?? 'gpt-4.1-mini';
        const message = overTokens
          ? `Rate limit reached for ${model} in organization org-turnpike on tokens per min (TPM): Limit ${tokensPerMinute}, Used ${tokens}, Requested ${tokensPerCall}. Please try again in ${seconds(waitMs)}. Visit https://platform.openai.com/account/rate-limits to learn more.`
          : `Rate limit reached for ${model} in organization org-turnpike on requests per min (RPM): Limit ${requestsPerMinute}, Used ${requests}, Requested 1. Please try again in ${seconds(waitMs)}. Visit https://platform.openai.com/account/rate-limits to learn more.`;
        rejectedBy[overTokens ? 'tokens' : 'requests']++;
        rejectedAt.push(now);
        return {
          status: 429,
          message,
          headers: {
            'retry-after': String(Math.max(1, Math.ceil(waitMs / 1_000))),
            'x-ratelimit-limit-requests': String(requestsPerMinute),
            'x-ratelimit-remaining-requests': String(Math.max(0, requestLimit - requests)),
            'x-ratelimit-reset-requests': seconds(requests > 0 ? window[0]! + windowMs - now : 0),
            'x-ratelimit-limit-tokens': String(tokensPerMinute),
            'x-ratelimit-remaining-tokens': String(Math.max(0, tokenLimit - tokens)),
            'x-ratelimit-reset-tokens': seconds(waitMs),
          },
        };
      }
      window.push(now);
      admitted.push(now);
      return reply;
    },
    get rejected() {
      return rejectedBy.requests + rejectedBy.tokens;
    },
    rejectedBy,
    rejectedAt,
    admitted,
    busiestWindow: () => busiest(admitted, windowMs),
  };
}
