/**
 * Claude on Amazon Bedrock (provider `anthropic-bedrock`): Anthropic's Messages API step
 * (anthropic.ts) through `@anthropic-ai/bedrock-sdk`'s client, which moves the model into the URL
 * (`/model/{id}/invoke`, `/invoke-with-response-stream`), signs each request with SigV4 from the
 * AWS credential chain, and decodes Bedrock's event stream. Thinking, prompt caching, typed output,
 * streaming, cut-offs and retries are the `anthropic` provider's.
 */
import { AnthropicBedrock } from '@anthropic-ai/bedrock-sdk';
import type { ModelStepInput, ModelStepResult } from '../../workflows/types/index.js';
import { callAnthropic } from './anthropic.js';
import { cloudModelId, cloudSettingsFor, type CloudSettings } from './clouds.js';
import type { ProviderCallOptions } from './errors.js';

/** The body's `anthropic_version` Bedrock requires (its API version, not the first-party one). */
export const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';

const clients = new Map<string, AnthropicBedrock>();

/** One model step on the Bedrock settings the turn names. */
export async function callAnthropicBedrock(clouds: CloudSettings, input: ModelStepInput, options: ProviderCallOptions = {}): Promise<ModelStepResult> {
  const { name, settings } = cloudSettingsFor(clouds, { ...input.model, provider: 'anthropic-bedrock' });
  const key = JSON.stringify([name, options.timeoutMs]);
  let client = clients.get(key);
  if (!client) {
    client = new AnthropicBedrock({
      ...(settings.region !== undefined ? { awsRegion: settings.region } : {}),
      ...(settings.baseURL !== undefined ? { baseURL: settings.baseURL } : {}),
      ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}),
      maxRetries: 0,
      // The client moves this header into the body's `anthropic_version` (and sends no header).
      defaultHeaders: { 'anthropic-version': BEDROCK_ANTHROPIC_VERSION },
    });
    clients.set(key, client);
  }
  return callAnthropic({ ...input, model: { ...input.model, model: cloudModelId(settings.models, input.model.model) } }, options, client);
}
