/**
 * Builds a turnpike Worker from a tool set:
 *
 *   const worker = await createWorker({ tools: [myTool, myClientTool] });
 *   await worker.run();
 */
import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker, bundleWorkflowCode, type WorkerOptions } from '@temporalio/worker';
import type { Tool } from '../activities/tools.js';
import { DEFAULT_TASK_QUEUE } from '../workflows/messages/definitions.js';
import { connectionOptionsFromEnvironment } from './environment.js';
import { TurnpikePlugin, type TurnpikePluginOptions } from './plugin.js';
import { checkedModelCapacity, ModelCapacityRunner, type ModelCapacityOptions } from './model-capacity.js';
import { providerHeadersInterceptor } from './provider-headers.js';
import { quietBundlerLogger } from './quiet-bundler-logger.js';
import { checkedTenantBudgets } from '../activities/tenant-budgets/tenant-budget-options.js';
import { checkedEvaluation, createEvaluationWorker, EvaluationWorkerRunner, type EvaluationWorkerOptions } from './evaluation-worker.js';

const extension = import.meta.url.endsWith('.ts') ? '.ts' : '.js';

/** The workflows module of a turnpike-only worker: `agentTurn` and `agentConversation`. */
export const WORKFLOWS_PATH = fileURLToPath(new URL(`../workflows/registered-workflows${extension}`, import.meta.url));

/**
 * Workflows kept in the worker's cache. The SDK's default grows with the heap (2,310 here), and
 * every cached parked turn holds its V8 state: 2,000 parked turns took 2.7 GB RSS. Bounded at
 * 100, a parked turn is evicted and replayed from history when its decision arrives (resume p50
 * 35 ms with 1,000 parked) and 5,000 parked turns take ~340–430 MB (bench/README.md).
 */
export const DEFAULT_MAX_CACHED_WORKFLOWS = 100;

/** How long in-flight activities may run on after a shutdown signal (`TURNPIKE_SHUTDOWN_GRACE_TIME`). */
export const DEFAULT_SHUTDOWN_GRACE_TIME = '30s';

export interface CreateWorkerOptions {
  tools: readonly Tool[];
  /** Where streaming model steps push each delta for readers (see `TurnpikePluginOptions.liveDeltas`). */
  liveDeltas?: TurnpikePluginOptions['liveDeltas'];
  /** Webhook nudges for approvals (see `TurnpikePluginOptions.notifications`). */
  notifications?: TurnpikePluginOptions['notifications'];
  /** Approval messages in Slack (see `TurnpikePluginOptions.slack`). */
  slack?: TurnpikePluginOptions['slack'];
  /** Limits of the worker's transcript cache (see `TurnpikePluginOptions.transcriptCache`). */
  transcriptCache?: TurnpikePluginOptions['transcriptCache'];
  /** MCP servers whose tools turns may offer (see `TurnpikePluginOptions.mcpServers`). */
  mcpServers?: TurnpikePluginOptions['mcpServers'];
  /** Where content too large for history is kept (see `TurnpikePluginOptions.contentStore`). */
  contentStore?: TurnpikePluginOptions['contentStore'];
  /** Model prices over the built-in table (see `TurnpikePluginOptions.prices`). */
  prices?: TurnpikePluginOptions['prices'];
  /** How deep agent tools may nest (see `TurnpikePluginOptions.maxAgentDepth`). */
  maxAgentDepth?: number;
  /** AI SDK language models by name, for turns of provider `ai-sdk` (see `TurnpikePluginOptions.models`). */
  models?: TurnpikePluginOptions['models'];
  /** Named OpenAI-compatible endpoints (see `TurnpikePluginOptions.endpoints`). */
  endpoints?: TurnpikePluginOptions['endpoints'];
  /** Bedrock, Vertex AI and Azure OpenAI settings by name (see `TurnpikePluginOptions.clouds`). */
  clouds?: TurnpikePluginOptions['clouds'];
  /** Named remote MCP servers for OpenAI's hosted `mcp` tool (see `TurnpikePluginOptions.remoteMcpServers`). */
  remoteMcpServers?: TurnpikePluginOptions['remoteMcpServers'];
  /** Budgets per tenant over time, in a store the fleet shares (see `TurnpikePluginOptions.tenantBudgets`). */
  tenantBudgets?: TurnpikePluginOptions['tenantBudgets'];
  /** Private A2A push receivers the worker may reach (see `TurnpikePluginOptions.a2aPushAllow`). */
  a2aPushAllow?: TurnpikePluginOptions['a2aPushAllow'];
  /** The key A2A push notifications' JWTs are signed with (see `TurnpikePluginOptions.a2aPushSigningKey`). */
  a2aPushSigningKey?: TurnpikePluginOptions['a2aPushSigningKey'];
  /** Default `turnpike`, or `TURNPIKE_TASK_QUEUE`. */
  taskQueue?: string;
  /**
   * Also polls a task queue of model calls, with a rate that holds across every worker
   * (worker/model-capacity.ts): for turns whose client sets `modelTaskQueue` to the same name.
   * The returned Worker's `run()` runs both and ends when both have stopped. The model Worker has
   * turnpike's plugin (the same options) and none of `workerOptions` (interceptors, other plugins).
   */
  modelCapacity?: ModelCapacityOptions;
  /**
   * Also polls the evaluation task queue (worker/evaluation-worker.ts, docs/evaluations.md): a
   * Worker whose turns' tool calls are answered from the original turns' records, and which runs
   * only `safeTools` for real. The returned Worker's `run()` runs both.
   */
  evaluation?: EvaluationWorkerOptions;
  /** Default: a connection from the environment (`TEMPORAL_ADDRESS`, `TEMPORAL_NAMESPACE`, profiles). */
  connection?: NativeConnection;
  namespace?: string;
  /** A prebuilt bundle (see `bundleWorkflows`): saves seconds per worker in tests and benchmarks. */
  workflowBundle?: { code: string } | { codePath: string };
  /** Any other Worker option, e.g. `maxCachedWorkflows`; `plugins` are added after turnpike's. */
  workerOptions?: Partial<Omit<WorkerOptions, 'connection' | 'namespace' | 'taskQueue' | 'activities'>>;
}

