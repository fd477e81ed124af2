/**
 * Model capacity shared by the fleet: the model calls of turns started with a `modelTaskQueue`
 * (a `TurnpikeClient` option) are scheduled on that queue, and `createWorker({ modelCapacity })`
 * runs a second Worker in the same process that polls it with turnpike's activities, beside the
 * turn's own Worker.
 *
 * The queue's rate (`requestsPerSecond`) is Temporal's `maxTaskQueueActivitiesPerSecond`: the
 * matching service dispatches no more of the queue's tasks per second than that, across every
 * worker polling it, so it holds for the fleet, not per process. Every worker of the queue must
 * set the same value (the last poll's wins). A call over the rate waits as a queued activity task
 * (no retry loop against 429s); with fairness on, each tenant (the task's fairness key) gets its
 * share of it. `maxConcurrentCalls` bounds the calls this process runs at once.
 * docs/tenants-and-capacity.md, "Model capacity shared by the fleet".
 */
import type { Worker, WorkerPlugin } from '@temporalio/worker';
import { checkedFollowProviderHeaders, type FollowProviderHeaders } from './provider-headers.js';
import { PostgresModelTokenCounter } from '../activities/model-tokens/postgres-token-counter.js';
import { checkedModelTokenLimit, type ModelTokenLimit } from '../activities/model-tokens/token-gate.js';

export interface ModelCapacityOptions {
  /** The task queue of model calls. Default: the turns' task queue with `-models` after it. */
  taskQueue?: string;
  /**
   * Model calls the queue dispatches per second, across every worker that polls it (Temporal's
   * `maxTaskQueueActivitiesPerSecond`, enforced by the server). Give every worker the same value.
   * Default: no limit.
   */
  requestsPerSecond?: number;
  /** Model calls this process runs at once (the model Worker's `maxConcurrentActivityTaskExecutions`). */
  maxConcurrentCalls?: number;
  /**
   * Pause the queue for the whole fleet while a provider says so: a 429's `retry-after`, or its
   * remaining requests or tokens (`x-ratelimit-remaining-*`, `anthropic-ratelimit-*-remaining`)
   * at or below the thresholds (default 0) until their reset. The queue's governor workflow sets
   * its rate to 0 on the server until then, and restores it (worker/provider-headers.ts). Covers
   * turnpike's `openai`, `openai-responses` and `anthropic` providers; AI SDK models whose
   * provider package is given `providerObservedFetch`. Default: off.
   */
  followProviderHeaders?: FollowProviderHeaders;
  /**
   * Tokens per minute for the queue's calls, held across the fleet in a counter every worker
   * shares (`PostgresModelTokenCounter`): each call books the tokens it is expected to use and
   * waits until they fit (activities/model-tokens/). Give every worker of the queue the same
   * limit and counter. Default: none.
   */
  tokenLimit?: ModelTokenLimit;
}

/** The options checked, with the queue's name: a bad one throws a clear TypeError before anything polls. */
export function checkedModelCapacity(options: ModelCapacityOptions, turnTaskQueue: string): Required<Pick<ModelCapacityOptions, 'taskQueue'>> & ModelCapacityOptions {
  if (options === null || typeof options !== 'object') throw new TypeError('Invalid modelCapacity: expected an object { taskQueue?, requestsPerSecond?, maxConcurrentCalls? }');
  const { taskQueue = `${turnTaskQueue}-models`, requestsPerSecond, maxConcurrentCalls, followProviderHeaders, tokenLimit } = options;
  const thresholds = checkedFollowProviderHeaders(followProviderHeaders);
  if (tokenLimit !== undefined) checkedModelTokenLimit(tokenLimit);
  if (typeof taskQueue !== 'string' || taskQueue.trim() === '') {
    throw new TypeError(`Invalid modelCapacity.taskQueue: a task queue name must be a non-empty string (got ${JSON.stringify(taskQueue)})`);
  }
  if (taskQueue === turnTaskQueue) {
    throw new TypeError(`Invalid modelCapacity.taskQueue: "${taskQueue}" is the turns' own task queue; model calls need a queue of their own for its rate to apply to them alone`);
  }
  if (requestsPerSecond !== undefined && !(typeof requestsPerSecond === 'number' && Number.isFinite(requestsPerSecond) && requestsPerSecond > 0)) {
    throw new TypeError(`Invalid modelCapacity.requestsPerSecond: must be a finite number above 0 (got ${String(requestsPerSecond)})`);
  }
  if (maxConcurrentCalls !== undefined && !(Number.isInteger(maxConcurrentCalls) && maxConcurrentCalls >= 1)) {
    throw new TypeError(`Invalid modelCapacity.maxConcurrentCalls: must be a whole number of at least 1 (got ${String(maxConcurrentCalls)})`);
  }
  return {
    taskQueue,
    ...(requestsPerSecond !== undefined ? { requestsPerSecond } : {}),
    ...(maxConcurrentCalls !== undefined ? { maxConcurrentCalls } : {}),
    ...(thresholds !== undefined ? { followProviderHeaders: thresholds } : {}),
    ...(tokenLimit !== undefined ? { tokenLimit } : {}),
  };
}

/**
 * `modelCapacity` from the environment, for `runWorker`: `TURNPIKE_MODEL_TASK_QUEUE` (the queue;
 * the same variable tells `TurnpikeClient.connect` and `npm run api` to schedule model calls
 * there), `TURNPIKE_MODEL_REQUESTS_PER_SECOND`, `TURNPIKE_MODEL_MAX_CONCURRENT_CALLS` and
 * `TURNPIKE_MODEL_FOLLOW_PROVIDER_HEADERS` (`true` or `false`), and the token limit:
 * `TURNPIKE_MODEL_TOKENS_PER_MINUTE` with `TURNPIKE_MODEL_TOKENS_POSTGRES_URL` (the counter the
 * fleet shares), `TURNPIKE_MODEL_TOKEN_WINDOW_SECONDS`, `TURNPIKE_MODEL_EXPECTED_OUTPUT_TOKENS`,
 * `TURNPIKE_MODEL_TOKENS_INTERACTIVE_SHARE`. Undefined when none is set; a value that is not a number is refused with the variable's name.
 */
