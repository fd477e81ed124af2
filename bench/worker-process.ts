/**
 * A worker child process: runs one turnpike worker (`createWorker`, the benchmark's tools), one
 * floor worker or one `@temporalio/ai-sdk` worker (`AiSdkPlugin`), and answers the parent's
 * requests for its RSS and CPU time over IPC.
 *
 * Started by `worker-handle.ts` with `node --import tsx`; configured by the JSON in
 * `BENCH_WORKER_CONFIG` (see `WorkerProcessConfig`).
 */
import v8 from 'node:v8';
import { Context } from '@temporalio/activity';
import { DefaultLogger, NativeConnection, Runtime, Worker, type WorkerOptions } from '@temporalio/worker';
import type { ProviderV4 } from '@ai-sdk/provider';
import { AI_SDK_MODEL_NAME, FAKE_OPENAI_KEY, FAKE_OPENAI_MODEL } from './fake-openai-settings.js';
import type { LiveDeltaPiece } from '../activities/live-deltas.js';
import { ThreadHeaps } from './thread-heaps.js';
import { toolRuns } from './tool-runs.js';
import type { ChildMessage, ParentMessage, ProcessSample, WorkerProcessConfig, WorkerSettings } from './worker-protocol.js';

const config = JSON.parse(process.env.BENCH_WORKER_CONFIG ?? '') as WorkerProcessConfig;

function send(message: ChildMessage): void {
  process.send?.(message);
}

// Metrics give the cache hits, misses and evictions behind the latency and memory figures.
Runtime.install({
  logger: new DefaultLogger('WARN'),
  telemetryOptions: { metrics: { prometheus: { bindAddress: config.metricsAddress } } },
});

const activityCounts: Record<string, number> = {};

/**
 * Counts completed activities, local and normal, so the parent can tell when every turn has
 * reached its park point without querying (a query would load evicted turns back into the
 * cache and distort the memory figure).
 */
const countingInterceptors: WorkerOptions['interceptors'] = {
  activity: [
    (context: Context) => ({
      inbound: {
        async execute(input, next) {
          const result = await next(input);
          const key = `${context.info.isLocal ? 'local:' : ''}${context.info.activityType}`;
          activityCounts[key] = (activityCounts[key] ?? 0) + 1;
          return result;
        },
      },
    }),
  ],
};

function sample(): ProcessSample {
  const memory = process.memoryUsage();
  const cpu = process.cpuUsage();
  return { rss: memory.rss, heapUsed: memory.heapUsed, cpuUser: cpu.user, cpuSystem: cpu.system, activities: { ...activityCounts }, toolRuns: { ...toolRuns }, at: Date.now() };
}

function settingsOf(worker: Worker): WorkerSettings {
  const options = worker.options;
  const tuner = options.tuner as unknown as Record<string, { numSlots?: number } | undefined>;
  return {
    maxCachedWorkflows: options.maxCachedWorkflows,
    maxConcurrentWorkflowTaskExecutions: tuner.workflowTaskSlotSupplier?.numSlots,
    maxConcurrentActivityTaskExecutions: tuner.activityTaskSlotSupplier?.numSlots,
    maxConcurrentLocalActivityExecutions: tuner.localActivityTaskSlotSupplier?.numSlots,
    reuseV8Context: options.reuseV8Context ?? true,
    heapSizeLimitMiB: Math.round(v8.getHeapStatistics().heap_size_limit / 2 ** 20),
  };
}

/** The AI SDK model a turnpike worker registers for the ai-sdk-model figure: `@ai-sdk/openai` Chat Completions on the fake. */
async function aiSdkModels(config: WorkerProcessConfig) {
  if (!config.openaiBaseURL) throw new Error('the ai-sdk model needs openaiBaseURL');
  const { createOpenAI } = await import('@ai-sdk/openai');
  return { [AI_SDK_MODEL_NAME]: createOpenAI({ baseURL: config.openaiBaseURL, apiKey: FAKE_OPENAI_KEY }).chat(FAKE_OPENAI_MODEL) };
}

