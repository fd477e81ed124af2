/**
 * What the benchmark and its worker child processes say to each other over Node's IPC channel.
 * The worker runs in a child process so that its resident memory and CPU time are its own,
 * not mixed with the client's and the benchmark's.
 */
import type { LiveDeltaPiece } from '../activities/live-deltas.js';
import type { WorkerOptions } from '@temporalio/worker';
import type { ThreadHeap } from './thread-heaps.js';

export type WorkerKind = 'turnpike' | 'floor' | 'ai-sdk';

export interface WorkerProcessConfig {
  kind: WorkerKind;
  address: string;
  namespace: string;
  taskQueue: string;
  /** A prebuilt workflow bundle on disk: bundling happens once per run, in the parent. */
  bundlePath: string;
  /** Where the worker's Prometheus metrics are served (`host:port`). */
  metricsAddress: string;
  /**
   * The fake OpenAI server's base URL (`…/v1`): turnpike's `openai` provider and the ai-sdk
   * worker's `@ai-sdk/openai` provider call it.
   */
  openaiBaseURL?: string;
  /**
   * A folder for a turnpike worker's content store (`FileContentStore`); absent, the worker uses
   * the store `TURNPIKE_CONTENT_STORE` names, as `createWorker` does by default.
   */
  contentFolder?: string;
  /**
   * A turnpike worker only: register `@ai-sdk/openai`'s Chat Completions model on the fake as
   * `models['openai-chat']` (the ai-sdk-model figure). Off elsewhere, so other figures' workers
   * do not carry the AI SDK's modules.
   */
  aiSdkModel?: boolean;
  /**
   * A turnpike worker only: also poll the evaluation task queue (`createWorker({ evaluation: {} })`,
   * `<task queue>-eval`, no tool marked safe), for the evaluation figure.
   */
  evaluation?: boolean;
  /** Worker option overrides; absent means the SDK defaults that `createWorker` leaves in place. */
  workerOptions?: Pick<WorkerOptions, 'maxCachedWorkflows' | 'maxConcurrentWorkflowTaskExecutions'>;
}

/** The worker settings that decide what a parked turn costs, as the SDK compiled them. */
export interface WorkerSettings {
  maxCachedWorkflows: number;
  maxConcurrentWorkflowTaskExecutions: number | undefined;
  maxConcurrentActivityTaskExecutions: number | undefined;
  maxConcurrentLocalActivityExecutions: number | undefined;
  reuseV8Context: boolean;
  /** V8 heap limit of the worker process, from which the SDK derives the default cache size. */
  heapSizeLimitMiB: number;
}

export interface ProcessSample {
  /** `process.memoryUsage()` of the worker process, bytes (RSS includes the Rust core). */
  rss: number;
  heapUsed: number;
  /** `process.cpuUsage()` since the process started, microseconds, all threads. */
  cpuUser: number;
  cpuSystem: number;
  /** Completed activity executions by type; local ones prefixed `local:`. */
  activities: Record<string, number>;
  /** Runs of each benchmark tool's `execute` in the process (bench/tool-runs.ts): its effects. */
  toolRuns: Record<string, number>;
  at: number;
}

/** RSS and every thread's heap, optionally after a forced full garbage collection. */
export interface HeapSample {
  rss: number;
  heaps: ThreadHeap[];
}

export type ParentMessage = { type: 'sample'; id: number } | { type: 'heaps'; id: number; collect: boolean } | { type: 'shutdown' };

export type ChildMessage =
  | { type: 'ready'; settings: WorkerSettings }
  | { type: 'sample'; id: number; sample: ProcessSample }
  | { type: 'heaps'; id: number; sample: HeapSample }
  | { type: 'error'; message: string }
  /** A streamed delta piece from the worker's model activity, for the live readers in the bench process (the live channel over IPC). */
  | { type: 'live'; workflowId: string; piece: LiveDeltaPiece };
