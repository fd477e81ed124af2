/**
 * The clouds of test/fake-provider/clouds.ts in front of the strict OpenAI + Anthropic fake, and a
 * turnpike worker whose `clouds` settings point at them, with each cloud's credentials in the
 * environment and its credential chain: shared by the cloud integration tests.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import type { ModelSettings } from '../../workflows/types/index.js';
import { startCloudFake, type CloudFake, type CloudRequest } from '../fake-provider/clouds.js';
import { startFakeProviderServer, type FakeProvider, type FakeProviderServer } from '../fake-provider/server.js';
import { testTools } from './test-tools.js';
import { startTurnpike, type TurnpikeHarness } from './turnpike-harness.js';

// AWS's documented example key pair: the fake knows it, as Amazon knows a real one.
export const AWS_KEY = { id: 'AKIAIOSFODNN7EXAMPLE', secret: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' };
export const AZURE_KEY = 'azure-test-SECRET-5b1f0c';
export const ENTRA_TOKEN = 'entra-test-SECRET-token-77d2e9';
export const SUBJECT_TOKEN = 'wif-subject-SECRET-4410aa';
export const BEDROCK_ID = 'eu.anthropic.claude-sonnet-4-5-20250929-v1:0';
export const VERTEX_ID = 'claude-sonnet-4-5@20250929';
export const DEPLOYMENT = 'prod-gpt41-mini';
export const REASONING_DEPLOYMENT = 'prod-o4-mini';
/** Azure's API version with the Responses API (2025-03-01-preview and later). */
export const AZURE_API_VERSION = '2025-04-01-preview';
export const fastRetries = { retry: { initialInterval: '50ms', backoffCoefficient: 1, maximumInterval: '2s', maximumAttempts: 3 } };

export interface CloudsHarness {
  base: FakeProviderServer;
  cloud: CloudFake;
  turnpike: TurnpikeHarness;
  client: TurnpikeClient;
  /** The requests that reached one cloud, in order. */
  cloudRequests(kind: CloudRequest['cloud']): CloudRequest[];
  stop(): Promise<void>;
}

/** Starts the fakes and a worker with the clouds' settings; `stop()` puts the environment back. */
export async function startClouds(): Promise<CloudsHarness> {
  const saved = { ...process.env };
  const base = await startFakeProviderServer();
  const cloud = await startCloudFake(base, {
    bedrock: { region: 'eu-central-1', keys: { [AWS_KEY.id]: AWS_KEY.secret } },
    vertex: { project: 'turnpike-tests', region: 'europe-west1', audience: '//iam.googleapis.com/projects/123456/locations/global/workloadIdentityPools/ci/providers/tests', subjectToken: SUBJECT_TOKEN },
    azure: { apiKey: AZURE_KEY, bearerToken: ENTRA_TOKEN, apiVersions: ['2024-10-21', '2025-04-01-preview'], deployments: [DEPLOYMENT, REASONING_DEPLOYMENT], deploymentModels: { [DEPLOYMENT]: 'gpt-4.1-mini', [REASONING_DEPLOYMENT]: 'o4-mini' } },
  });
  // Each cloud's standard chain: AWS keys in the environment; Google's Application Default
  // Credentials from a workload identity federation file whose STS is the fake's.
  const directory = mkdtempSync(path.join(tmpdir(), 'turnpike-clouds-'));
  const subjectTokenFile = path.join(directory, 'subject-token');
  writeFileSync(subjectTokenFile, SUBJECT_TOKEN);
  const credentialsFile = path.join(directory, 'google-credentials.json');
  writeFileSync(
    credentialsFile,
    JSON.stringify({
      type: 'external_account',
      audience: '//iam.googleapis.com/projects/123456/locations/global/workloadIdentityPools/ci/providers/tests',
      subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
      token_url: cloud.tokenUrl,
      credential_source: { file: subjectTokenFile },
    }),
  );
  for (const name of ['AWS_PROFILE', 'AWS_BEARER_TOKEN_BEDROCK', 'AWS_SESSION_TOKEN', 'ANTHROPIC_BEDROCK_BASE_URL', 'ANTHROPIC_VERTEX_BASE_URL', 'AZURE_OPENAI_ENDPOINT']) delete process.env[name];
  Object.assign(process.env, {
    AWS_ACCESS_KEY_ID: AWS_KEY.id,
    AWS_SECRET_ACCESS_KEY: AWS_KEY.secret,
    AWS_EC2_METADATA_DISABLED: 'true',
    GOOGLE_APPLICATION_CREDENTIALS: credentialsFile,
    // ADC's project: federation credentials name none (the Vertex settings' projectId is the URL's).
    GOOGLE_CLOUD_PROJECT: 'turnpike-tests',
    TEST_AZURE_KEY: AZURE_KEY,
    // The client's own default variable, read by the `keyed` settings; the `entra` settings must not send it.
    AZURE_OPENAI_API_KEY: AZURE_KEY,
    // The first-party providers' settings point nowhere: a cloud turn that fell back to them would fail.
    ANTHROPIC_API_KEY: 'sk-ant-not-for-clouds',
    ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
    OPENAI_API_KEY: 'sk-not-for-clouds',
    OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
  });
  const turnpike = await startTurnpike({
    tools: testTools,
    clouds: {
      bedrock: { eu: { region: 'eu-central-1', baseURL: cloud.url, models: { 'claude-sonnet-4-5': BEDROCK_ID } } },
      vertex: { eu: { region: 'europe-west1', projectId: 'turnpike-tests', baseURL: `${cloud.url}/v1`, models: { 'claude-sonnet-4-5': VERTEX_ID } } },
      azure: {
        prod: { endpoint: cloud.url, apiVersion: AZURE_API_VERSION, apiKeyEnv: 'TEST_AZURE_KEY', deployments: { 'gpt-4.1-mini': DEPLOYMENT, 'o4-mini': REASONING_DEPLOYMENT } },
        entra: { endpoint: cloud.url, apiVersion: AZURE_API_VERSION, tokenProvider: async () => ENTRA_TOKEN, deployments: { 'gpt-4.1-mini': DEPLOYMENT } },
        // docs/models.md's pair: a key from AZURE_OPENAI_API_KEY beside the Entra settings.
        keyed: { endpoint: cloud.url, apiVersion: AZURE_API_VERSION, deployments: { 'gpt-4.1-mini': DEPLOYMENT } },
        // Before the Responses API: Chat Completions only.
        old: { endpoint: cloud.url, apiVersion: '2024-10-21', apiKeyEnv: 'TEST_AZURE_KEY', deployments: { 'gpt-4.1-mini': DEPLOYMENT } },
      },
    },
  });
  const client = new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue });
  return {
    base,
    cloud,
    turnpike,
    client,
    cloudRequests: (kind) => cloud.requests.filter((request) => request.cloud === kind),
    async stop() {
      await turnpike.stop();
      await cloud.close();
      await base.close();
      rmSync(directory, { recursive: true, force: true });
      process.env = saved;
    },
  };
}

