/**
 * The evaluation worker (docs/evaluations.md): `createWorker({ evaluation })` runs, beside the
 * turns' Worker, a second Worker on the evaluation task queue with the same workflows and
 * turnpike's activities, two of them wrapped so that an evaluation turn never touches the world
 * (activities/evaluation/recorded-calls.ts): the model step's dispositions park nothing, and
 * `executeTool` answers from the original's records and runs only the tools marked safe. It also
 * runs the evaluation run's own activities, with the graders registered here. An evaluation run (`TurnpikeClient.evaluate`) is
 * started on this queue, and its turns run there as its children.
 */
import { Context } from '@temporalio/activity';
import type { NativeConnection, Worker, WorkerOptions, WorkerPlugin } from '@temporalio/worker';
import { Worker as TemporalWorker } from '@temporalio/worker';
import type { Tool } from '../activities/tools.js';
import type { TurnpikeActivities } from '../activities/index.js';
import { createEvaluationActivities } from '../activities/evaluation/evaluation-activities.js';
import { GRADER_NAME } from '../workflows/evaluation/grader-types.js';
import type { Grader } from '../workflows/evaluation/evaluation-types.js';
import { evaluationDisposition, evaluationToolResult, RecordedCallsCache } from '../activities/evaluation/recorded-calls.js';
import type { ExecuteToolInput, ModelStepRequest, ToolCallPart } from '../workflows/types/index.js';
import { defaultEvaluationQueue } from '../workflows/evaluation/evaluation-types.js';
import { ModelCapacityRunner } from './model-capacity.js';
import { TurnpikePlugin, type TurnpikePluginOptions } from './plugin.js';

export interface EvaluationWorkerOptions {
  /** The evaluation task queue. Default: the turns' task queue with `-eval` after it. */
  taskQueue?: string;
  /** Tools an evaluation turn may run when a call has no recorded result (read-only ones). Default: none. */
  safeTools?: string[];
  /** Evaluation turns' activities this process runs at once (the Worker's `maxConcurrentActivityTaskExecutions`). */
  maxConcurrentActivities?: number;
  /** Functions that grade an evaluated turn beside its original, by the name an evaluation's `graders` refers to them by (docs/evaluations.md, "Graders"). */
  graders?: Record<string, Grader>;
}

type CheckedEvaluation = EvaluationWorkerOptions & { taskQueue: string; safeTools: string[]; graders: Record<string, Grader> };

function checkedGraders(graders: unknown): Record<string, Grader> {
  if (graders === undefined) return {};
  if (graders === null || typeof graders !== 'object' || Array.isArray(graders)) throw new TypeError('Invalid evaluation.graders: expected an object { <name>: (input) => ({ score, pass?, comment? }) }');
  for (const [name, grader] of Object.entries(graders)) {
    if (!GRADER_NAME.test(name)) throw new TypeError(`Invalid evaluation.graders: a grader's name must match ${GRADER_NAME.source} (got ${JSON.stringify(name)})`);
    if (typeof grader !== 'function') throw new TypeError(`Invalid evaluation.graders.${name}: expected a function, got ${typeof grader}`);
  }
  return { ...(graders as Record<string, Grader>) };
}

/** The options checked, with the queue's name: a bad one throws a clear TypeError before anything polls. */
export function checkedEvaluation(options: EvaluationWorkerOptions, turnTaskQueue: string, tools: readonly Tool[]): CheckedEvaluation {
  if (options === null || typeof options !== 'object') throw new TypeError('Invalid evaluation: expected an object { taskQueue?, safeTools?, maxConcurrentActivities?, graders? }');
  const { taskQueue = defaultEvaluationQueue(turnTaskQueue), safeTools = [], maxConcurrentActivities } = options;
  const graders = checkedGraders(options.graders);
  if (typeof taskQueue !== 'string' || taskQueue.trim() === '') throw new TypeError(`Invalid evaluation.taskQueue: a task queue name must be a non-empty string (got ${JSON.stringify(taskQueue)})`);
  if (taskQueue === turnTaskQueue) throw new TypeError(`Invalid evaluation.taskQueue: "${taskQueue}" is the turns' own task queue; evaluation turns need a queue of their own, where no tool runs for real`);
  if (!Array.isArray(safeTools) || safeTools.some((name) => typeof name !== 'string')) throw new TypeError('Invalid evaluation.safeTools: expected an array of tool names');
  const known = new Set(tools.map((tool) => tool.name));
  const unknown = safeTools.filter((name) => !known.has(name));
  if (unknown.length > 0) throw new TypeError(`Invalid evaluation.safeTools: no tool named ${unknown.join(', ')} is registered on this worker`);
  const client = safeTools.filter((name) => tools.find((tool) => tool.name === name)?.kind === 'client');
  if (client.length > 0) throw new TypeError(`Invalid evaluation.safeTools: ${client.join(', ')} is a client tool; a client tool cannot run in evaluation`);
  if (maxConcurrentActivities !== undefined && !(Number.isInteger(maxConcurrentActivities) && maxConcurrentActivities >= 1)) {
    throw new TypeError(`Invalid evaluation.maxConcurrentActivities: must be a whole number of at least 1 (got ${String(maxConcurrentActivities)})`);
  }
  return { taskQueue, safeTools, graders, ...(maxConcurrentActivities !== undefined ? { maxConcurrentActivities } : {}) };
}

