/**
 * What the two provider activities share: call options, credential look-up, tool-result text,
 * and the translation of SDK errors into Temporal failures.
 *
 * Retries belong to Temporal, not to the SDKs (clients are built with `maxRetries: 0`), so
 * every error an SDK raises is turned into an `ApplicationFailure` whose `nonRetryable` flag
 * and `type` tell the activity retry policy what to do, and whose `nextRetryDelay` carries a
 * provider's `retry-after` (fitted to the activity's own retry policy, see `nextRetryDelayFor`)
 * so a rate-limited model is not hammered.
 */
import { STATUS_CODES } from 'node:http';
import { ApplicationFailure, msToNumber, type RetryPolicy } from '@temporalio/common';
import type { ModelStreamListener } from './stream-delta.js';

import { ProviderErrorType, type ProviderName } from './error-types.js';

export { ProviderErrorType, type ProviderName } from './error-types.js';

/** Overrides for one model call; anything left out is read from the environment at call time. */
export interface ProviderCallOptions {
  /** Defaults to `OPENAI_API_KEY` / `ANTHROPIC_API_KEY`. */
  apiKey?: string;
  /** Defaults to `OPENAI_BASE_URL` / `ANTHROPIC_BASE_URL`, then the SDK's own default. */
  baseURL?: string;
  /** Per-request timeout; defaults to the SDK's (10 minutes). Keep it below the activity's startToCloseTimeout. */
  timeoutMs?: number;
  /** Aborts the HTTP request, e.g. `Context.current().cancellationSignal` when the activity is cancelled. */
  signal?: AbortSignal;
  /**
   * The calling activity's attempt and retry policy (`Context.current().info`), so that a
   * provider's `retry-after` is fitted to them; see {@link nextRetryDelayFor}.
   */
  retry?: ActivityRetryInfo;
  /** Receives text, reasoning and tool-input deltas as the provider streams them. */
  onDelta?: ModelStreamListener;
}

/** What an activity knows about its own retries, from `Context.current().info`. */
export interface ActivityRetryInfo {
  /** The attempt that is failing, from 1. */
  attempt: number;
  /** The policy as the server resolved it (defaults filled in); undefined if the server did not send it. */
  retryPolicy?: RetryPolicy;
}

const environmentVariables = {
  openai: { apiKey: 'OPENAI_API_KEY', baseURL: 'OPENAI_BASE_URL' },
  anthropic: { apiKey: 'ANTHROPIC_API_KEY', baseURL: 'ANTHROPIC_BASE_URL' },
} as const;

/** What an SDK client needs, resolved from the options and then the worker's environment. */
export interface ProviderClientSettings {
  apiKey: string;
  baseURL: string | undefined;
  timeout: number | undefined;
  maxRetries: 0;
}

/**
 * Resolves the key and base URL for `provider` at call time, so a worker picks up a rotated
 * key without a restart and tests can point the SDKs at a fake server per test.
 *
 * @throws a non-retryable `ProviderAuthenticationError` naming the env var when no key is set:
 *   retrying cannot make a key appear.
 */
export function resolveClientSettings(provider: ProviderName, options: ProviderCallOptions = {}): ProviderClientSettings {
  const names = environmentVariables[provider];
  const apiKey = options.apiKey ?? process.env[names.apiKey];
  if (!apiKey) {
    throw ApplicationFailure.nonRetryable(
      `${provider}: no API key — set ${names.apiKey} in the worker's environment`,
      ProviderErrorType.authentication,
    );
  }
  return {
    apiKey,
    baseURL: options.baseURL ?? (process.env[names.baseURL] || undefined),
    timeout: options.timeoutMs,
    maxRetries: 0,
  };
}

/**
 * One SDK client per provider and settings, reused across calls: each client owns an HTTP
 * agent, so reuse keeps connections (and TLS sessions) alive between a turn's model steps.
 * Settings are still read from the environment on every call, so a rotated key takes effect.
 */
export function cachedClient<Client>(cache: Map<string, Client>, settings: ProviderClientSettings, create: (settings: ProviderClientSettings) => Client): Client {
  const key = JSON.stringify([settings.apiKey, settings.baseURL, settings.timeout]);
  let client = cache.get(key);
  if (!client) {
    client = create(settings);
    cache.set(key, client);
  }
  return client;
}

/**
 * The text a tool result is sent as. Both wire formats want a string; JSON keeps structured
 * outputs readable to the model. `undefined` (a tool that returned nothing) becomes `null`.
 */
