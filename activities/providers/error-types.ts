/**
 * `ApplicationFailure.type` values the provider activities throw, apart from `errors.ts` so that
 * `turnpike/worker` can export them without loading the provider SDKs (see activities/model.ts).
 */

/** `ApplicationFailure.type` values the provider activities throw; usable in `nonRetryableErrorTypes`. */
export const ProviderErrorType = {
  retryable: 'ProviderRetryableError',
  authentication: 'ProviderAuthenticationError',
  badRequest: 'ProviderBadRequestError',
  notFound: 'ProviderNotFoundError',
} as const;

/** The providers that talk HTTP; used in error messages and env-var names. */
export type ProviderName = 'openai' | 'anthropic';
