/**
 * What a provider's response says about its rate limits, read from its headers: until when the
 * whole fleet should send it nothing (docs/tenants-and-capacity.md, "The providers' headers").
 *
 * - A 429 with `retry-after-ms` / `retry-after` (seconds or an HTTP date): until then.
 * - OpenAI (and compatible servers): `x-ratelimit-remaining-requests` / `-tokens` at or below
 *   the threshold, until `x-ratelimit-reset-requests` / `-tokens`, a Go-style duration from now
 *   (`6m0s`, `1s`, `20ms`, `1m30.5s`).
 * - Anthropic: `anthropic-ratelimit-requests-remaining` / `-tokens-remaining` /
 *   `-input-tokens-remaining` / `-output-tokens-remaining` at or below the threshold, until the
 *   matching `-reset`, an RFC 3339 time (`2025-08-21T12:40:59Z`).
 *
 * A negative remaining count (Azure OpenAI sends -1 when it does not say) and anything unparsable
 * are ignored: a header that cannot be read never slows the fleet.
 */
import { retryDelayMs } from './retry-delay.js';

/** A pause the provider asked for: nothing should reach it before `untilMs` (ms since the epoch). */
export interface ProviderSlowDown {
  untilMs: number;
  /** Which header said so, e.g. `x-ratelimit-remaining-tokens: 0 (reset 6m0s)`. */
  reason: string;
}

/** The remaining counts at or below which a provider's limit counts as used up (`modelCapacity.followProviderHeaders`). */
export interface SlowDownThresholds {
  /** Remaining requests at or below this pause the queue until their reset. Default 0. */
  requests?: number;
  /** Remaining tokens at or below this pause the queue until their reset. Default 0. */
  tokens?: number;
}

/** The longest pause one response can ask for: a day's limit told as "23h" pauses in 5-minute steps, reported again as calls go on. */
export const MAX_PROVIDER_PAUSE_MS = 5 * 60_000;

const OPENAI_LIMITS = [
  { remaining: 'x-ratelimit-remaining-requests', reset: 'x-ratelimit-reset-requests', kind: 'requests' },
  { remaining: 'x-ratelimit-remaining-tokens', reset: 'x-ratelimit-reset-tokens', kind: 'tokens' },
] as const;

const ANTHROPIC_LIMITS = [
  { remaining: 'anthropic-ratelimit-requests-remaining', reset: 'anthropic-ratelimit-requests-reset', kind: 'requests' },
  { remaining: 'anthropic-ratelimit-tokens-remaining', reset: 'anthropic-ratelimit-tokens-reset', kind: 'tokens' },
  { remaining: 'anthropic-ratelimit-input-tokens-remaining', reset: 'anthropic-ratelimit-input-tokens-reset', kind: 'tokens' },
  { remaining: 'anthropic-ratelimit-output-tokens-remaining', reset: 'anthropic-ratelimit-output-tokens-reset', kind: 'tokens' },
] as const;

/**
 * The latest time the response's headers ask the fleet to wait for, or undefined when they ask
 * for nothing (or for nothing later than `now`). Capped at {@link MAX_PROVIDER_PAUSE_MS}.
 */
export function slowDownFrom(status: number, headers: Headers, now: number = Date.now(), thresholds: SlowDownThresholds = {}): ProviderSlowDown | undefined {
  const found: ProviderSlowDown[] = [];
  if (status === 429) {
    const delay = retryDelayMs(headers, now);
    if (delay !== undefined) found.push({ untilMs: now + delay, reason: `429 ${headers.has('retry-after-ms') ? `retry-after-ms: ${headers.get('retry-after-ms')}` : `retry-after: ${headers.get('retry-after')}`}` });
  }
  for (const limit of OPENAI_LIMITS) {
    const remaining = remainingOf(headers, limit.remaining);
    const resetMs = parseGoDuration(headers.get(limit.reset));
    if (remaining !== undefined && remaining <= (thresholds[limit.kind] ?? 0) && resetMs !== undefined) {
      found.push({ untilMs: now + resetMs, reason: `${limit.remaining}: ${remaining} (${limit.reset}: ${headers.get(limit.reset)})` });
    }
  }
  for (const limit of ANTHROPIC_LIMITS) {
    const remaining = remainingOf(headers, limit.remaining);
    const reset = headers.get(limit.reset);
    const resetAt = reset ? parseRfc3339(reset) : undefined;
    if (remaining !== undefined && remaining <= (thresholds[limit.kind] ?? 0) && resetAt !== undefined) {
      found.push({ untilMs: resetAt, reason: `${limit.remaining}: ${remaining} (${limit.reset}: ${reset})` });
    }
  }
  const latest = found.filter((slowDown) => slowDown.untilMs > now).sort((a, b) => b.untilMs - a.untilMs)[0];
  return latest ? { ...latest, untilMs: Math.min(latest.untilMs, now + MAX_PROVIDER_PAUSE_MS) } : undefined;
}

/** A remaining count: a whole number of at least 0, else undefined. */
function remainingOf(headers: Headers, name: string): number | undefined {
  const value = headers.get(name)?.trim();
  return value !== undefined && /^\d+$/.test(value) ? Number(value) : undefined;
}

const GO_DURATION = /^(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m(?!s))?(?:(\d+(?:\.\d+)?)s)?(?:(\d+(?:\.\d+)?)ms)?$/;

/**
 * OpenAI's reset, a Go `time.Duration` string (`6m0s`, `1s`, `20ms`, `1m30.5s`, `2h0m0s`), in
 * milliseconds; a bare number is read as seconds. Undefined when empty or unparsable.
 */
export function parseGoDuration(value: string | null | undefined): number | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text) * 1_000;
  const match = GO_DURATION.exec(text);
  if (!match) return undefined;
  const [, hours = '0', minutes = '0', seconds = '0', milliseconds = '0'] = match;
  return Number(hours) * 3_600_000 + Number(minutes) * 60_000 + Number(seconds) * 1_000 + Number(milliseconds);
}

/** Anthropic's reset, an RFC 3339 time with a zone (`2025-08-21T12:40:59Z`, `…+02:00`), in ms since the epoch. */
export function parseRfc3339(value: string): number | undefined {
  const text = value.trim();
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : at;
}
