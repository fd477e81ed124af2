/**
 * A worker's settings for Claude and GPT in a cloud account (`clouds` on `createWorker` /
 * `TurnpikePlugin`): Amazon Bedrock, Google Vertex AI and Azure OpenAI, each by name. A turn names
 * the settings it runs on (`model: { provider: 'anthropic-bedrock', endpoint: 'eu', model }`);
 * regions, projects, deployments, API versions and credentials stay in the worker and its
 * environment, so none of them enters a turn's history.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { ModelSettings } from '../../workflows/types/index.js';

/** Model ids by the name a turn uses: `{ 'claude-sonnet-4-5': 'eu.anthropic.claude-sonnet-4-5-20250929-v1:0' }`. */
export type CloudModelIds = Record<string, string>;

/**
 * Claude on Amazon Bedrock (`@anthropic-ai/bedrock-sdk`). Credentials come from the AWS SDK's
 * default chain, read at every request: `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY` /
 * `AWS_SESSION_TOKEN`, a profile, SSO, web identity, the container or instance role; or a Bedrock
 * API key in `AWS_BEARER_TOKEN_BEDROCK`.
 */
export interface BedrockSettings {
  /** Default `AWS_REGION`, then `us-east-1`. */
  region?: string;
  /** A VPC endpoint or proxy; default `ANTHROPIC_BEDROCK_BASE_URL`, then the region's `bedrock-runtime` URL. */
  baseURL?: string;
  /** Bedrock model ids or inference profiles by the turn's model name; a name not listed is sent as it is. */
  models?: CloudModelIds;
}

/**
 * Claude on Google Vertex AI (`@anthropic-ai/vertex-sdk`). Credentials are Application Default
 * Credentials (google-auth-library): `GOOGLE_APPLICATION_CREDENTIALS` (a service account or
 * workload identity federation file), gcloud's, or the metadata server's.
 */
export interface VertexSettings {
  /** `us-east5`, `europe-west1`, `global`, …; default `CLOUD_ML_REGION`. */
  region?: string;
  /** Default `ANTHROPIC_VERTEX_PROJECT_ID`, then the credentials' project. */
  projectId?: string;
  /** Default `ANTHROPIC_VERTEX_BASE_URL`, then the region's `aiplatform` URL. */
  baseURL?: string;
  /** Vertex model ids by the turn's model name (`{ 'claude-sonnet-4-5': 'claude-sonnet-4-5@20250929' }`); a name not listed is sent as it is. */
  models?: CloudModelIds;
}

/**
 * GPT on Azure OpenAI (`openai`'s `AzureOpenAI`, Chat Completions). The key is read at every
 * call from `apiKeyEnv` (default `AZURE_OPENAI_API_KEY`) and sent as `api-key`, unless the worker
 * gives an Entra ID `tokenProvider` (e.g. `getBearerTokenProvider(new DefaultAzureCredential(),
 * 'https://cognitiveservices.azure.com/.default')` from `@azure/identity`), whose tokens go as
 * `Authorization: Bearer`.
 */
export interface AzureOpenAISettings {
  /** The resource, `https://my-resource.openai.azure.com`; default `AZURE_OPENAI_ENDPOINT`. */
  endpoint?: string;
  /** The `api-version` query parameter; default `OPENAI_API_VERSION`. */
  apiVersion?: string;
  /** The environment variable holding the key; default `AZURE_OPENAI_API_KEY`. Not with `tokenProvider`. */
  apiKeyEnv?: string;
  /** Microsoft Entra ID: returns a bearer token for each request. */
  tokenProvider?: () => Promise<string>;
  /** Deployment names by the turn's model name; a name not listed is taken as the deployment's name. */
  deployments?: CloudModelIds;
}

/** Each cloud's settings by name. */
export interface CloudSettings {
  /** For turns of provider `anthropic-bedrock`. */
  bedrock?: Record<string, BedrockSettings>;
  /** For turns of provider `anthropic-vertex`. */
  vertex?: Record<string, VertexSettings>;
  /** For turns of provider `azure-openai`. */
  azure?: Record<string, AzureOpenAISettings>;
}

const CLOUD_OF = { 'anthropic-bedrock': 'bedrock', 'anthropic-vertex': 'vertex', 'azure-openai': 'azure', 'azure-openai-responses': 'azure' } as const;
type CloudProvider = keyof typeof CLOUD_OF;

