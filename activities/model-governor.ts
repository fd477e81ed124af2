/**
 * The model governor's activities (workflows/capacity/model-governor.ts): read, pause and restore
 * a model queue's rate on the server with the worker's own client. They run on the turns' queue,
 * never on the model queue they pause.
 */
import { Context } from '@temporalio/activity';
import type { temporal } from '@temporalio/proto';
import { GOVERNOR_REASON_PREFIX, type ModelGovernorActivities, type ModelQueueRate, type ModelQueueRef, type PauseModelQueueInput, type RestoreModelQueueRateInput } from '../workflows/capacity/governor-types.js';

/** `TASK_QUEUE_TYPE_ACTIVITY`: the package's enums are CommonJS, which an ES module cannot import by name. */
const ACTIVITY = 2 as temporal.api.enums.v1.TaskQueueType;

function service() {
  const { client } = Context.current();
  return { workflowService: client.workflowService, namespace: client.options.namespace, identity: client.options.identity };
}

/** The queue's rate as the server holds it (`temporal task-queue config get`). */
export async function readModelQueueRate({ modelQueue }: ModelQueueRef): Promise<ModelQueueRate> {
  const { workflowService, namespace } = service();
  const described = await workflowService.describeTaskQueue({ namespace, taskQueue: { name: modelQueue }, taskQueueType: ACTIVITY, reportConfig: true });
  const limit = described.config?.queueRateLimit;
  const rate = limit?.rateLimit;
  return { requestsPerSecond: rate ? (rate.requestsPerSecond ?? 0) : null, reason: limit?.metadata?.reason || null };
}

async function update(modelQueue: string, requestsPerSecond: number | null, reason: string): Promise<void> {
  const { workflowService, namespace, identity } = service();
  await workflowService.updateTaskQueueConfig({
    namespace,
    identity: identity ?? 'turnpike',
    taskQueue: modelQueue,
    taskQueueType: ACTIVITY,
    // No `rateLimit` removes the server's setting, and the workers' own rate applies again.
    updateQueueRateLimit: requestsPerSecond === null ? { reason } : { rateLimit: { requestsPerSecond }, reason },
  });
}

/** Rate 0: the server dispatches none of the queue's tasks, to any worker, until it is restored. */
export async function pauseModelQueue({ modelQueue, reason }: PauseModelQueueInput): Promise<void> {
  await update(modelQueue, 0, reason);
}

/** The rate read before the pause, or none; left alone if an operator set another since (its reason is not the governor's). */
export async function restoreModelQueueRate({ modelQueue, previous }: RestoreModelQueueRateInput): Promise<void> {
  const current = await readModelQueueRate({ modelQueue });
  if (!current.reason?.startsWith(GOVERNOR_REASON_PREFIX)) {
    Context.current().log.info('model queue rate changed by someone else during a provider pause; left as it is', { modelQueue, current });
    return;
  }
  await update(modelQueue, previous?.requestsPerSecond ?? null, previous?.reason ?? '');
}

export const modelGovernorActivities: ModelGovernorActivities = { readModelQueueRate, pauseModelQueue, restoreModelQueueRate };
