/**
 * GPT on Azure OpenAI, through `openai`'s `AzureOpenAI` client with an `api-key` header, or a
 * bearer token from the worker's Entra ID token provider:
 * - provider `azure-openai`: the Chat Completions step (openai.ts), sent to the deployment
 *   (`/openai/deployments/{deployment}/chat/completions?api-version=…`);
 * - provider `azure-openai-responses`: the Responses step (openai-responses.ts), sent to
 *   `/openai/responses?api-version=…` with the deployment as the body's `model`, as Azure's
 *   Responses API takes it; reasoning items, hosted tools and MCP approvals as on OpenAI.
 * Reasoning effort, typed output, streaming, cut-offs and retries are the `openai` providers'.
 */
import { AzureOpenAI } from 'openai';
import { ApplicationFailure } from '@temporalio/common';
import type { ModelStepInput, ModelStepResult } from '../../workflows/types/index.js';
import { callOpenAI } from './openai.js';
import { callOpenAIResponses } from './openai-responses.js';
import type { RemoteMcpServers } from './remote-mcp-servers.js';
import { cloudClient, cloudModelId, cloudSettingsFor, type CloudSettings } from './clouds.js';
import { ProviderErrorType, type ProviderCallOptions } from './errors.js';
import { rememberIssuedToken } from './secret-redaction.js';

/** The environment variable of the key when the settings name none. */
export const AZURE_OPENAI_KEY_ENV = 'AZURE_OPENAI_API_KEY';

const clients = new Map<string, AzureOpenAI>();

/** One Chat Completions step on the Azure OpenAI settings the turn names; the turn's model is mapped to its deployment. */
export async function callAzureOpenAI(clouds: CloudSettings, input: ModelStepInput, options: ProviderCallOptions = {}): Promise<ModelStepResult> {
  return callOpenAI(input, options, azureClient(clouds, input, options).client);
}

/** One Responses step on the Azure OpenAI settings the turn names: the deployment is the request's `model`. */
export async function callAzureOpenAIResponses(
  clouds: CloudSettings,
  input: ModelStepInput,
  options: ProviderCallOptions = {},
  remoteMcpServers: RemoteMcpServers = {},
): Promise<ModelStepResult> {
  const { client, deployment } = azureClient(clouds, input, options);
  return callOpenAIResponses(input, options, remoteMcpServers, client, deployment);
}

/** The client of the settings the turn names, and the deployment its model maps to. */
function azureClient(clouds: CloudSettings, input: ModelStepInput, options: ProviderCallOptions): { client: AzureOpenAI; deployment: string } {
  const provider = input.model.provider === 'azure-openai-responses' ? 'azure-openai-responses' : 'azure-openai';
  const { name, settings } = cloudSettingsFor(clouds, { ...input.model, provider });
  const { tokenProvider } = settings;
  // The key is read at every call, so a rotated key takes effect without a restart.
  const keyEnv = settings.apiKeyEnv ?? AZURE_OPENAI_KEY_ENV;
  const apiKey = tokenProvider ? undefined : process.env[keyEnv];
  if (!tokenProvider && !apiKey) {
    throw ApplicationFailure.nonRetryable(
      `${provider}: no API key for the settings "${name}" — set ${keyEnv} in the worker's environment, or give the settings an Entra ID tokenProvider`,
      ProviderErrorType.authentication,
    );
  }
  const endpoint = settings.endpoint ?? process.env.AZURE_OPENAI_ENDPOINT;
  if (!endpoint) {
    throw ApplicationFailure.nonRetryable(`${provider}: the settings "${name}" have no endpoint — give them one, or set AZURE_OPENAI_ENDPOINT in the worker's environment`, 'InvalidModelSettings');
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
      // With a token provider, `apiKey: null`: left undefined, the client reads AZURE_OPENAI_API_KEY
      // (another settings' key, on a worker that has both) and refuses the pair.
      // Its tokens are remembered, so an error that echoes one is redacted (secret-redaction.ts).
      ...(tokenProvider ? { azureADTokenProvider: async () => rememberIssuedToken(await tokenProvider()), apiKey: null as unknown as undefined } : { apiKey }),
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
  return { client, deployment };
}
