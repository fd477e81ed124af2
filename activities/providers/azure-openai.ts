/**
 * GPT on Azure OpenAI (provider `azure-openai`): the Chat Completions step (openai.ts) through
 * `openai`'s `AzureOpenAI` client, which sends each request to the deployment
 * (`/openai/deployments/{deployment}/chat/completions?api-version=…`) with an `api-key` header, or
 * a bearer token from the worker's Entra ID token provider. Reasoning effort, typed output,
 * streaming, cut-offs and retries are the `openai` provider's.
 */
import { AzureOpenAI } from 'openai';
import { ApplicationFailure } from '@temporalio/common';
import type { ModelStepInput, ModelStepResult } from '../../workflows/types/index.js';
import { callOpenAI } from './openai.js';
import { cloudClient, cloudModelId, cloudSettingsFor, type CloudSettings } from './clouds.js';
import { ProviderErrorType, type ProviderCallOptions } from './errors.js';

/** The environment variable of the key when the settings name none. */
export const AZURE_OPENAI_KEY_ENV = 'AZURE_OPENAI_API_KEY';

const clients = new Map<string, AzureOpenAI>();

/** One model step on the Azure OpenAI settings the turn names; the turn's model is mapped to its deployment. */
export async function callAzureOpenAI(clouds: CloudSettings, input: ModelStepInput, options: ProviderCallOptions = {}): Promise<ModelStepResult> {
  const { name, settings } = cloudSettingsFor(clouds, { ...input.model, provider: 'azure-openai' });
  const { tokenProvider } = settings;
  // The key is read at every call, so a rotated key takes effect without a restart.
  const keyEnv = settings.apiKeyEnv ?? AZURE_OPENAI_KEY_ENV;
  const apiKey = tokenProvider ? undefined : process.env[keyEnv];
  if (!tokenProvider && !apiKey) {
    throw ApplicationFailure.nonRetryable(
      `azure-openai: no API key for the settings "${name}" — set ${keyEnv} in the worker's environment, or give the settings an Entra ID tokenProvider`,
      ProviderErrorType.authentication,
    );
  }
  const endpoint = settings.endpoint ?? process.env.AZURE_OPENAI_ENDPOINT;
  if (!endpoint) {
    throw ApplicationFailure.nonRetryable(`azure-openai: the settings "${name}" have no endpoint — give them one, or set AZURE_OPENAI_ENDPOINT in the worker's environment`, 'InvalidModelSettings');
  }
  // The deployment is the client's, so the body keeps the turn's model name: the request is shaped
  // for that model (a reasoning model takes max_completion_tokens), whatever the deployment is called.
  const deployment = cloudModelId(settings.deployments, input.model.model);
  const key = JSON.stringify([name, deployment, apiKey, options.timeoutMs]);
  let client = clients.get(key);
  if (!client) {
    client = cloudClient('azure-openai', name, () => new AzureOpenAI({
      // Given as a base URL, not `endpoint`: the client would otherwise take OPENAI_BASE_URL, the `openai` provider's.
      baseURL: `${endpoint.replace(/\/+$/, '')}/openai`,
      deployment,
      ...(settings.apiVersion !== undefined ? { apiVersion: settings.apiVersion } : {}),
      ...(tokenProvider ? { azureADTokenProvider: tokenProvider } : { apiKey }),
      ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}),
      maxRetries: 0,
    }));
    // A rotated key makes a new client; the old one is dropped.
    for (const old of clients.keys()) {
      const [oldName, oldDeployment] = JSON.parse(old) as [string, string];
      if (oldName === name && oldDeployment === deployment) clients.delete(old);
    }
    clients.set(key, client);
  }
  return callOpenAI(input, options, client);
}