/** Bundles turnpike's workflows once; pass the result to several workers. */
export async function bundleWorkflows(): Promise<{ code: string }> {
  // The plugin contributes the bundle's preload module; a bundle takes no activities.
  return bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, plugins: [new TurnpikePlugin()], logger: quietBundlerLogger });
}

/**
 * A worker that runs only turnpike: `TurnpikePlugin` with the given tools on a Worker that
 * registers turnpike's two workflows. To add turnpike to a worker of your own, use the plugin.
 */
export async function createWorker(options: CreateWorkerOptions): Promise<Worker> {
  const taskQueue = options.taskQueue ?? process.env.TURNPIKE_TASK_QUEUE ?? DEFAULT_TASK_QUEUE;
  // Checked before any connection is opened.
  const capacity = options.modelCapacity !== undefined ? checkedModelCapacity(options.modelCapacity, taskQueue) : undefined;
  if (options.tenantBudgets !== undefined) checkedTenantBudgets(options.tenantBudgets);
  const evaluation = options.evaluation !== undefined ? checkedEvaluation(options.evaluation, taskQueue, options.tools) : undefined;
  let connection = options.connection;
  let namespace = options.namespace;
  if (!connection) {
    const fromEnvironment = connectionOptionsFromEnvironment();
    connection = await NativeConnection.connect(fromEnvironment.connectionOptions);
    namespace ??= fromEnvironment.namespace;
  }
  const pluginOptions = turnpikePluginOptions(options);
  const shutdownGraceTime = process.env.TURNPIKE_SHUTDOWN_GRACE_TIME ?? DEFAULT_SHUTDOWN_GRACE_TIME;
  // An activity-only Worker on the model queue, with turnpike's activities and data converter.
  const modelWorker = capacity
    ? await Worker.create({
        connection,
        namespace: namespace ?? 'default',
        taskQueue: capacity.taskQueue,
        shutdownGraceTime,
        ...(capacity.requestsPerSecond !== undefined ? { maxTaskQueueActivitiesPerSecond: capacity.requestsPerSecond } : {}),
        ...(capacity.maxConcurrentCalls !== undefined ? { maxConcurrentActivityTaskExecutions: capacity.maxConcurrentCalls } : {}),
        // The providers' headers pause the queue through its governor, which runs on the turns' queue.
        ...(capacity.followProviderHeaders !== undefined
          ? { interceptors: { activity: [providerHeadersInterceptor({ modelQueue: capacity.taskQueue, governorTaskQueue: taskQueue, thresholds: typeof capacity.followProviderHeaders === 'object' ? capacity.followProviderHeaders : {} })] } }
          : {}),
        // The fleet's token limit applies to the model queue's calls only.
        plugins: [new TurnpikePlugin({ ...pluginOptions, ...(capacity.tokenLimit ? { modelTokenLimit: capacity.tokenLimit } : {}) })],
      })
    : undefined;
  const workflowBundle = options.workflowBundle ?? (await bundleWorkflows());
  const maxCachedWorkflows = Number(process.env.TURNPIKE_MAX_CACHED_WORKFLOWS ?? DEFAULT_MAX_CACHED_WORKFLOWS);
  const maxConcurrentWorkflowTaskExecutions = workflowTaskSlotsFromEnvironment();
  const evaluationWorker = evaluation
    ? await createEvaluationWorker({ connection, namespace: namespace ?? 'default', evaluation, pluginOptions, workflowBundle, shutdownGraceTime, maxCachedWorkflows })
    : undefined;
  return Worker.create({
    connection,
    namespace: namespace ?? 'default',
    taskQueue,
    workflowBundle,
    maxCachedWorkflows,
    ...(maxConcurrentWorkflowTaskExecutions !== undefined ? { maxConcurrentWorkflowTaskExecutions } : {}),
    // On SIGTERM (a deploy, a scale-down) a tool or model call already running gets this long to
    // finish before it is cancelled and retried elsewhere: a refund half-done is worse than a slow stop.
    shutdownGraceTime,
    ...options.workerOptions,
    plugins: [new TurnpikePlugin(pluginOptions), ...(modelWorker ? [new ModelCapacityRunner(modelWorker)] : []), ...(evaluationWorker ? [new EvaluationWorkerRunner(evaluationWorker)] : []), ...(options.workerOptions?.plugins ?? [])],
  });
}

