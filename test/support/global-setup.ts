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

export default async function setup(project: TestProject) {
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
  project.provide('temporalAddress', server.address);
  project.provide('temporalNamespace', server.namespace);
  project.provide('temporalCli', server.cli);
  project.provide('workflowBundlePath', bundlePath);
  return async () => {
    await server.stop();
    rmSync(directory, { recursive: true, force: true });
  };
}
