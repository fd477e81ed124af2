/**
 * What every scenario gets: the client, the run's options and a way to start a fresh pair of
 * workers (turnpike and floor) on task queues of their own.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { FloorSystem } from './floor-system.js';
import type { BenchOptions } from './options.js';
import type { SystemUnderTest } from './system.js';
import { TurnpikeSystem } from './turnpike-system.js';
import { WorkerHandle } from './worker-handle.js';
import type { WorkerProcessConfig } from './worker-protocol.js';

export interface BenchContext {
  client: Client;
  address: string;
  namespace: string;
  options: BenchOptions;
  /** Workflow bundles written once per run, shared by every worker process. */
  bundlePaths: { turnpike: string; floor: string };
  log(line: string): void;
}

export interface Systems {
  turnpike: TurnpikeSystem;
  floor: FloorSystem;
  /** Both, in the order a scenario should alternate them. */
  both: SystemUnderTest[];
  stop(): Promise<void>;
}

/**
 * Fresh worker processes per scenario: memory and cache state from one figure must not leak
 * into the next, and turns parked by one scenario must not be polled by another's worker.
 */
export async function startSystems(context: BenchContext, scenario: string): Promise<Systems> {
  const { options } = context;
  const workerOptions: WorkerProcessConfig['workerOptions'] = {
    ...(options.maxCachedWorkflows !== undefined ? { maxCachedWorkflows: options.maxCachedWorkflows } : {}),
    ...(options.maxConcurrentWorkflowTaskExecutions !== undefined
      ? { maxConcurrentWorkflowTaskExecutions: options.maxConcurrentWorkflowTaskExecutions }
      : {}),
  };
  const common = { address: context.address, namespace: context.namespace };
  const suffix = `${scenario}-${randomUUID().slice(0, 8)}`;
  const turnpikeWorker = await WorkerHandle.start({
    ...common,
    workerOptions,
    kind: 'turnpike',
    taskQueue: `bench-turnpike-${suffix}`,
    bundlePath: context.bundlePaths.turnpike,
  });
  // The floor runs with the cache and slots turnpike's worker actually got (createWorker may set
  // its own defaults): the cache decides memory and replays, so it must be the same on both sides.
  const floorWorker = await WorkerHandle.start({
    ...common,
    workerOptions: {
      maxCachedWorkflows: turnpikeWorker.settings.maxCachedWorkflows,
      ...(turnpikeWorker.settings.maxConcurrentWorkflowTaskExecutions !== undefined
        ? { maxConcurrentWorkflowTaskExecutions: turnpikeWorker.settings.maxConcurrentWorkflowTaskExecutions }
        : {}),
    },
    kind: 'floor',
    taskQueue: `bench-floor-${suffix}`,
    bundlePath: context.bundlePaths.floor,
  }).catch(async (error: unknown) => {
    await turnpikeWorker.stop();
    throw error;
  });
  const turnpike = new TurnpikeSystem(context.client, turnpikeWorker.config.taskQueue, turnpikeWorker);
  const floor = new FloorSystem(context.client, floorWorker.config.taskQueue, floorWorker);
  return {
    turnpike,
    floor,
    both: [turnpike, floor],
    stop: async () => {
      await Promise.all([turnpikeWorker.stop(), floorWorker.stop()]);
    },
  };
}
