/**
 * Claude on Google Vertex AI (provider `anthropic-vertex`): Anthropic's Messages API step
 * (anthropic.ts) through `@anthropic-ai/vertex-sdk`'s client, which moves the model into the URL
 * (`/projects/{p}/locations/{r}/publishers/anthropic/models/{m}:rawPredict`, `:streamRawPredict`)
 * and sends an OAuth bearer token from Application Default Credentials. Thinking, prompt caching,
 * typed output, streaming, cut-offs and retries are the `anthropic` provider's.
 */
import { AnthropicVertex } from '@anthropic-ai/vertex-sdk';
import type { ModelStepInput, ModelStepResult } from '../../workflows/types/index.js';
import { callAnthropic } from './anthropic.js';
import type { AnthropicMessagesClient } from './anthropic-stream.js';
import { cloudClient, cloudModelId, cloudSettingsFor, type CloudSettings } from './clouds.js';
import type { ProviderCallOptions } from './errors.js';

/** The body's `anthropic_version` Vertex AI requires. */
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

const clients = new Map<string, AnthropicVertex>();

/** One model step on the Vertex AI settings the turn names. */
export async function callAnthropicVertex(clouds: CloudSettings, input: ModelStepInput, options: ProviderCallOptions = {}): Promise<ModelStepResult> {
  const { name, settings } = cloudSettingsFor(clouds, { ...input.model, provider: 'anthropic-vertex' });
  const key = JSON.stringify([name, options.timeoutMs]);
  let client = clients.get(key);
  if (!client) {
    client = cloudClient('anthropic-vertex', name, () => new AnthropicVertex({
      ...(settings.region !== undefined ? { region: settings.region } : {}),
      ...(settings.projectId !== undefined ? { projectId: settings.projectId } : {}),
      ...(settings.baseURL !== undefined ? { baseURL: settings.baseURL } : {}),
      ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}),
      maxRetries: 0,
      // The client copies this into the body's `anthropic_version`.
      defaultHeaders: { 'anthropic-version': VERTEX_ANTHROPIC_VERSION },
    }));
    // The client starts finding its credentials as it is built, and a failure surfaces at the
    // first request (a retryable connection error). Until then nothing awaits it: handled here so
    // that it cannot end the worker as an unhandled rejection, and the client is forgotten so the
    // next attempt looks for credentials again.
    (client as unknown as { _authClientPromise?: Promise<unknown> })._authClientPromise?.catch(() => clients.delete(key));
    clients.set(key, client);
  }
  const model = { ...input.model, model: cloudModelId(settings.models, input.model.model) };
  const searches = input.model.providerTools?.some((tool) => tool.type === 'web_search') ?? false;
  return callAnthropic({ ...input, model }, options, searches ? withHeaders(client, { 'anthropic-beta': VERTEX_WEB_SEARCH_BETA }) : client);
}

/**
 * Vertex AI runs Claude's web search only for a request with this beta header
 * (https://cloud.google.com/vertex-ai/generative-ai/docs/partner-models/claude/web-search), which
 * Anthropic's own API no longer needs.
 */
export const VERTEX_WEB_SEARCH_BETA = 'web-search-2025-03-05';

/** The client, each request of which also sends `headers`. */
function withHeaders(client: AnthropicVertex, headers: Record<string, string>): AnthropicMessagesClient {
  return {
    messages: {
      create: ((params: never, options?: { headers?: Record<string, string> }) => client.messages.create(params, { ...options, headers: { ...options?.headers, ...headers } })) as AnthropicMessagesClient['messages']['create'],
      stream: ((params: never, options?: { headers?: Record<string, string> }) => client.messages.stream(params, { ...options, headers: { ...options?.headers, ...headers } })) as AnthropicMessagesClient['messages']['stream'],
    },
  };
}