export interface CloudCase {
  name: string;
  cloud: CloudRequest['cloud'];
  upstream: FakeProvider;
  model: ModelSettings;
  /** The model's price, as the turn's cost counts it. */
  priced: Pick<ModelSettings, 'provider' | 'model'>;
  thinks: boolean;
  /** Worker settings and credentials a history must not hold. */
  secrets: string[];
}

export const thinking = { maxTokens: 4000, thinking: { type: 'enabled' as const, budgetTokens: 2048 } };
export const cloudCases: CloudCase[] = [
  {
    name: 'anthropic-bedrock',
    cloud: 'bedrock',
    upstream: 'anthropic',
    model: { provider: 'anthropic-bedrock', endpoint: 'eu', model: 'claude-sonnet-4-5', ...thinking },
    priced: { provider: 'anthropic', model: 'claude-sonnet-4-5' },
    thinks: true,
    secrets: [AWS_KEY.id, AWS_KEY.secret, 'eu-central-1', BEDROCK_ID],
  },
  {
    name: 'anthropic-vertex',
    cloud: 'vertex',
    upstream: 'anthropic',
    model: { provider: 'anthropic-vertex', model: 'claude-sonnet-4-5', ...thinking },
    priced: { provider: 'anthropic', model: 'claude-sonnet-4-5' },
    thinks: true,
    secrets: [SUBJECT_TOKEN, 'ya29.', 'europe-west1', 'turnpike-tests', VERTEX_ID],
  },
  {
    name: 'azure-openai',
    cloud: 'azure',
    upstream: 'openai',
    model: { provider: 'azure-openai', endpoint: 'prod', model: 'gpt-4.1-mini' },
    priced: { provider: 'openai', model: 'gpt-4.1-mini' },
    thinks: false,
    secrets: [AZURE_KEY, ENTRA_TOKEN, DEPLOYMENT, AZURE_API_VERSION],
  },
  {
    name: 'azure-openai-responses',
    cloud: 'azure',
    upstream: 'openai-responses',
    model: { provider: 'azure-openai-responses', endpoint: 'prod', model: 'gpt-4.1-mini' },
    priced: { provider: 'openai', model: 'gpt-4.1-mini' },
    thinks: false,
    secrets: [AZURE_KEY, ENTRA_TOKEN, DEPLOYMENT, AZURE_API_VERSION],
  },
];