export function modelCapacityFromEnvironment(environment: NodeJS.ProcessEnv = process.env): ModelCapacityOptions | undefined {
  const number = (name: string): number | undefined => {
    const value = environment[name];
    if (value === undefined || value === '') return undefined;
    const parsed = Number(value);
    if (!Number.isFinite(parsed) || parsed <= 0) throw new TypeError(`${name} must be a number above 0 (got "${value}")`);
    return parsed;
  };
  const taskQueue = environment.TURNPIKE_MODEL_TASK_QUEUE || undefined;
  const requestsPerSecond = number('TURNPIKE_MODEL_REQUESTS_PER_SECOND');
  const maxConcurrentCalls = number('TURNPIKE_MODEL_MAX_CONCURRENT_CALLS');
  const follow = environment.TURNPIKE_MODEL_FOLLOW_PROVIDER_HEADERS || undefined;
  if (follow !== undefined && follow !== 'true' && follow !== 'false') throw new TypeError(`TURNPIKE_MODEL_FOLLOW_PROVIDER_HEADERS must be true or false (got "${follow}")`);
  const tokenLimit = tokenLimitFromEnvironment(environment, number);
  if (taskQueue === undefined && requestsPerSecond === undefined && maxConcurrentCalls === undefined && follow === undefined && tokenLimit === undefined) return undefined;
  return {
    ...(tokenLimit !== undefined ? { tokenLimit } : {}),
    ...(taskQueue !== undefined ? { taskQueue } : {}),
    ...(requestsPerSecond !== undefined ? { requestsPerSecond } : {}),
    ...(maxConcurrentCalls !== undefined ? { maxConcurrentCalls } : {}),
    ...(follow === 'true' ? { followProviderHeaders: true } : {}),
  };
}

/** The token limit's variables; the PostgreSQL URL is needed with a limit, since a fleet's limit needs a counter every worker shares. */
function tokenLimitFromEnvironment(environment: NodeJS.ProcessEnv, number: (name: string) => number | undefined): ModelTokenLimit | undefined {
  const tokensPerMinute = number('TURNPIKE_MODEL_TOKENS_PER_MINUTE');
  const windowSeconds = number('TURNPIKE_MODEL_TOKEN_WINDOW_SECONDS');
  const outputTokens = number('TURNPIKE_MODEL_EXPECTED_OUTPUT_TOKENS');
  const interactiveShare = number('TURNPIKE_MODEL_TOKENS_INTERACTIVE_SHARE');
  const url = environment.TURNPIKE_MODEL_TOKENS_POSTGRES_URL || undefined;
  if (tokensPerMinute === undefined) {
    if (windowSeconds !== undefined || outputTokens !== undefined || interactiveShare !== undefined || url !== undefined) {
      throw new TypeError('TURNPIKE_MODEL_TOKENS_PER_MINUTE is needed with TURNPIKE_MODEL_TOKEN_WINDOW_SECONDS, TURNPIKE_MODEL_EXPECTED_OUTPUT_TOKENS, TURNPIKE_MODEL_TOKENS_INTERACTIVE_SHARE or TURNPIKE_MODEL_TOKENS_POSTGRES_URL');
    }
    return undefined;
  }
  if (url === undefined) throw new TypeError('TURNPIKE_MODEL_TOKENS_POSTGRES_URL is needed with TURNPIKE_MODEL_TOKENS_PER_MINUTE: the PostgreSQL database in which every worker of the fleet counts tokens');
  const limit: ModelTokenLimit = {
    tokensPerMinute,
    counter: new PostgresModelTokenCounter({ connectionString: url }),
    ...(windowSeconds !== undefined ? { windowSeconds } : {}),
    ...(outputTokens !== undefined ? { outputTokens } : {}),
    ...(interactiveShare !== undefined ? { interactiveShare } : {}),
  };
  checkedModelTokenLimit(limit);
  return limit;
}

/**
 * Runs the model Worker while the turn's Worker runs: both start together, a shutdown of either
 * (SIGTERM, `worker.shutdown()`, a fatal error) shuts down the other, and `run()` of the turn's
 * Worker resolves once both have stopped (rejecting with the first failure).
 */
export class ModelCapacityRunner implements WorkerPlugin {
  readonly name = 'turnpike-model-capacity';

  constructor(readonly modelWorker: Worker) {}

  async runWorker(worker: Worker, next: (w: Worker) => Promise<void>): Promise<void> {
    const ended = new Set<Worker>();
    // A Worker still starting is shut down once it runs (unless its run has ended meanwhile).
    const stop = async (which: Worker) => {
      while (which.getState() === 'INITIALIZED' && !ended.has(which)) await new Promise((resolve) => setTimeout(resolve, 10));
      if (which.getState() === 'RUNNING') which.shutdown();
    };
    const runs = (which: Worker, run: Promise<void>, other: Worker) =>
      run.finally(async () => {
        ended.add(which);
        await stop(other);
      });
    const turns = runs(worker, next(worker), this.modelWorker);
    const model = runs(this.modelWorker, this.modelWorker.run(), worker);
    const [turnsEnded, modelEnded] = await Promise.allSettled([turns, model]);
    if (turnsEnded.status === 'rejected') throw turnsEnded.reason;
    if (modelEnded.status === 'rejected') throw modelEnded.reason;
  }
}
