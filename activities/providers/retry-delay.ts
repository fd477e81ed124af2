/**
 * The wait before a provider call's next attempt: the delay a provider asked for
 * (`retry-after-ms`, `retry-after`), fitted to the activity's own retry policy.
 */
import { msToNumber, type RetryPolicy } from '@temporalio/common';
import type { ActivityRetryInfo } from './provider-client.js';

/**
 * The delay a provider asked for, in milliseconds: `retry-after-ms` (OpenAI's, more precise),
 * else `retry-after` as seconds or as an HTTP date. Undefined when absent or unparsable, so
 * Temporal's own backoff applies. Zero (or a date in the past) means "no need to wait"; what is
 * actually sent to Temporal is decided by {@link nextRetryDelayFor}.
 */
export function retryDelayMs(headers: Headers | undefined, now: number = Date.now()): number | undefined {
  const milliseconds = parseNonNegative(headers?.get('retry-after-ms'));
  if (milliseconds !== undefined) return Math.ceil(milliseconds);
  const retryAfter = headers?.get('retry-after')?.trim();
  if (!retryAfter) return undefined;
  const seconds = parseNonNegative(retryAfter);
  if (seconds !== undefined) return Math.ceil(seconds * 1000);
  // Only an HTTP date (it names a weekday or month) counts: Date.parse would also read '-1' as a year.
  const date = /[a-z]/i.test(retryAfter) ? Date.parse(retryAfter) : Number.NaN;
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * When the activity cannot see its retry policy (a server that does not send it, or a provider
 * called outside an activity), a requested delay up to this long is left to the policy's backoff:
 * one second is Temporal's default initial interval.
 */
const FLOOR_WITHOUT_POLICY_MS = 1_000;

/**
 * The `nextRetryDelay` for a delay the provider asked for, or undefined to leave the wait to the
 * activity's retry policy. The provider's delay is a floor on the next retry, never a way to
 * stop retrying, and never longer than the policy's maximum interval:
 *
 * - at or below the backoff the policy would use for this attempt anyway (always so for zero,
 *   sub-millisecond or past-date delays): undefined, and Temporal's own backoff applies;
 * - above the policy's `maximumInterval`: the maximum interval;
 * - otherwise: the requested delay.
 *
 * Why it must be done here: Temporal's server (1.29, `MutableStateImpl.RetryActivity`) lets an
 * application's `nextRetryDelay` replace the policy's maximum interval outright. So a large
 * delay is waited in full (a `retry-after` of a day parks the turn for a day), and a zero delay
 * (which the SDK sends as a present, zero Duration rather than leaving it out) makes both the
 * interval and the maximum interval zero, which `nextBackoffInterval` reads as
 * `RETRY_STATE_TIMEOUT`: the attempt that got the rate limit becomes the last one and the turn fails.
 */
export function nextRetryDelayFor(requestedMs: number | undefined, retry?: ActivityRetryInfo): number | undefined {
  if (requestedMs === undefined) return undefined;
  const policy = retry?.retryPolicy;
  const maximumMs = policy?.maximumInterval != null ? msToNumber(policy.maximumInterval) : undefined;
  const delayMs = maximumMs !== undefined && maximumMs > 0 ? Math.min(requestedMs, maximumMs) : requestedMs;
  const floorMs = policy && retry ? policyBackoffMs(policy, retry.attempt, maximumMs) : FLOOR_WITHOUT_POLICY_MS;
  // The floor is never negative, so whatever is returned is a positive delay.
  return delayMs > Math.max(floorMs, 0) ? delayMs : undefined;
}

/**
 * The wait Temporal's server computes for a retry after `attempt` failed, when no
 * `nextRetryDelay` is given: initial interval × coefficient^(attempt − 1), capped at the maximum
 * interval. The server resolves unset fields before the activity sees the policy; the fallbacks
 * are its defaults.
 */
export function policyBackoffMs(policy: RetryPolicy, attempt: number, maximumMs: number | undefined = policy.maximumInterval != null ? msToNumber(policy.maximumInterval) : undefined): number {
  const initialMs = policy.initialInterval != null ? msToNumber(policy.initialInterval) : 1_000;
  const backoffMs = initialMs * Math.pow(policy.backoffCoefficient ?? 2, Math.max(attempt, 1) - 1);
  return maximumMs !== undefined && maximumMs > 0 ? Math.min(backoffMs, maximumMs) : backoffMs;
}

function parseNonNegative(value: string | null | undefined): number | undefined {
  if (value == null || !/^\s*\d+(\.\d+)?\s*$/.test(value)) return undefined;
  return Number(value);
}
