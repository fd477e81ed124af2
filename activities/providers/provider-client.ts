/**
 * What every provider call is given and builds its SDK client from: the call's options, the
 * credentials and base URL resolved at call time, the client reused across calls, and the text a
 * tool result is sent as.
 */
import { ApplicationFailure, type RetryPolicy } from '@temporalio/common';
import { ProviderErrorType, type ProviderName } from './error-types.js';
import type { ModelStreamListener } from './stream-delta.js';

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
   * provider's `retry-after` is fitted to them; see `nextRetryDelayFor` (retry-delay.ts).
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