/** Wraps turnpike's activities, as `TurnpikePlugin` registered them, for evaluation turns; adds the run's own. */
export class EvaluationActivitiesPlugin implements WorkerPlugin {
  readonly name = 'turnpike-evaluation-activities';
  private readonly cache = new RecordedCallsCache();

  constructor(
    private readonly safeTools: ReadonlySet<string>,
    private readonly graders: Readonly<Record<string, Grader>> = {},
  ) {}

  configureWorker(options: WorkerOptions): WorkerOptions {
    const base = options.activities as Partial<TurnpikeActivities> | undefined;
    if (!base?.callModel || !base.executeTool) throw new Error('EvaluationActivitiesPlugin: add it after TurnpikePlugin, whose activities it wraps');
    const { callModel, executeTool } = base as TurnpikeActivities;
    const recorded = () => {
      const context = Context.current();
      return this.cache.of(context.client, context.info.workflowExecution?.workflowId ?? '');
    };
    return {
      ...options,
      activities: {
        ...options.activities,
        // A model grader's step goes to the worker's own model step, not the wrapped one below.
        ...createEvaluationActivities({ graders: this.graders, callModel }),
        callModel: async (request: ModelStepRequest) => {
          const result = await callModel(request);
          if (!result.dispositions) return result;
          const records = await recorded();
          const calls = result.message.content.filter((part): part is ToolCallPart => part.type === 'tool-call');
          return { ...result, dispositions: result.dispositions.map((disposition, index) => disposition && evaluationDisposition(disposition, calls[index].toolName, records)) };
        },
        executeTool: async (input: ExecuteToolInput) => evaluationToolResult(input, await recorded(), this.safeTools, () => executeTool(input)),
      },
    };
  }
}

/** Runs the evaluation Worker beside the turns' Worker, as the model capacity's Worker is run. */
export class EvaluationWorkerRunner implements WorkerPlugin {
  readonly name = 'turnpike-evaluation';
  private readonly together: ModelCapacityRunner;

  constructor(readonly evaluationWorker: Worker) {
    this.together = new ModelCapacityRunner(evaluationWorker);
  }

  runWorker(worker: Worker, next: (w: Worker) => Promise<void>): Promise<void> {
    return this.together.runWorker(worker, next);
  }
}

/** The evaluation Worker: turnpike's workflows and (wrapped) activities on the evaluation queue. */
export async function createEvaluationWorker(settings: {
  connection: NativeConnection;
  namespace: string;
  evaluation: CheckedEvaluation;
  pluginOptions: TurnpikePluginOptions;
  workflowBundle: { code: string } | { codePath: string };
  shutdownGraceTime: string;
  maxCachedWorkflows: number;
}): Promise<Worker> {
  const { evaluation } = settings;
  return TemporalWorker.create({
    connection: settings.connection,
    namespace: settings.namespace,
    taskQueue: evaluation.taskQueue,
    workflowBundle: settings.workflowBundle,
    maxCachedWorkflows: settings.maxCachedWorkflows,
    shutdownGraceTime: settings.shutdownGraceTime,
    ...(evaluation.maxConcurrentActivities !== undefined ? { maxConcurrentActivityTaskExecutions: evaluation.maxConcurrentActivities } : {}),
    plugins: [new TurnpikePlugin(settings.pluginOptions), new EvaluationActivitiesPlugin(new Set(evaluation.safeTools), evaluation.graders)],
  });
}