/**
 * `TURNPIKE_MAX_CONCURRENT_WORKFLOW_TASKS`: the workflow tasks the Worker takes at once (the SDK's
 * `maxConcurrentWorkflowTaskExecutions`, 40 by default). They run one after another on the
 * workflow thread, so a task taken waits behind the others taken before it, whatever its priority;
 * fewer leaves the rest in the server's queue, where priority and fairness order them
 * (docs/tenants-and-capacity.md). Undefined when unset; at least 2 (the SDK needs 2 with a cache).
 */
export function workflowTaskSlotsFromEnvironment(environment: NodeJS.ProcessEnv = process.env): number | undefined {
  const value = environment.TURNPIKE_MAX_CONCURRENT_WORKFLOW_TASKS;
  if (value === undefined || value === '') return undefined;
  const slots = Number(value);
  if (!(Number.isInteger(slots) && slots >= 2)) throw new TypeError(`TURNPIKE_MAX_CONCURRENT_WORKFLOW_TASKS must be a whole number of at least 2 (got "${value}")`);
  return slots;
}

/** The plugin's options out of the worker's. */
function turnpikePluginOptions(options: CreateWorkerOptions): TurnpikePluginOptions {
  return {
    tools: options.tools,
    ...(options.notifications ? { notifications: options.notifications } : {}),
    ...(options.slack ? { slack: options.slack } : {}),
    ...(options.contentStore ? { contentStore: options.contentStore } : {}),
    ...(options.prices ? { prices: options.prices } : {}),
    ...(options.transcriptCache ? { transcriptCache: options.transcriptCache } : {}),
    ...(options.mcpServers ? { mcpServers: options.mcpServers } : {}),
    ...(options.maxAgentDepth !== undefined ? { maxAgentDepth: options.maxAgentDepth } : {}),
    ...(options.models ? { models: options.models } : {}),
    ...(options.endpoints ? { endpoints: options.endpoints } : {}),
    ...(options.clouds ? { clouds: options.clouds } : {}),
    ...(options.remoteMcpServers ? { remoteMcpServers: options.remoteMcpServers } : {}),
    ...(options.liveDeltas ? { liveDeltas: options.liveDeltas } : {}),
    ...(options.tenantBudgets ? { tenantBudgets: options.tenantBudgets } : {}),
    ...(options.a2aPushAllow ? { a2aPushAllow: options.a2aPushAllow } : {}),
    ...(options.a2aPushSigningKey ? { a2aPushSigningKey: options.a2aPushSigningKey } : {}),
  };
}
