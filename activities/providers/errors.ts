/**
 * The translation of SDK errors into Temporal failures, which every provider activity shares.
 *
 * Retries belong to Temporal, not to the SDKs (clients are built with `maxRetries: 0`), so
 * every error an SDK raises is turned into an `ApplicationFailure` whose `nonRetryable` flag
 * and `type` tell the activity retry policy what to do, and whose `nextRetryDelay` carries a
 * provider's `retry-after` (fitted to the activity's own retry policy, see `nextRetryDelayFor`
 * in retry-delay.ts) so a rate-limited model is not hammered. The call options, credential
 * look-up and tool-result text are in provider-client.ts, and exported from here too.
 */
import { STATUS_CODES } from 'node:http';
import { ApplicationFailure } from '@temporalio/common';
import { ProviderErrorType, type ProviderName } from './error-types.js';
import type { ActivityRetryInfo, ProviderCallOptions } from './provider-client.js';
import { nextRetryDelayFor, retryDelayMs } from './retry-delay.js';

export { ProviderErrorType, type ProviderName } from './error-types.js';
export { cachedClient, resolveClientSettings, toolResultText, type ActivityRetryInfo, type ProviderCallOptions, type ProviderClientSettings } from './provider-client.js';
export { nextRetryDelayFor, policyBackoffMs, retryDelayMs } from './retry-delay.js';

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

function isUserAbort(sdk: ProviderSdk, error: unknown): boolean {
  return error instanceof sdk.UserAbortError || (error instanceof Error && error.name === 'AbortError');
}

/** fetch reports "fetch failed"; the useful part (ECONNRESET, ECONNREFUSED, …) is in the cause chain. */
export function connectionCause(error: Error): string {
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
