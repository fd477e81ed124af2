/**
 * The workflow bundles, built once per run and written to disk so that every worker child
 * process loads them by path instead of bundling again (seconds each on 2 cores).
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ProviderV4 } from '@ai-sdk/provider';
import { bundleWorkflowCode } from '@temporalio/worker';
import { bundleWorkflows } from '../worker/create-worker.js';

const FLOOR_WORKFLOWS_PATH = fileURLToPath(new URL('./floor-workflows.ts', import.meta.url));
const AI_SDK_WORKFLOWS_PATH = fileURLToPath(new URL('./ai-sdk-workflows.ts', import.meta.url));

const quietLogger = {
  // The bundler reports progress at info level; warnings and errors still show.
  trace() {},
  debug() {},
  info() {},
  log() {},
  warn: (message: string, meta?: unknown) => console.warn(message, meta ?? ''),
  error: (message: string, meta?: unknown) => console.error(message, meta ?? ''),
};

export interface BundlePaths {
  turnpike: string;
  floor: string;
  /** Absent when the `@temporalio/ai-sdk` bundle could not be built (`aiSdkError` says why). */
  aiSdk?: string;
  aiSdkError?: string;
  /** Sizes of the bundles: a bigger bundle costs more to load into each workflow context. */
  bytes: { turnpike: number; floor: number; aiSdk?: number };
}

/**
 * The `@temporalio/ai-sdk` workflows, bundled through `AiSdkPlugin` as its documentation says:
 * the plugin prepends the Web-API polyfills (`TransformStream`, `Headers`, …) the AI SDK needs
 * in the workflow sandbox. The provider is only used by activities, which are not bundled.
 */
async function bundleAiSdk(): Promise<string> {
  const { AiSdkPlugin } = await import('@temporalio/ai-sdk');
  const unused = () => {
    throw new Error('not used for bundling');
  };
  const modelProvider: ProviderV4 = { specificationVersion: 'v4', languageModel: unused, embeddingModel: unused, imageModel: unused };
  const { code } = await bundleWorkflowCode({ workflowsPath: AI_SDK_WORKFLOWS_PATH, logger: quietLogger, plugins: [new AiSdkPlugin({ modelProvider })] });
  return code;
}

export async function writeBundles(directory: string): Promise<BundlePaths> {
  const [turnpike, floor, aiSdk] = await Promise.all([
    bundleWorkflows(),
    bundleWorkflowCode({ workflowsPath: FLOOR_WORKFLOWS_PATH, logger: quietLogger }),
    bundleAiSdk().then(
      (code) => ({ code }),
      (error: unknown) => ({ error: error instanceof Error ? error.message : String(error) }),
    ),
  ]);
  const paths = { turnpike: path.join(directory, 'turnpike-workflows.js'), floor: path.join(directory, 'floor-workflows.js') };
  writeFileSync(paths.turnpike, turnpike.code);
  writeFileSync(paths.floor, floor.code);
  const bytes = { turnpike: Buffer.byteLength(turnpike.code), floor: Buffer.byteLength(floor.code) };
  if ('error' in aiSdk) return { ...paths, aiSdkError: `its workflow bundle failed: ${aiSdk.error}`, bytes };
  const aiSdkPath = path.join(directory, 'ai-sdk-workflows.js');
  writeFileSync(aiSdkPath, aiSdk.code);
  return { ...paths, aiSdk: aiSdkPath, bytes: { ...bytes, aiSdk: Buffer.byteLength(aiSdk.code) } };
}
