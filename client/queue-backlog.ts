/**
 * What waits on a task queue in Temporal's matching service: the workflow tasks and activity tasks
 * that no worker has taken yet, as the server counts them (`DescribeTaskQueue` with `reportStats`,
 * one request per task type), and how many workers polled the queue lately.
 *
 * The operator's check before turning fairness on for a live queue on server 1.29.1: what waits
 * there at the moment of the switch stays in the old table, and nothing dispatches it until
 * fairness is off again (docs/tenants-and-capacity.md, "Caution on server 1.29.1"). A turn parked
 * on a person waits on an update or a timer, not on a task, so a queue whose workers keep up has
 * none. `turnpike queue backlog` prints this for the turns' queue and the model queue, and exits 5
 * when anything waits.
 *
 * The counts are the server's approximations: it counts tasks written to the queue's backlog, not
 * those handed straight to a waiting poller, and not the tasks of the workers' sticky queues (a
 * cached turn's next workflow task; it falls back to this queue after a few seconds). They lag a
 * dispatch by moments. The server answers any name: a queue nobody ever used has no backlog and no
 * pollers, so `pollers: 0` beside a 0 backlog is the sign of a misspelled name (or of stopped workers).
 *
 * Default mode, not the deprecated enhanced mode (`apiMode`, `taskQueueTypes`): server 1.29.1
 * answers `stats` in default mode for one task type per request.
 */
import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';

/** The server's enums, by number: `@temporalio/proto` is CommonJS, which an ES module cannot import by name. */
const WORKFLOW = 1 as temporal.api.enums.v1.TaskQueueType;
const ACTIVITY = 2 as temporal.api.enums.v1.TaskQueueType;
const NORMAL = 1 as temporal.api.enums.v1.TaskQueueKind;

/** What waits on one task queue. */
export interface TaskQueueBacklog {
  /** The queue read, as given. */
  taskQueue: string;
  /** Workflow tasks waiting for a worker (a turn's first task, or one that waits while no worker polls). */
  workflowTasks: number;
  /** Activity tasks waiting for a worker (tool calls, model calls waiting for capacity on a model queue). */
  activityTasks: number;
  /** How long the oldest waiting task has waited, in milliseconds; 0 when none waits. */
  oldestTaskAgeMs: number;
  /** Workers (by identity) that polled the queue for either task type lately; 0 for a queue nobody polls. */
  pollers: number;
}

/**
 * The backlog of `taskQueue` on the client's namespace: two reads of the server, no Temporal
 * action. An empty name is refused (`TypeError`) before anything is sent; the server's refusal of
 * any other name (over its length limit) is its error, as it gives it.
 */
export async function taskQueueBacklog(client: Client, taskQueue: string): Promise<TaskQueueBacklog> {
  if (typeof taskQueue !== 'string' || taskQueue.trim() === '') {
    throw new TypeError(`Invalid task queue: a task queue name must be a non-empty string (got ${JSON.stringify(taskQueue)})`);
  }
  const [workflow, activity] = await Promise.all([WORKFLOW, ACTIVITY].map((taskQueueType) => describe(client, taskQueue, taskQueueType)));
  const identities = new Set([...workflow.pollers, ...activity.pollers]);
  return {
    taskQueue,
    workflowTasks: workflow.backlog,
    activityTasks: activity.backlog,
    oldestTaskAgeMs: Math.max(workflow.ageMs, activity.ageMs),
    pollers: identities.size,
  };
}

async function describe(client: Client, name: string, taskQueueType: temporal.api.enums.v1.TaskQueueType) {
  const described = await client.workflowService.describeTaskQueue({
    namespace: client.options.namespace,
    taskQueue: { name, kind: NORMAL },
    taskQueueType,
    reportStats: true,
  });
  const stats = described.stats;
  const age = stats?.approximateBacklogAge;
  return {
    backlog: Number(stats?.approximateBacklogCount ?? 0),
    ageMs: age ? Number(age.seconds ?? 0) * 1_000 + Math.floor((age.nanos ?? 0) / 1e6) : 0,
    pollers: (described.pollers ?? []).map((poller) => poller.identity ?? ''),
  };
}