async function main(): Promise<void> {
  const connection = await NativeConnection.connect({ address: config.address });
  const common = {
    connection,
    namespace: config.namespace,
    taskQueue: config.taskQueue,
    workflowBundle: { codePath: config.bundlePath },
  };
  const extra = { interceptors: countingInterceptors, ...config.workerOptions };
  if (config.openaiBaseURL) {
    // turnpike's openai provider reads these on every call (the `turnpike-openai` turns).
    process.env.OPENAI_BASE_URL = config.openaiBaseURL;
    process.env.OPENAI_API_KEY = FAKE_OPENAI_KEY;
  }
  // Imported by kind: the floor worker must not carry turnpike's modules (model SDKs, zod) in
  // its memory, or its RSS would not be a floor; nor the ai-sdk worker turnpike's.
  let worker: Worker;
  if (config.kind === 'turnpike') {
    const [{ createWorker }, { benchTools }, { FileContentStore }] = await Promise.all([
      import('../worker/create-worker.js'),
      import('./bench-tools.js'),
      import('../content/file-content-store.js'),
    ]);
    const contentStore = config.contentFolder ? { contentStore: new FileContentStore(config.contentFolder) } : {};
    const models = config.aiSdkModel ? { models: await aiSdkModels(config) } : {};
    // The live channel to the bench process: each streamed piece as an IPC message.
    const liveDeltas = { publish: (workflowId: string, piece: LiveDeltaPiece) => send({ type: 'live', workflowId, piece }), subscribe: () => () => {} };
    const evaluation = config.evaluation ? { evaluation: {} } : {};
    worker = await createWorker({ ...common, ...contentStore, ...models, ...evaluation, tools: benchTools, workerOptions: extra, liveDeltas });
  } else if (config.kind === 'ai-sdk') {
    const [{ AiSdkPlugin }, { createOpenAI }, { createAiSdkActivities }] = await Promise.all([
      import('@temporalio/ai-sdk'),
      import('@ai-sdk/openai'),
      import('./ai-sdk-activities.js'),
    ]);
    if (!config.openaiBaseURL) throw new Error('the ai-sdk worker needs openaiBaseURL');
    const openai = createOpenAI({ baseURL: config.openaiBaseURL, apiKey: FAKE_OPENAI_KEY });
    // The fake serves Chat Completions; `@ai-sdk/openai`'s languageModel() is the Responses API.
    const modelProvider: ProviderV4 = {
      specificationVersion: 'v4',
      languageModel: (modelId) => openai.chat(modelId),
      embeddingModel: (modelId) => openai.embeddingModel(modelId),
      imageModel: (modelId) => openai.imageModel(modelId),
    };
    worker = await Worker.create({ ...common, plugins: [new AiSdkPlugin({ modelProvider })], activities: createAiSdkActivities(), ...extra });
  } else {
    const { createFloorActivities } = await import('./floor-activities.js');
    worker = await Worker.create({ ...common, activities: createFloorActivities(), ...extra });
  }

  const running = worker.run();
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running.catch(() => undefined);
    await connection.close();
    process.exit(0);
  };
  const threadHeaps = new ThreadHeaps();
  process.on('message', (message: ParentMessage) => {
    if (message.type === 'sample') send({ type: 'sample', id: message.id, sample: sample() });
    else if (message.type === 'heaps') {
      void threadHeaps.read(message.collect).then((heaps) => send({ type: 'heaps', id: message.id, sample: { rss: process.memoryUsage().rss, heaps } }));
    } else if (message.type === 'shutdown') void stop();
  });
  // The parent died or closed the channel: do not linger as an orphan polling the server.
  process.on('disconnect', () => void stop());
  send({ type: 'ready', settings: settingsOf(worker) });
  await running;
}

main().catch((error: unknown) => {
  send({ type: 'error', message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  process.exit(1);
});
