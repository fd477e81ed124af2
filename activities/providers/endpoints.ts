/**
 * Named OpenAI-compatible endpoints of a worker (`endpoints` on `createWorker` /
 * `TurnpikePlugin`): a vLLM, llama.cpp, Ollama or LiteLLM server that speaks OpenAI's wire
 * protocol, reached through turnpike's own `openai` (or `openai-responses`) provider. A turn names
 * one (`model: { provider: 'openai', endpoint: 'vllm', model }`); its base URL and the name of the
 * environment variable holding its key stay in the worker, so neither enters a turn's history.
 */
import { ApplicationFailure } from '@temporalio/common';
import { ProviderErrorType } from './error-types.js';
import type { ProviderCallOptions } from './errors.js';
import type { ModelSettings } from '../../workflows/types/index.js';

export interface OpenAIEndpoint {
  /** The server's OpenAI base URL, e.g. `http://vllm:8000/v1` (the SDK appends `/chat/completions`). */
  baseURL: string;
  /**
   * The environment variable that holds the endpoint's key, read at every call (a rotated key
   * takes effect without a restart). Without one the server gets the placeholder key `none`,
   * for a local server that checks no key.
   */
  apiKeyEnv?: string;
}

export type OpenAIEndpoints = Record<string, OpenAIEndpoint>;

/** Checks the worker's `endpoints` when it is created; throws a TypeError naming the bad entry. */
export function checkedEndpoints(endpoints: OpenAIEndpoints, where: string): OpenAIEndpoints {
  if (typeof endpoints !== 'object' || endpoints === null) throw new TypeError(`${where}: endpoints must be an object of { baseURL, apiKeyEnv? } by name`);
  for (const [name, endpoint] of Object.entries(endpoints)) {
    let url: URL | undefined;
    try {
      url = new URL(endpoint?.baseURL);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw new TypeError(`${where}: endpoints["${name}"].baseURL must be an http(s) URL`);
    if (endpoint.apiKeyEnv !== undefined && (typeof endpoint.apiKeyEnv !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(endpoint.apiKeyEnv))) {
      throw new TypeError(`${where}: endpoints["${name}"].apiKeyEnv must be the name of an environment variable`);
    }
  }
  return endpoints;
}

/**
 * The key and base URL of the endpoint a turn names, or none when it names none.
 *
 * @throws non-retryable `InvalidModelSettings` for a name the worker does not have, and
 *   `ProviderAuthenticationError` naming the variable when the endpoint's key is not set.
 */
export function endpointCallOptions(endpoints: OpenAIEndpoints, model: ModelSettings): Pick<ProviderCallOptions, 'apiKey' | 'baseURL'> {
  if (model.endpoint === undefined) return {};
  const endpoint = Object.hasOwn(endpoints, model.endpoint) ? endpoints[model.endpoint] : undefined;
  if (!endpoint) {
    const known = Object.keys(endpoints);
    throw ApplicationFailure.nonRetryable(
      `${model.provider}: this worker has no endpoint named "${model.endpoint}"; ${known.length > 0 ? `it has ${known.join(', ')}` : 'declare endpoints with createWorker({ endpoints }) or new TurnpikePlugin({ endpoints })'}`,
      'InvalidModelSettings',
    );
  }
  if (endpoint.apiKeyEnv === undefined) return { baseURL: endpoint.baseURL, apiKey: 'none' };
  const apiKey = process.env[endpoint.apiKeyEnv];
  if (!apiKey) {
    throw ApplicationFailure.nonRetryable(
      `${model.provider}: no API key for endpoint "${model.endpoint}" — set ${endpoint.apiKeyEnv} in the worker's environment`,
      ProviderErrorType.authentication,
    );
  }
  return { baseURL: endpoint.baseURL, apiKey };
}
