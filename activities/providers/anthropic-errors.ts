/**
 * The Anthropic SDK's errors, as errors.ts classifies them; apart from errors.ts so that it loads
 * no SDK itself.
 */
import { AnthropicError, APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from '@anthropic-ai/sdk';
import type { ProviderSdk } from './errors.js';

export const anthropicSdk: ProviderSdk<APIError> = {
  name: 'anthropic',
  Error: AnthropicError,
  APIError,
  ConnectionError: APIConnectionError,
  TimeoutError: APIConnectionTimeoutError,
  UserAbortError: APIUserAbortError,
  // Names the failure precisely (`overloaded_error`, `not_found_error`).
  errorType: (error) => error.type ?? undefined,
  apiMessage: (error) => error.apiMessage ?? undefined,
};
