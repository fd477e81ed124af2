/**
 * Both workflow bundles, built once per run and written to disk so that every worker child
 * process loads them by path instead of bundling again (seconds each on 2 cores).
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode } from '@temporalio/worker';
import { bundleWorkflows } from '../worker/create-worker.js';

const FLOOR_WORKFLOWS_PATH = fileURLToPath(new URL('./floor-workflows.ts', import.meta.url));

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
  /** Sizes of the bundles: a bigger bundle costs more to load into each workflow context. */
  bytes: { turnpike: number; floor: number };
}

export async function writeBundles(directory: string): Promise<BundlePaths> {
  const [turnpike, floor] = await Promise.all([
    bundleWorkflows(),
    bundleWorkflowCode({ workflowsPath: FLOOR_WORKFLOWS_PATH, logger: quietLogger }),
  ]);
  const paths = { turnpike: path.join(directory, 'turnpike-workflows.js'), floor: path.join(directory, 'floor-workflows.js') };
  writeFileSync(paths.turnpike, turnpike.code);
  writeFileSync(paths.floor, floor.code);
  return { ...paths, bytes: { turnpike: Buffer.byteLength(turnpike.code), floor: Buffer.byteLength(floor.code) } };
}