export function toolResultText(output: unknown): string {
  if (typeof output === 'string') return output;
  return JSON.stringify(output) ?? 'null';
}

/** What this module reads of an SDK's HTTP error: both SDKs' `APIError` have it. */
export interface SdkApiError extends Error {
  status: number | undefined;
  headers: Headers | undefined;
}

type ErrorClass<E extends Error = Error> = abstract new (...args: never[]) => E;

/**
 * One SDK's error classes and how to read its HTTP errors, given by the provider module that
 * loads the SDK (openai-errors.ts, anthropic-errors.ts). This module imports neither SDK, so a
 * worker that has installed only one of them can call it.
 */
export interface ProviderSdk<ApiError extends SdkApiError = SdkApiError> {
  name: ProviderName;
  /** The base class of every error the SDK raises. */
  Error: ErrorClass;
  APIError: ErrorClass<ApiError>;
  ConnectionError: ErrorClass;
  /** A subclass of `ConnectionError`: checked first. */
  TimeoutError: ErrorClass;
  UserAbortError: ErrorClass;
  /** The API's name for the error (Anthropic's `overloaded_error`), if it gives a useful one. */
  errorType(error: ApiError): string | undefined;
  /** The API's own message, if the body had one. */
  apiMessage(error: ApiError): string | undefined;
}

/**
 * Turns anything a provider call threw into what the activity should throw.
 *
 * - Cancellation: the abort reason (Temporal's `CancelledFailure`) is returned unchanged so the
 *   worker reports the activity as cancelled rather than failed.
 * - Timeouts, connection errors, bodies that are not JSON, 408/409/429/499/5xx: retryable,
 *   with `nextRetryDelay` from `retry-after-ms` / `retry-after` when the provider sent one and
 *   it asks for longer than the activity's own backoff ({@link nextRetryDelayFor}).
 * - 401/403, 400/422 and other 4xx, 404: non-retryable, typed so callers can tell them apart.
 * - Anything else (e.g. an `ApplicationFailure` we raised ourselves) passes through.
 */
export function toProviderFailure<ApiError extends SdkApiError>(sdk: ProviderSdk<ApiError>, error: unknown, options: Pick<ProviderCallOptions, 'signal' | 'retry'> = {}): unknown {
  const { signal } = options;
  const provider = sdk.name;
  if (signal?.aborted && isUserAbort(sdk, error)) return signal.reason ?? error;
  if (error instanceof sdk.TimeoutError) {
    return retryable(`${provider}: request timed out`, error);
  }
  if (error instanceof sdk.ConnectionError) {
    return retryable(`${provider}: connection error — ${connectionCause(error)}`, error);
  }
  if (error instanceof sdk.APIError && typeof error.status === 'number') {
    return fromHttpError(sdk, error, error.status, options.retry);
  }
  // The SDKs call `response.json()` themselves: a truncated or garbled body surfaces as a bare
  // SyntaxError. A proxy cutting a response short is transient, so it is worth another attempt.
  if (error instanceof SyntaxError) {
    return retryable(`${provider}: malformed response body — ${error.message}`, error);
  }
  return error;
}

/**
 * {@link toProviderFailure} for a streamed call, which can also fail after the response began:
 *
 * - an error the API sends mid-stream (Anthropic's `event: error`, e.g. `overloaded_error`;
 *   OpenAI's `{"error": …}` chunk) reaches the SDK as an API error without a status. The request
 *   had been accepted, so it is the server's trouble: retryable.
 * - a stream that ends before its end (no `message_stop`, a choice without `finish_reason`, no
 *   events at all) is reported by the SDK as its base error: retryable, as a body lacking what the
 *   API promises is ({@link unexpectedResponse}).
 * - a connection dropped part-way surfaces from fetch as a bare error ("terminated"): retryable.
 *
 * Cancellation still wins: when the activity's signal fired, its reason is returned.
 */
