/**
 * What the chaos tests share: their own dev server (they stop and restart servers, so they
 * never use the suite's shared one), a workflow bundle on disk, and worker processes that
 * can be killed with SIGKILL.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflows } from '../../worker/create-worker.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export function temporaryDirectory(prefix: string): string {
  return mkdtempSync(path.join(tmpdir(), prefix));
}

export async function writeBundle(directory: string): Promise<string> {
  const bundlePath = path.join(directory, 'workflow-bundle.js');
  writeFileSync(bundlePath, (await bundleWorkflows()).code);
  return bundlePath;
}

export interface WorkerProcess {
  child: ChildProcess;
  /** SIGKILL: no graceful shutdown, in-flight tasks are lost mid-way. */
  kill(): Promise<void>;
}

/** Starts test/chaos/worker-process.ts and resolves once it polls. */
export async function startWorkerProcess(env: Record<string, string>): Promise<WorkerProcess> {
  // `node --import tsx`, not the tsx CLI: the CLI runs the script in a child process, which a
  // SIGKILL of the CLI would leave running.
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test/chaos/worker-process.ts')], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker did not start: ${output}`)), 60_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('ready')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`worker exited with ${code}: ${output}`));
    });
  });
  return {
    child,
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    },
  };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
