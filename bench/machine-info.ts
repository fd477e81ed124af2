/** The machine and versions a run was measured on: figures are only comparable with these. */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { TEMPORAL_CLI_VERSION, temporalCliVersion } from '../scripts/temporal-cli.js';

export interface MachineInfo {
  date: string;
  cpus: number;
  cpuModel: string;
  totalMemoryMB: number;
  platform: string;
  node: string;
  temporalCli: { pinned: string; reported: string };
  temporalSdk: string;
  /** `@temporalio/ai-sdk` and the AI SDK packages it ran with (`missing` when not installed). */
  aiSdkPackages: Record<string, string>;
  /** The code measured: commit, and files under workflows/, activities/, worker/ changed since it. */
  git: { commit: string; uncommittedRuntimeFiles: string[] };
  /** 1-minute load average at the start and the end: a noisy neighbour shows up here. */
  loadAverage: { start: number; end?: number };
}

function sdkVersion(): string {
  try {
    const require = createRequire(import.meta.url);
    return (JSON.parse(readFileSync(require.resolve('@temporalio/worker/package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

const AI_SDK_PACKAGES = ['@temporalio/ai-sdk', 'ai', '@ai-sdk/openai', '@ai-sdk/provider'];

function aiSdkPackages(): Record<string, string> {
  return Object.fromEntries(
    AI_SDK_PACKAGES.map((name) => {
      try {
        const file = fileURLToPath(new URL(`../node_modules/${name}/package.json`, import.meta.url));
        return [name, (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version];
      } catch {
        return [name, 'missing'];
      }
    }),
  );
}

function gitState(): MachineInfo['git'] {
  const git = (...args: string[]) => spawnSync('git', args, { encoding: 'utf8' }).stdout?.trim() ?? '';
  const changed = git('status', '--porcelain', '--', 'workflows', 'activities', 'worker');
  // BENCH_COMMIT names the commit when the run is from an exported copy (`git archive`) without .git.
  return { commit: git('rev-parse', '--short', 'HEAD') || process.env.BENCH_COMMIT || 'unknown', uncommittedRuntimeFiles: changed ? changed.split('\n').map((line) => line.slice(3)) : [] };
}

export function machineInfo(cli: string): MachineInfo {
  return {
    date: new Date().toISOString(),
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    totalMemoryMB: Math.round(os.totalmem() / 2 ** 20),
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    temporalCli: { pinned: TEMPORAL_CLI_VERSION, reported: temporalCliVersion(cli) },
    temporalSdk: sdkVersion(),
    aiSdkPackages: aiSdkPackages(),
    git: gitState(),
    loadAverage: { start: os.loadavg()[0] },
  };
}
