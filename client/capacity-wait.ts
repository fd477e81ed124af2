/**
 * Whether a turn's model step is waiting for model capacity, and since when: read from the
 * turn's workflow description (`DescribeWorkflowExecution`), not from the workflow. The workflow
 * cannot tell a scheduled activity that waits in its queue from one that runs, but the server can:
 * each pending activity has a state (`SCHEDULED` until a worker takes it, then `STARTED`), the
 * time the current attempt was scheduled and, from its options, its task queue.
 *
 * A model step waits for capacity when its `callModel` activity is `SCHEDULED` on a task queue
 * other than the turn's own (the model queue, `TurnpikeClientOptions.modelTaskQueue`) and its
 * attempt is due: a retry still in its backoff waits for its time, not for capacity. On the turn's
 * own queue a scheduled step waits for a worker, which is not a limit of capacity.
 *
 * Cost: one describe per read, no worker involved and no Temporal action (a read of the server).
 * It is kept off the paths that poll: `turnState` stays a query, and the event streams never
 * describe; `TurnpikeClient.waitingForCapacity`, `GET /api/turns/:id` and `turnpike show` read it.
 */
import type { WorkflowExecutionDescription } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';

/** The model activity's type, as the turn schedules it (workflows/turn/agent-turn.ts). */
export const MODEL_ACTIVITY_TYPE = 'callModel';

/** A model step that waits in the model queue for the queue's rate to admit it. */
export interface WaitingForCapacity {
  /** When the waiting attempt was scheduled (ISO 8601, the server's clock). */
  since: string;
  /** The model queue it waits in. */
  taskQueue: string;
  /** The attempt that waits: above 1 when an earlier attempt failed (e.g. a provider's 429). */
  attempt: number;
}

type PendingActivity = temporal.api.workflow.v1.IPendingActivityInfo;
/**
 * `PENDING_ACTIVITY_STATE_SCHEDULED`, as the server's enum numbers it; a type import only, since
 * `@temporalio/proto` is CommonJS and has no named exports for Node's ESM loader.
 */
const SCHEDULED: temporal.api.enums.v1.PendingActivityState = 1;

/**
 * The waiting model step of a described turn, or undefined: none is pending, it runs, it is on the
 * turn's own queue, its retry is not due yet (against `now`), or the run has ended.
 */
export function capacityWaitOf(description: Pick<WorkflowExecutionDescription, 'raw' | 'taskQueue' | 'status'>, now = Date.now()): WaitingForCapacity | undefined {
  if (description.status.name !== 'RUNNING') return undefined;
  for (const activity of description.raw.pendingActivities ?? []) {
    const waiting = waitingModelStep(activity, description.taskQueue, now);
    if (waiting) return waiting;
  }
  return undefined;
}

function waitingModelStep(activity: PendingActivity, turnQueue: string, now: number): WaitingForCapacity | undefined {
  if (activity.activityType?.name !== MODEL_ACTIVITY_TYPE || activity.state !== SCHEDULED) return undefined;
  const taskQueue = activity.activityOptions?.taskQueue?.name;
  if (!taskQueue || taskQueue === turnQueue) return undefined;
  const scheduledMs = millisOf(activity.scheduledTime);
  if (scheduledMs === undefined) return undefined;
  // A retry's next attempt is scheduled at the end of its backoff; until then it is not queued.
  const nextAttemptMs = millisOf(activity.nextAttemptScheduleTime);
  const dueMs = Math.max(scheduledMs, nextAttemptMs ?? 0);
  if (dueMs > now) return undefined;
  return { since: new Date(dueMs).toISOString(), taskQueue, attempt: activity.attempt ?? 1 };
}

function millisOf(timestamp: { seconds?: unknown; nanos?: number | null } | null | undefined): number | undefined {
  if (!timestamp || timestamp.seconds === undefined || timestamp.seconds === null) return undefined;
  return Number(timestamp.seconds) * 1_000 + Math.floor((timestamp.nanos ?? 0) / 1e6);
}