/** Checks the worker's `clouds` when it is created; throws a TypeError naming the bad entry. */
export function checkedClouds(clouds: CloudSettings, where: string): CloudSettings {
  const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
  if (!isObject(clouds)) throw new TypeError(`${where}: clouds must be an object such as { bedrock: { eu: { region: 'eu-central-1' } } }`);
  for (const [cloud, byName] of Object.entries(clouds)) {
    if (!['bedrock', 'vertex', 'azure'].includes(cloud)) throw new TypeError(`${where}: clouds.${cloud} is not a cloud turnpike knows; use bedrock, vertex or azure`);
    if (!isObject(byName)) throw new TypeError(`${where}: clouds.${cloud} must be an object of settings by name`);
    for (const [name, settings] of Object.entries(byName)) {
      const at = `${where}: clouds.${cloud}["${name}"]`;
      if (!isObject(settings)) throw new TypeError(`${at} must be an object`);
      for (const field of ['region', 'projectId', 'apiVersion']) {
        if (settings[field] !== undefined && (typeof settings[field] !== 'string' || settings[field] === '')) throw new TypeError(`${at}.${field} must be a non-empty string`);
      }
      for (const field of ['baseURL', 'endpoint']) {
        if (settings[field] !== undefined && !isHttpUrl(settings[field])) throw new TypeError(`${at}.${field} must be an http(s) URL`);
      }
      for (const field of ['models', 'deployments']) {
        const ids = settings[field];
        if (ids !== undefined && (!isObject(ids) || !Object.values(ids).every((id) => typeof id === 'string' && id !== ''))) {
          throw new TypeError(`${at}.${field} must be an object of non-empty strings by model name`);
        }
      }
      if (settings.apiKeyEnv !== undefined && (typeof settings.apiKeyEnv !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(settings.apiKeyEnv))) {
        throw new TypeError(`${at}.apiKeyEnv must be the name of an environment variable`);
      }
      if (settings.tokenProvider !== undefined && typeof settings.tokenProvider !== 'function') throw new TypeError(`${at}.tokenProvider must be a function returning a token`);
      if (settings.tokenProvider !== undefined && settings.apiKeyEnv !== undefined) throw new TypeError(`${at}: apiKeyEnv and tokenProvider exclude each other`);
    }
  }
  return clouds;
}

function isHttpUrl(value: unknown): boolean {
  try {
    const url = new URL(value as string);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/** The settings a turn on a cloud runs on, with their name. */
export interface ChosenCloudSettings<Settings> {
  name: string;
  settings: Settings;
}

/**
 * The settings `model.endpoint` names for the turn's cloud, or the worker's only ones when it
 * names none.
 *
 * @throws non-retryable `InvalidModelSettings` when the worker has no settings for the cloud, none
 *   of that name, or several and the turn named none.
 */
export function cloudSettingsFor<Provider extends CloudProvider>(
  clouds: CloudSettings,
  model: ModelSettings & { provider: Provider },
): ChosenCloudSettings<NonNullable<CloudSettings[(typeof CLOUD_OF)[Provider]]>[string]> {
  const cloud = CLOUD_OF[model.provider];
  const byName = (clouds[cloud] ?? {}) as Record<string, NonNullable<CloudSettings[(typeof CLOUD_OF)[Provider]]>[string]>;
  const names = Object.keys(byName);
  const refuse = (message: string) => ApplicationFailure.nonRetryable(`${model.provider}: ${message}`, 'InvalidModelSettings');
  if (names.length === 0) {
    throw refuse(`this worker has no ${cloud} settings; declare them with createWorker({ clouds: { ${cloud}: { <name>: { … } } } }) or new TurnpikePlugin({ clouds })`);
  }
  if (model.endpoint === undefined) {
    if (names.length > 1) throw refuse(`this worker has several ${cloud} settings (${names.join(', ')}); name one with model.endpoint`);
    return { name: names[0], settings: byName[names[0]] };
  }
  if (!Object.hasOwn(byName, model.endpoint)) throw refuse(`this worker has no ${cloud} settings named "${model.endpoint}"; it has ${names.join(', ')}`);
  return { name: model.endpoint, settings: byName[model.endpoint] };
}

/** The cloud's id for the turn's model: mapped when the settings list it, else the name itself. */
export function cloudModelId(ids: CloudModelIds | undefined, model: string): string {
  return ids !== undefined && Object.hasOwn(ids, model) ? ids[model] : model;
}

/**
 * Builds a cloud's client. The SDKs refuse settings they cannot use (no region, no API version, no
 * credentials) by throwing as the client is built: a non-retryable `InvalidModelSettings` naming
 * the settings, since retrying cannot add what the worker lacks.
 */
export function cloudClient<Client>(provider: CloudProvider, name: string, create: () => Client): Client {
  try {
    return create();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw ApplicationFailure.create({ message: `${provider}: the settings "${name}" cannot make a client: ${message}`, type: 'InvalidModelSettings', nonRetryable: true, cause: error instanceof Error ? error : undefined });
  }
}
