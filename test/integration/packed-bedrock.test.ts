/**
 * turnpike from outside the repository with Claude on Amazon Bedrock as the app's only model: the
 * run's packed tarball (test/support/packed-tarball.ts, shared with packed-package.test.ts)
 * installed into a fresh app with `@anthropic-ai/bedrock-sdk` and neither `openai` nor
 * `@anthropic-ai/sdk` as dependencies of its own (test/support/packed-bedrock-app.ts).
 *
 * bedrock-sdk depends on `@anthropic-ai/sdk` (`>=1.0.0 <2`), so npm installs that too, hoisted to
 * the app's node_modules where turnpike, its optional peer, finds it: the Bedrock provider runs
 * Anthropic's step on it, and first-party `anthropic` turns load as well. The app type-checks with
 * library checks on, and its worker runs a Bedrock turn through an approval against the strict
 * Bedrock fake (SigV4 with AWS's example key, event-stream framing). Turns on the clouds and
 * providers whose packages the app left out (`anthropic-vertex`, `azure-openai`, `openai`) fail
 * with `MissingPackage`, naming what to install.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCloudFake, type CloudFake } from '../fake-provider/clouds.js';
import { startFakeProviderServer, type FakeProviderServer } from '../fake-provider/server.js';
import { BEDROCK_APP_FILES } from '../support/packed-bedrock-app.js';
import { cleanEnvironment, installApp, type PackedApp } from '../support/packed-app.js';
import { packedTurnpike } from '../support/packed-tarball.js';

// AWS's documented example key pair: the fake knows it, as Amazon knows a real one.
const AWS_KEY = { id: 'AKIAIOSFODNN7EXAMPLE', secret: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' };
const BEDROCK_ID = 'eu.anthropic.claude-sonnet-4-5-20250929-v1:0';
/** Besides npm's settings, the developer's own cloud and provider credentials stay out of the app. */
const LEAVE_OUT = /^(npm_|AWS_|ANTHROPIC_|OPENAI_|AZURE_|GOOGLE_)/i;

let directory: string;
let app: PackedApp;
let base: FakeProviderServer;
let cloud: CloudFake;

beforeAll(async () => {
  base = await startFakeProviderServer();
  cloud = await startCloudFake(base, {
    bedrock: { region: 'eu-central-1', keys: { [AWS_KEY.id]: AWS_KEY.secret } },
    vertex: { project: 'unused', region: 'europe-west1', audience: 'unused', subjectToken: 'unused' },
    azure: { apiKey: 'unused', bearerToken: 'unused', apiVersions: ['2024-10-21'], deployments: [] },
  });
  directory = mkdtempSync(path.join(tmpdir(), 'turnpike-packed-bedrock-'));
  const { tarball } = await packedTurnpike(cleanEnvironment({}, LEAVE_OUT));
  // The example's Temporal packages and zod, the repository's own pin of bedrock-sdk, turnpike from the tarball.
  app = await installApp(directory, 'bedrock-app', tarball, BEDROCK_APP_FILES, ['@anthropic-ai/bedrock-sdk'], LEAVE_OUT);
}, 900_000);

afterAll(async () => {
  await cloud?.close();
  await base?.close();
  if (directory) rmSync(directory, { recursive: true, force: true });
});

