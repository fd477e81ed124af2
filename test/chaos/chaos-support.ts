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
  /** What the worker printed when it began polling (runWorker's onReady). */
  ready: { taskQueue: string; healthUrl?: string; metricsUrl?: string };
  /** SIGKILL: no graceful shutdown, in-flight tasks are lost mid-way. */
  kill(): Promise<void>;
  /** SIGTERM: a graceful shutdown; resolves with the exit code and everything it printed. */
  terminate(): Promise<{ code: number | null; output: string }>;
  /** What it printed so far (stdout and stderr). */
  output(): string;
}

/** A worker process running `script` (default: the chaos tests' worker), ready once it prints "ready". */
export async function startWorkerProcess(env: Record<string, string>, script = 'test/chaos/worker-process.ts'): Promise<WorkerProcess> {
  // `node --import tsx`, not the tsx CLI: the CLI runs the script in a child process, which a
  // SIGKILL of the CLI would leave running.
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, script)], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const ready = await new Promise<WorkerProcess['ready']>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker did not start: ${output}`)), 60_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const line = /^ready (.*)$/m.exec(output);
      if (line) {
        clearTimeout(timer);
        resolve(JSON.parse(line[1]));
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
    ready,
    output: () => output,
    async terminate() {
      if (child.exitCode !== null || child.signalCode !== null) return { code: child.exitCode, output };
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      return { code: await exited, output };
    },
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    },
  };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
