/**
 * The parent's side of a worker child process (`worker-process.ts`): start it, sample its
 * memory and CPU, read its Prometheus metrics, stop it.
 */
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { InProcessLiveDeltas } from '../activities/live-deltas.js';
import { freePort } from '../scripts/dev-server.js';
import type { ChildMessage, HeapSample, ParentMessage, ProcessSample, WorkerProcessConfig, WorkerSettings } from './worker-protocol.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO_ROOT = path.dirname(HERE);

export class WorkerHandle {
  private nextId = 0;
  private readonly waiting = new Map<number, (sample: ProcessSample) => void>();
  private readonly waitingHeaps = new Map<number, (sample: HeapSample) => void>();
  /** The worker's live deltas, brought over IPC (a turnpike worker pushes every streamed piece). */
  readonly liveDeltas = new InProcessLiveDeltas();

  private constructor(
    private readonly child: ChildProcess,
    readonly config: WorkerProcessConfig,
    readonly settings: WorkerSettings,
  ) {
    child.on('message', (message: ChildMessage) => {
      if (message.type === 'live') {
        this.liveDeltas.publish(message.workflowId, message.piece);
      } else if (message.type === 'sample') {
        this.waiting.get(message.id)?.(message.sample);
        this.waiting.delete(message.id);
      } else if (message.type === 'heaps') {
        this.waitingHeaps.get(message.id)?.(message.sample);
        this.waitingHeaps.delete(message.id);
      }
    });
  }

  /** Forks a worker process and resolves once its Worker is created and polling. */
  static async start(config: Omit<WorkerProcessConfig, 'metricsAddress'>): Promise<WorkerHandle> {
    const full: WorkerProcessConfig = { ...config, metricsAddress: `127.0.0.1:${await freePort()}` };
    const child = fork(path.join(HERE, 'worker-process.ts'), [], {
      cwd: REPO_ROOT,
      // tsx compiles the TypeScript; nothing else from the parent's flags is wanted, except
      // BENCH_WORKER_NODE_ARGS for profiling (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`).
      execArgv: ['--import', 'tsx', ...(process.env.BENCH_WORKER_NODE_ARGS?.split(' ').filter(Boolean) ?? [])],
      env: { ...process.env, BENCH_WORKER_CONFIG: JSON.stringify(full) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const settings = await new Promise<WorkerSettings>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`${config.kind} worker process exited with ${code} before it was ready`)));
      child.on('message', (message: ChildMessage) => {
        if (message.type === 'ready') resolve(message.settings);
        if (message.type === 'error') reject(new Error(`${config.kind} worker process failed: ${message.message}`));
      });
    });
    child.removeAllListeners('exit');
    return new WorkerHandle(child, full, settings);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  sample(): Promise<ProcessSample> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.config.kind} worker did not answer a sample request`)), 30_000);
      this.waiting.set(id, (sample) => {
        clearTimeout(timer);
        resolve(sample);
      });
      this.child.send({ type: 'sample', id } satisfies ParentMessage);
    });
  }

  /** RSS and the heap of every thread (main and workflow threads), after a full GC if `collect`. */
  heaps(collect: boolean): Promise<HeapSample> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.config.kind} worker did not answer a heap request`)), 60_000);
      this.waitingHeaps.set(id, (sample) => {
        clearTimeout(timer);
        resolve(sample);
      });
      this.child.send({ type: 'heaps', id, collect } satisfies ParentMessage);
    });
  }

  /**
   * The worker's Prometheus metrics whose names start with one of `prefixes`, summed over
   * label sets (histograms contribute their `_count` and `_sum`).
   */
  async metrics(prefixes: readonly string[] = ['temporal_sticky_cache', 'temporal_workflow_task_replay_latency', 'temporal_workflow_task_execution_latency', 'temporal_num_pollers']): Promise<Record<string, number>> {
    try {
      const response = await fetch(`http://${this.config.metricsAddress}/metrics`);
      const text = await response.text();
      const totals: Record<string, number> = {};
      for (const line of text.split('\n')) {
        if (line.startsWith('#') || line.trim() === '') continue;
        const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
        if (!match) continue;
        const name = match[1];
        if (name.endsWith('_bucket') || !prefixes.some((prefix) => name.startsWith(prefix))) continue;
        totals[name] = (totals[name] ?? 0) + Number(match[3]);
      }
      return totals;
    } catch {
      // Metrics are supporting evidence; a failed scrape must not fail the benchmark.
      return {};
    }
  }

  /** Asks the worker to shut down gracefully; kills it if it has not exited within 20 s. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.send({ type: 'shutdown' } satisfies ParentMessage);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(timer);
  }
}

/** CPU seconds (user + system) spent between two samples of the same process. */
export function cpuSecondsBetween(before: ProcessSample, after: ProcessSample): number {
  return (after.cpuUser - before.cpuUser + (after.cpuSystem - before.cpuSystem)) / 1e6;
}