describe('the packed package in a fresh app with @anthropic-ai/bedrock-sdk only', { timeout: 300_000 }, () => {
  it('installs @anthropic-ai/sdk only as bedrock-sdk\'s dependency, and no openai or vertex-sdk', async () => {
    const { stdout: tree } = await app.run('npm', ['ls', '--all', '--parseable']);
    const installed = tree.split('\n').filter(Boolean);
    const count = (name: string) => [name, installed.filter((location) => location.endsWith(`/node_modules/${name}`)).length];
    expect(['openai', '@anthropic-ai/vertex-sdk', '@anthropic-ai/sdk', '@anthropic-ai/bedrock-sdk'].map(count)).toEqual([
      ['openai', 0],
      ['@anthropic-ai/vertex-sdk', 0],
      ['@anthropic-ai/sdk', 1],
      ['@anthropic-ai/bedrock-sdk', 1],
    ]);
    // Who brought @anthropic-ai/sdk: bedrock-sdk, not the app.
    const { stdout: why } = await app.run('npm', ['ls', '@anthropic-ai/sdk', '--json']);
    const dependencies = (JSON.parse(why) as { dependencies: Record<string, { dependencies?: Record<string, unknown> }> }).dependencies;
    expect(Object.keys(dependencies).filter((name) => name.startsWith('@anthropic-ai/'))).toEqual(['@anthropic-ai/bedrock-sdk']);
    expect(Object.keys(dependencies['@anthropic-ai/bedrock-sdk'].dependencies ?? {})).toEqual(['@anthropic-ai/sdk']);
  });

  it('type-checks with library checks on, runs a Bedrock turn through an approval on the strict fake, and fails the missing clouds\' turns with MissingPackage', async () => {
    await app.run('npx', ['tsc', '-p', '.']);

    base.script('anthropic', [
      { text: 'Asking first.', toolCalls: [{ name: 'fail_over', input: { database: 'orders-db' } }], usage: { inputTokens: 900, outputTokens: 60 } },
      { text: 'orders-db is on its replica.', usage: { inputTokens: 1000, outputTokens: 20 } },
    ]);
    const taskQueue = `bedrock-app-${randomUUID()}`;
    const result = (await app.runScript({
      BEDROCK_TASK_QUEUE: taskQueue,
      BEDROCK_BASE_URL: cloud.url,
      BEDROCK_REGION: 'eu-central-1',
      BEDROCK_MODEL_ID: BEDROCK_ID,
      // The AWS SDK's default chain reads them, as it would on a developer's machine.
      AWS_ACCESS_KEY_ID: AWS_KEY.id,
      AWS_SECRET_ACCESS_KEY: AWS_KEY.secret,
      AWS_EC2_METADATA_DISABLED: 'true',
      ANTHROPIC_API_KEY: '',
    })) as Record<'vertex' | 'azure' | 'openai' | 'anthropic', Array<{ type?: string; message: string }>> & { bedrock: unknown };
    expect(result.bedrock).toEqual({
      parked: { kind: 'approval', toolName: 'fail_over', input: { database: 'orders-db' } },
      failedOverWhileParked: [],
      status: 'completed',
      steps: 2,
      text: 'orders-db is on its replica.',
      toolCalls: [{ toolName: 'fail_over', outcome: 'approved', output: { failedOver: 'orders-db' } }],
      failedOver: ['orders-db'],
      priced: true,
    });
    // Both steps went to Bedrock, signed with the example key, and the fake accepted them.
    const bedrock = cloud.requests.filter((request) => request.cloud === 'bedrock');
    expect(bedrock.map((request) => [new URL(request.url, cloud.url).pathname, request.status, request.errors])).toEqual([
      [`/model/${BEDROCK_ID}/invoke-with-response-stream`, 200, []],
      [`/model/${BEDROCK_ID}/invoke-with-response-stream`, 200, []],
    ]);
    expect(String(bedrock[0].headers.authorization)).toMatch(new RegExp(`^AWS4-HMAC-SHA256 Credential=${AWS_KEY.id}/\\d{8}/eu-central-1/bedrock/aws4_request`));
    expect(base.requests.filter((request) => request.provider === 'anthropic').map((request) => request.errors)).toEqual([[], []]);

    // A worker that names Vertex and Azure settings, without their packages: the turn fails at its
    // first step, naming the package and the command that installs it.
    expect(result.vertex).toContainEqual({
      type: 'MissingPackage',
      message: 'The model provider "anthropic-vertex" needs @anthropic-ai/vertex-sdk, which is not installed: npm install @anthropic-ai/vertex-sdk@^1.1.3 @anthropic-ai/sdk@^1.12.0',
    });
    expect(result.azure).toContainEqual({ type: 'MissingPackage', message: 'The model provider "azure-openai" needs openai, which is not installed: npm install openai@^6.30.1' });
    expect(result.openai).toContainEqual({ type: 'MissingPackage', message: 'The model provider "openai" needs openai, which is not installed: npm install openai@^6.30.1' });
    // @anthropic-ai/sdk came with bedrock-sdk: first-party Claude loads too, and asks for its key.
    expect(result.anthropic).toContainEqual({ type: 'ProviderAuthenticationError', message: "anthropic: no API key — set ANTHROPIC_API_KEY in the worker's environment" });
    expect(JSON.stringify(result.anthropic)).not.toContain('MissingPackage');
  });
});
