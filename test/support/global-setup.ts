/**
 * Integration tests share one real Temporal dev server and one workflow bundle per run.
 * Each test file gets its own task queue and Worker (see `turnpike-harness.ts`).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { startDevServer } from '../../scripts/dev-server.js';
import { bundleWorkflows } from '../../worker/create-worker.js';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    temporalNamespace: string;
    temporalCli: string;
    workflowBundlePath: string;
  }
}

export const CONTINUE_AS_NEW_SUGGESTED_AT_EVENTS = 40;

interface SharedSetup {
  provided: Pick<import('vitest').ProvidedContext, 'temporalAddress' | 'temporalNamespace' | 'temporalCli' | 'workflowBundlePath'>;
  stop: () => Promise<void>;
  users: number;
}

/**
 * The projects `integration` and `integration-alone` (vitest.config.ts) both name this setup;
 * vitest runs it once per project (in its main process), so the first starts the server and the
 * bundle and the others share them. The last teardown stops them.
 */
const SHARED = Symbol.for('turnpike.integration-setup');
type WithShared = typeof globalThis & { [SHARED]?: Promise<SharedSetup> };

export default async function setup(project: TestProject) {
  const holder = globalThis as WithShared;
  holder[SHARED] ??= start();
  const shared = await holder[SHARED];
  shared.users += 1;
  for (const [key, value] of Object.entries(shared.provided)) project.provide(key as keyof SharedSetup['provided'], value);
  return async () => {
    shared.users -= 1;
    if (shared.users > 0) return;
    delete holder[SHARED];
    await shared.stop();
  };
}

async function start(): Promise<SharedSetup> {
  const directory = mkdtempSync(path.join(tmpdir(), 'turnpike-test-'));
  const [server, bundle] = await Promise.all([
    startDevServer({
      log: (line) => console.log(line),
      // Low enough that conversations continue-as-new within a test (the default is 4,000
      // events); turns ignore the suggestion.
      dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': CONTINUE_AS_NEW_SUGGESTED_AT_EVENTS },
    }),
    bundleWorkflows(),
  ]);
  const bundlePath = path.join(directory, 'workflow-bundle.js');
  writeFileSync(bundlePath, bundle.code);
  return {
    provided: { temporalAddress: server.address, temporalNamespace: server.namespace, temporalCli: server.cli, workflowBundlePath: bundlePath },
    stop: async () => {
      await server.stop();
      rmSync(directory, { recursive: true, force: true });
    },
    users: 0,
  };
}
