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
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startCloudFake, type CloudFake } from '../fake-provider/clouds.js';
import { startFakeProviderServer, type FakeProviderServer } from '../fake-provider/server.js';
import { BEDROCK_APP_FILES } from '../support/packed-bedrock-app.js';
import { packedTurnpike } from '../support/packed-tarball.js';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const EXAMPLE = path.join(REPO, 'examples', 'order-desk');
// AWS's documented example key pair: the fake knows it, as Amazon knows a real one.
const AWS_KEY = { id: 'AKIAIOSFODNN7EXAMPLE', secret: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' };
const BEDROCK_ID = 'eu.anthropic.claude-sonnet-4-5-20250929-v1:0';

/** npm settings of the `npm test` that runs us must not leak into the app's own npm calls. */
function cleanEnvironment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const environment = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(npm_|AWS_|ANTHROPIC_|OPENAI_|AZURE_|GOOGLE_)/i.test(key)));
  return { ...environment, ...extra };
}

async function inApp(app: string, command: string, args: string[], extra: Record<string, string> = {}) {
  try {
    return await run(command, args, { cwd: app, env: cleanEnvironment(extra), maxBuffer: 64 * 1024 * 1024, timeout: 240_000 });
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${command} ${args.join(' ')} failed in ${app}:\n${failed.stdout ?? ''}\n${failed.stderr ?? ''}\n${failed.message}`);
  }
}

let directory: string;
let app: string;
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
  const { tarball } = await packedTurnpike(cleanEnvironment());

  // The example's Temporal packages and zod, the repository's own pin of bedrock-sdk, turnpike from the tarball.
  const example = JSON.parse(readFileSync(path.join(EXAMPLE, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
  const pins = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
  const manifest = {
    name: 'turnpike-bedrock-app',
    private: true,
    type: 'module',
    dependencies: {
      ...Object.fromEntries(Object.entries(example.dependencies).filter(([name]) => name.startsWith('@temporalio/') || name === 'zod')),
      '@anthropic-ai/bedrock-sdk': pins.devDependencies['@anthropic-ai/bedrock-sdk'],
      turnpike: `file:${tarball}`,
    },
    devDependencies: { '@types/node': example.devDependencies['@types/node'], typescript: example.devDependencies.typescript, '@types/ms': '2.1.0' },
  };
  app = path.join(directory, 'bedrock-app');
  for (const [file, text] of Object.entries({ ...BEDROCK_APP_FILES, 'package.json': JSON.stringify(manifest, null, 2) })) {
    mkdirSync(path.dirname(path.join(app, file)), { recursive: true });
    writeFileSync(path.join(app, file), text);
  }
  await inApp(app, 'npm', ['install', '--no-audit', '--no-fund', '--prefer-offline']);
}, 900_000);

afterAll(async () => {
  await cloud?.close();
  await base?.close();
  if (directory) rmSync(directory, { recursive: true, force: true });
});

describe('the packed package in a fresh app with @anthropic-ai/bedrock-sdk only', { timeout: 300_000 }, () => {
  it('installs @anthropic-ai/sdk only as bedrock-sdk\'s dependency, and no openai or vertex-sdk', async () => {
    const { stdout: tree } = await inApp(app, 'npm', ['ls', '--all', '--parseable']);
    const installed = tree.split('\n').filter(Boolean);
    const count = (name: string) => [name, installed.filter((location) => location.endsWith(`/node_modules/${name}`)).length];
    expect(['openai', '@anthropic-ai/vertex-sdk', '@anthropic-ai/sdk', '@anthropic-ai/bedrock-sdk'].map(count)).toEqual([
      ['openai', 0],
      ['@anthropic-ai/vertex-sdk', 0],
      ['@anthropic-ai/sdk', 1],
      ['@anthropic-ai/bedrock-sdk', 1],
    ]);
    // Who brought @anthropic-ai/sdk: bedrock-sdk, not the app.
    const { stdout: why } = await inApp(app, 'npm', ['ls', '@anthropic-ai/sdk', '--json']);
    const dependencies = (JSON.parse(why) as { dependencies: Record<string, { dependencies?: Record<string, unknown> }> }).dependencies;
    expect(Object.keys(dependencies).filter((name) => name.startsWith('@anthropic-ai/'))).toEqual(['@anthropic-ai/bedrock-sdk']);
    expect(Object.keys(dependencies['@anthropic-ai/bedrock-sdk'].dependencies ?? {})).toEqual(['@anthropic-ai/sdk']);
  });

  it('type-checks with library checks on, runs a Bedrock turn through an approval on the strict fake, and fails the missing clouds\' turns with MissingPackage', async () => {
    await inApp(app, 'npx', ['tsc', '-p', '.']);

    base.script('anthropic', [
      { text: 'Asking first.', toolCalls: [{ name: 'fail_over', input: { database: 'orders-db' } }], usage: { inputTokens: 900, outputTokens: 60 } },
      { text: 'orders-db is on its replica.', usage: { inputTokens: 1000, outputTokens: 20 } },
    ]);
    const taskQueue = `bedrock-app-${randomUUID()}`;
    const { stdout } = await inApp(app, 'node', ['dist/run.js'], {
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_NAMESPACE: inject('temporalNamespace'),
      BEDROCK_TASK_QUEUE: taskQueue,
      BEDROCK_BASE_URL: cloud.url,
      BEDROCK_REGION: 'eu-central-1',
      BEDROCK_MODEL_ID: BEDROCK_ID,
      // The AWS SDK's default chain reads them, as it would on a developer's machine.
      AWS_ACCESS_KEY_ID: AWS_KEY.id,
      AWS_SECRET_ACCESS_KEY: AWS_KEY.secret,
      AWS_EC2_METADATA_DISABLED: 'true',
      ANTHROPIC_API_KEY: '',
    });
    const result = JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<'vertex' | 'azure' | 'openai' | 'anthropic', Array<{ type?: string; message: string }>> & { bedrock: unknown };
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
