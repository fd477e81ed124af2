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
  // Names the failure precisely (`overloaded_error`, `not_found_error`); on Bedrock, whose errors
  // are its own (`{"message": …}`, the type in `x-amzn-ErrorType`), the exception's name.
  errorType: (error) => error.type ?? error.headers?.get('x-amzn-errortype')?.split(':')[0] ?? undefined,
  apiMessage: (error) => error.apiMessage ?? bedrockMessage(error.error) ?? undefined,
};

/** Bedrock's error body, `{"message": "…"}`. */
function bedrockMessage(body: unknown): string | undefined {
  const message = (body as { message?: unknown } | undefined)?.message;
  return typeof message === 'string' ? message : undefined;
}
