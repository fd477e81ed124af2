/**
 * The test kit's workflow bundles, made once per workflows file and reused: by every environment
 * of a process (kept in memory) and by every later process, such as the other files of a test run
 * that each runner starts in a worker process of its own (kept on disk). Bundling turnpike's
 * workflows with webpack takes about ten seconds; a cached bundle loads in milliseconds.
 *
 * On disk a bundle lives in `<cache>/workflow-bundles/<key>/` (`<cache>` as for the test server:
 * `TURNPIKE_CACHE_DIR`, else `$XDG_CACHE_HOME/turnpike` or `~/.cache/turnpike`), where `<key>`
 * hashes the workflows file's path, turnpike's version and the Temporal SDK's
 * (`@temporalio/worker`, `@temporalio/workflow`) versions. Beside `bundle.js`, `inputs.json`
 * lists every file webpack read to make it, with its content's hash: a bundle is used only while
 * every one of those files still has the same content, so an edit of any module the workflows
 * import (the app's, turnpike's or a package's) makes a new bundle on next use.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode } from '@temporalio/worker';
import { WORKFLOWS_PATH } from '../worker/create-worker.js';
import { TurnpikePlugin } from '../worker/plugin.js';
import { quietBundlerLogger } from '../worker/quiet-bundler-logger.js';

/** A bundle, as `Worker.create({ workflowBundle })` takes it. */
export interface CachedWorkflowBundle {
  code: string;
}

const inProcess = new Map<string, Promise<CachedWorkflowBundle>>();

/** Where bundles are kept (`<cache>/workflow-bundles`). */
export function workflowBundleDirectory(): string {
  const root = process.env.TURNPIKE_CACHE_DIR ?? path.join(process.env.XDG_CACHE_HOME ?? path.join(homedir(), '.cache'), 'turnpike');
  return path.join(root, 'workflow-bundles');
}

const require = createRequire(import.meta.url);

function versionOf(name: string): string {
  try {
    return (require(`${name}/package.json`) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

function hashOf(file: string): string | undefined {
  try {
    return createHash('sha256').update(readFileSync(file)).digest('hex');
  } catch {
    return undefined;
  }
}

function keyOf(workflowsPath: string): string {
  const versions = [turnpikeVersion(), versionOf('@temporalio/worker'), versionOf('@temporalio/workflow')];
  return createHash('sha256').update(JSON.stringify({ workflowsPath, versions, node: process.versions.modules })).digest('hex').slice(0, 32);
}

function turnpikeVersion(): string {
  // This file is testing/ in the repository or dist/testing/ in the package: the manifest is a folder or two up.
  for (const up of ['../package.json', '../../package.json']) {
    const manifest = path.resolve(path.dirname(fileURLToPath(import.meta.url)), up);
    if (existsSync(manifest)) {
      const { name, version } = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string; version?: string };
      if (name === 'turnpike' && version) return version;
    }
  }
  return 'unknown';
}

/** The bundle on disk, if every file it was made from is unchanged. */
function readCached(folder: string): CachedWorkflowBundle | undefined {
  try {
    const inputs = JSON.parse(readFileSync(path.join(folder, 'inputs.json'), 'utf8')) as Record<string, string>;
    for (const [file, hash] of Object.entries(inputs)) if (hashOf(file) !== hash) return undefined;
    return { code: readFileSync(path.join(folder, 'bundle.js'), 'utf8') };
  } catch {
    return undefined;
  }
}

async function bundleAndKeep(workflowsPath: string, folder: string): Promise<CachedWorkflowBundle> {
  const inputs = new Set<string>();
  const { code } = await bundleWorkflowCode({
    workflowsPath,
    plugins: [new TurnpikePlugin()],
    logger: quietBundlerLogger,
    // Records every file webpack read: the bundle is valid while they are unchanged.
    webpackConfigHook: (config) => ({
      ...config,
      plugins: [
        ...(config.plugins ?? []),
        {
          apply(compiler: { hooks: { afterCompile: { tap(name: string, fn: (compilation: { fileDependencies: Iterable<string> }) => void): void } } }) {
            compiler.hooks.afterCompile.tap('turnpike-bundle-inputs', (compilation) => {
              for (const file of compilation.fileDependencies) inputs.add(file);
            });
          },
        },
      ],
    }),
  });
  const hashes: Record<string, string> = {};
  for (const file of [...inputs].sort()) {
    // Files only in the bundler's memory (its generated entry) are not on disk: the key covers them.
    const hash = existsSync(file) ? hashOf(file) : undefined;
    if (hash) hashes[file] = hash;
  }
  try {
    // Written beside the final folder and renamed into place, so a reader in another process
    // sees a whole bundle or none.
    mkdirSync(path.dirname(folder), { recursive: true });
    const staging = `${folder}.${process.pid}.${Date.now()}`;
    mkdirSync(staging, { recursive: true });
    writeFileSync(path.join(staging, 'bundle.js'), code);
    writeFileSync(path.join(staging, 'inputs.json'), JSON.stringify(hashes));
    rmSync(folder, { recursive: true, force: true });
    try {
      renameSync(staging, folder);
    } catch {
      rmSync(staging, { recursive: true, force: true }); // another process put its copy there first
    }
  } catch {
    // A cache that cannot be written costs the next process a bundling, nothing more.
  }
  return { code };
}

/**
 * The bundle of `workflowsPath` (default turnpike's own workflows) with turnpike's plugin: from
 * memory, else from disk when every file it was made from is unchanged, else bundled and kept.
 */
export function cachedWorkflowBundle(workflowsPath: string = WORKFLOWS_PATH): Promise<CachedWorkflowBundle> {
  const resolved = path.resolve(workflowsPath);
  const folder = path.join(workflowBundleDirectory(), keyOf(resolved));
  let bundle = inProcess.get(folder);
  if (!bundle) {
    bundle = Promise.resolve().then(() => readCached(folder) ?? bundleAndKeep(resolved, folder));
    // A failed bundling (a syntax error in the file) is not remembered: the next call tries again.
    bundle.catch(() => inProcess.delete(folder));
    inProcess.set(folder, bundle);
  }
  return bundle;
}
