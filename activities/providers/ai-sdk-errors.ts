/**
 * What an AI SDK language model throws, as errors.ts classifies the SDKs' errors: retryable or
 * not, typed with {@link ProviderErrorType}, a `retry-after` fitted to the activity's retry policy.
 *
 * The AI SDK's errors are recognised by their markers (`Symbol.for('vercel.ai.error.AI_…')`, what
 * their own `isInstance` checks), so this module loads no AI SDK package: the application's
 * provider package brings its own copy of `@ai-sdk/provider`, whichever version that is.
 */
import { STATUS_CODES } from 'node:http';
import { ApplicationFailure } from '@temporalio/common';
import { ProviderErrorType } from './error-types.js';
import { connectionCause, nextRetryDelayFor, retryDelayMs, type ProviderCallOptions } from './errors.js';

/** The fields of the spec's `APICallError` this module reads. */
interface ApiCallError extends Error {
  statusCode?: number;
  responseHeaders?: Record<string, string>;
  responseBody?: string;
  isRetryable: boolean;
}

function hasMarker(error: unknown, name: string): boolean {
  const marker = Symbol.for(`vercel.ai.error.${name}`);
  return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[marker] === true;
}

const isApiCallError = (error: unknown): error is ApiCallError => hasMarker(error, 'AI_APICallError');

/**
 * Turns what a model call threw into what the activity throws. `label` names the model in
 * messages: `ai-sdk gemini (google.generative-ai)`.
 *
 * - Cancellation: the activity's abort reason, so the worker reports the activity cancelled.
 * - `APICallError` with a status: retryable when the AI SDK says so (`isRetryable`: 408, 409,
 *   429, 5xx), with the delay of `retry-after-ms` / `retry-after` or Gemini's `RetryInfo`;
 *   otherwise 401/403 `ProviderAuthenticationError`, 404 `ProviderNotFoundError`, else
 *   `ProviderBadRequestError`, all non-retryable.
 * - `APICallError` without a status (fetch failed: reset, refused): retryable.
 * - A missing key (`LoadAPIKeyError`, `LoadSettingError`): non-retryable authentication error.
 * - A body the provider could not parse (`JSONParseError`, `TypeValidationError`,
 *   `EmptyResponseBodyError`): retryable, as a proxy cutting a response short is transient.
 * - A prompt the model cannot take (`InvalidPromptError`, `UnsupportedFunctionalityError`): bad request.
 * - A stream that broke part-way (fetch's "terminated"): retryable. Anything else passes through.
 */
export function toAiSdkFailure(label: string, error: unknown, options: Pick<ProviderCallOptions, 'signal' | 'retry'> = {}): unknown {
  if (options.signal?.aborted) return options.signal.reason ?? error;
  if (error instanceof ApplicationFailure) return error;
  const cause = error instanceof Error ? error : undefined;
  if (isApiCallError(error)) {
    const status = error.statusCode;
    if (status === undefined) return failure(`${label}: connection error — ${connectionCause(error)}`, ProviderErrorType.retryable, cause);
    const message = `${label}: ${status} ${STATUS_CODES[status] ?? 'error'} — ${apiMessage(error)}`;
    if (error.isRetryable) {
      const requested = retryDelayMs(new Headers(error.responseHeaders ?? {})) ?? googleRetryDelayMs(error.responseBody);
      return failure(message, ProviderErrorType.retryable, cause, nextRetryDelayFor(requested, options.retry));
    }
    const type =
      status === 401 || status === 403 ? ProviderErrorType.authentication
      : status === 404 ? ProviderErrorType.notFound
      : ProviderErrorType.badRequest;
    return failure(message, type, cause);
  }
  if (hasMarker(error, 'AI_LoadAPIKeyError') || hasMarker(error, 'AI_LoadSettingError')) {
    return failure(`${label}: ${cause?.message ?? String(error)}`, ProviderErrorType.authentication, cause);
  }
  if (hasMarker(error, 'AI_JSONParseError') || hasMarker(error, 'AI_TypeValidationError') || hasMarker(error, 'AI_EmptyResponseBodyError')) {
    return failure(`${label}: unexpected response — ${cause?.message ?? String(error)}`, ProviderErrorType.retryable, cause);
  }
  if (hasMarker(error, 'AI_InvalidPromptError') || hasMarker(error, 'AI_UnsupportedFunctionalityError')) {
    return failure(`${label}: ${cause?.message ?? String(error)}`, ProviderErrorType.badRequest, cause);
  }
  if (cause && (cause.name === 'TypeError' || cause.name === 'AbortError') && /terminated|network|socket|fetch failed/i.test(connectionCause(cause))) {
    return failure(`${label}: stream interrupted — ${connectionCause(cause)}`, ProviderErrorType.retryable, cause);
  }
  return error;
}

function failure(message: string, type: string, cause: Error | undefined, nextRetryDelay?: number): ApplicationFailure {
  return ApplicationFailure.create({
    message,
    type,
    nonRetryable: type !== ProviderErrorType.retryable,
    cause,
    ...(nextRetryDelay === undefined ? {} : { nextRetryDelay }),
  });
}

/** The API's own message from the body (`{ error: { message } }`, as Gemini, OpenAI and Mistral send), else the AI SDK's. */
function apiMessage(error: ApiCallError): string {
  try {
    const body = JSON.parse(error.responseBody ?? '') as { error?: { message?: unknown } | string; message?: unknown };
    const inner = typeof body.error === 'object' ? body.error?.message : body.error;
    if (typeof inner === 'string' && inner) return inner;
    if (typeof body.message === 'string' && body.message) return body.message;
  } catch {
    // Not JSON: the AI SDK's message says what it could.
  }
  return error.message;
}

/**
 * Gemini sends no `retry-after` header on a 429: the delay is in the body's
 * `google.rpc.RetryInfo` detail, as `"retryDelay": "34.4s"`.
 */
function googleRetryDelayMs(body: string | undefined): number | undefined {
  try {
    const details = (JSON.parse(body ?? '') as { error?: { details?: Array<{ '@type'?: string; retryDelay?: unknown }> } }).error?.details ?? [];
    const delay = details.find((detail) => detail['@type']?.endsWith('google.rpc.RetryInfo'))?.retryDelay;
    const seconds = typeof delay === 'string' ? /^(\d+(?:\.\d+)?)s$/.exec(delay)?.[1] : undefined;
    return seconds === undefined ? undefined : Math.ceil(Number(seconds) * 1000);
  } catch {
    return undefined;
  }
}