export function toStreamFailure<ApiError extends SdkApiError>(sdk: ProviderSdk<ApiError>, error: unknown, options: Pick<ProviderCallOptions, 'signal' | 'retry'> = {}): unknown {
  const provider = sdk.name;
  const failure = toProviderFailure(sdk, error, options);
  if (failure !== error || options.signal?.aborted || error instanceof ApplicationFailure) return failure;
  // The SDKs' stream helpers rethrow anything that is not their own error (a SyntaxError from a
  // garbled event, fetch's "terminated") wrapped in their base error, with the original as cause.
  if (error instanceof sdk.Error && !(error instanceof sdk.APIError) && error.cause instanceof Error) return toStreamFailure(sdk, error.cause, options);
  if (error instanceof sdk.APIError && error.status === undefined) {
    const label = sdk.errorType(error) ?? 'error';
    const detail = sdk.apiMessage(error) ?? error.message;
    return retryable(`${provider}: the API reported an error mid-stream (${label}) — ${detail}`, error);
  }
  if (error instanceof sdk.Error) {
    return unexpectedResponse(provider, `the stream ended before the reply was complete (${error.message})`, error);
  }
  if (error instanceof Error) return retryable(`${provider}: stream interrupted — ${connectionCause(error)}`, error);
  return error;
}

/**
 * The failure for a 200 response whose body lacks what the API promises (e.g. no `choices`):
 * typically a misbehaving proxy or compatible endpoint, so it is retryable.
 */
export function unexpectedResponse(provider: ProviderName, what: string, cause?: Error): ApplicationFailure {
  return retryable(`${provider}: unexpected response — ${what}`, cause);
}

function fromHttpError<ApiError extends SdkApiError>(sdk: ProviderSdk<ApiError>, error: ApiError, status: number, retry: ActivityRetryInfo | undefined): ApplicationFailure {
  const message = describeHttpError(sdk, error, status);
  if (isRetryableStatus(status)) return retryable(message, error, nextRetryDelayFor(retryDelayMs(error.headers), retry));
  const type =
    status === 401 || status === 403 ? ProviderErrorType.authentication
    : status === 404 ? ProviderErrorType.notFound
    : ProviderErrorType.badRequest;
  return ApplicationFailure.create({ message, type, nonRetryable: true, cause: error });
}

function isRetryableStatus(status: number): boolean {
  // 409: OpenAI documents conflicts as transient; 499: a proxy gave up on us, not a bad request.
  return status === 408 || status === 409 || status === 429 || status === 499 || status >= 500;
}

/**
 * `openai: 401 Unauthorized — Incorrect API key provided` /
 * `anthropic: 404 not_found_error — model: claude-nope`.
 * Anthropic's error `type` names the failure precisely; OpenAI's (`invalid_request_error` for
 * nearly everything) does not, so OpenAI gets the HTTP reason phrase instead.
 */
function describeHttpError<ApiError extends SdkApiError>(sdk: ProviderSdk<ApiError>, error: ApiError, status: number): string {
  const label = sdk.errorType(error) ?? STATUS_CODES[status] ?? 'error';
  const detail = sdk.apiMessage(error);
  return detail ? `${sdk.name}: ${status} ${label} — ${detail}` : `${sdk.name}: ${status} ${label}`;
}

function retryable(message: string, cause?: Error, nextRetryDelay?: number): ApplicationFailure {
  return ApplicationFailure.create({
    message,
    type: ProviderErrorType.retryable,
    nonRetryable: false,
    cause,
    ...(nextRetryDelay === undefined ? {} : { nextRetryDelay }),
  });
}

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

function isUserAbort(sdk: ProviderSdk, error: unknown): boolean {
  return error instanceof sdk.UserAbortError || (error instanceof Error && error.name === 'AbortError');
}

/** fetch reports "fetch failed"; the useful part (ECONNRESET, ECONNREFUSED, …) is in the cause chain. */
function connectionCause(error: Error): string {
  const parts: string[] = [];
  for (let current: unknown = error; current instanceof Error && parts.length < 4; current = current.cause) {
    const code = (current as { code?: unknown }).code;
    const message = current.message.replace(/\.$/, '');
    parts.push(typeof code === 'string' ? `${message} (${code})` : message);
  }
  return parts.join(': ');
}

/**
 * One model request, streamed unless the turn said `model.stream: false`, with its failure
 * classified for Temporal the same way by every provider: {@link toStreamFailure} for a streamed
 * call (it can also fail after the response began), {@link toProviderFailure} for a plain one.
 */
export async function requestStep<Result, ApiError extends SdkApiError>(
  sdk: ProviderSdk<ApiError>,
  stream: boolean,
  request: { plain: () => Promise<Result>; streamed: () => Promise<Result> },
  options: Pick<ProviderCallOptions, 'signal' | 'retry'>,
): Promise<Result> {
  try {
    return stream ? await request.streamed() : await request.plain();
  } catch (error) {
    throw stream ? toStreamFailure(sdk, error, options) : toProviderFailure(sdk, error, options);
  }
}
