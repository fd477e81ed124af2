/**
 * The OpenAI SDK's errors, as errors.ts classifies them. Both OpenAI providers (Chat Completions
 * and Responses) pass this to `requestStep`; apart from errors.ts so that it loads no SDK itself.
 */
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError, OpenAIError } from 'openai';
import type { ProviderSdk } from './errors.js';

export const openAISdk: ProviderSdk<APIError> = {
  name: 'openai',
  Error: OpenAIError,
  APIError,
  ConnectionError: APIConnectionError,
  TimeoutError: APIConnectionTimeoutError,
  UserAbortError: APIUserAbortError,
  // `invalid_request_error` for nearly everything: the HTTP reason phrase says more.
  errorType: () => undefined,
  apiMessage(error) {
    // The SDK keeps the body's `error` as `error.error`.
    const body = error.error as { message?: unknown } | undefined;
    return typeof body?.message === 'string' ? body.message : undefined;
  },
};
