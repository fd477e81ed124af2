/**
 * What every scenario gets: the client, the run's options and a way to start fresh workers
 * (turnpike, floor and, where compared, `@temporalio/ai-sdk`) on task queues of their own.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { AiSdkSystem } from './ai-sdk-system.js';
import type { BundlePaths } from './bundles.js';
import type { FakeOpenAI } from './fake-openai.js';
import { FAKE_OPENAI_MODEL } from './fake-openai-settings.js';
import { FloorSystem } from './floor-system.js';
import type { BenchOptions } from './options.js';
import type { SystemUnderTest } from './system.js';
import { TurnpikeSystem } from './turnpike-system.js';
import { WorkerHandle } from './worker-handle.js';
import type { WorkerProcessConfig } from './worker-protocol.js';

export interface BenchContext {
  /** With turnpike's data converter (gzip for payloads ≥ 4 KiB), as turnpike's clients must use. */
  client: Client;
  /**
   * With Temporal's default data converter, for the floor and ai-sdk: their workers have no
   * codec, as a user's would not by default, and could not read a compressed start input.
   */
  plainClient: Client;
  address: string;
  namespace: string;
  /** The dev server process (for the scale figure's server RSS and CPU). */
  serverPid?: number;
  options: BenchOptions;
  /** Workflow bundles written once per run, shared by every worker process. */
  bundlePaths: BundlePaths;
  /** The fake OpenAI server (fake-openai.ts) behind `turnpike-openai` and `ai-sdk`. */
  openaiBaseURL: string;
  /** The same server, for the streaming figure to pace and timestamp its streamed replies. */
  fakeOpenAI: FakeOpenAI;
  /**
   * Why `@temporalio/ai-sdk` is not measured, for the whole run or (keyed by scenario) for one
   * scenario; the report prints it instead of leaving the comparison out silently.
   */
  aiSdkNotMeasured: Record<string, string>;
  log(line: string): void;
}

/** The scenarios in which `@temporalio/ai-sdk` is compared: it has no parked turns (see ai-sdk-system.ts). */
export const AI_SDK_SCENARIOS: readonly string[] = ['latency', 'throughput', 'history'];

/**
 * The `@temporalio/ai-sdk` comparison: its turns and turnpike's, both calling a real OpenAI
 * SDK over HTTP against the same fake OpenAI server (the `scripted` model has no HTTP call, so
 * comparing it with ai-sdk's would charge ai-sdk for the round trip).
 */
export interface AiSdkComparison {
  turnpike: TurnpikeSystem;
  aiSdk: AiSdkSystem;
  /** Both, in the order a scenario should alternate them. */
  both: SystemUnderTest[];
}

export interface Systems {
  turnpike: TurnpikeSystem;
  floor: FloorSystem;
  /** Both, in the order a scenario should alternate them. */
  both: SystemUnderTest[];
  /** Absent when ai-sdk is not measured in this scenario (see `BenchContext.aiSdkNotMeasured`). */
  aiSdk?: AiSdkComparison;
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
  const common = { address: context.address, namespace: context.namespace, openaiBaseURL: context.openaiBaseURL };
  const suffix = `${scenario}-${randomUUID().slice(0, 8)}`;
  const turnpikeWorker = await WorkerHandle.start({
    ...common,
    workerOptions,
    kind: 'turnpike',
    ...(scenario === 'ai-sdk-model' ? { aiSdkModel: true } : {}),
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
  // The ai-sdk worker, where compared, gets the same cache and slots as the floor's.
  let aiSdkWorker: WorkerHandle | undefined;
  const aiSdkBundle = context.bundlePaths.aiSdk;
  if (AI_SDK_SCENARIOS.includes(scenario) && aiSdkBundle && context.aiSdkNotMeasured.run === undefined) {
    try {
      aiSdkWorker = await WorkerHandle.start({
        ...common,
        workerOptions: floorWorker.config.workerOptions,
        kind: 'ai-sdk',
        taskQueue: `bench-ai-sdk-${suffix}`,
        bundlePath: aiSdkBundle,
      });
    } catch (error) {
      context.aiSdkNotMeasured[scenario] = `its worker did not start: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`;
      context.log(`${scenario}: ai-sdk not measured: ${context.aiSdkNotMeasured[scenario]}`);
    }
  }
  const turnpike = new TurnpikeSystem(context.client, turnpikeWorker.config.taskQueue, turnpikeWorker);
  const floor = new FloorSystem(context.plainClient, floorWorker.config.taskQueue, floorWorker);
  let aiSdk: AiSdkComparison | undefined;
  if (aiSdkWorker) {
    // turnpike's openai provider, on the same turnpike worker: the model is a per-turn input.
    const turnpikeOpenai = new TurnpikeSystem(context.client, turnpikeWorker.config.taskQueue, turnpikeWorker, 'turnpike-openai', { provider: 'openai', model: FAKE_OPENAI_MODEL });
    const aiSdkSystem = new AiSdkSystem(context.plainClient, aiSdkWorker.config.taskQueue, aiSdkWorker);
    aiSdk = { turnpike: turnpikeOpenai, aiSdk: aiSdkSystem, both: [turnpikeOpenai, aiSdkSystem] };
  }
  return {
    turnpike,
    floor,
    both: [turnpike, floor],
    ...(aiSdk ? { aiSdk } : {}),
    stop: async () => {
      await Promise.all([turnpikeWorker.stop(), floorWorker.stop(), aiSdkWorker?.stop()]);
    },
  };
}
