/**
 * What the chaos turns' histories show: failed workflow tasks (which must be none: a restart may
 * time a task out, but no task may fail), timed-out ones, and the activities that were retried,
 * by type and by the failure of their last attempt before the one that finished.
 */
import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';

// A CommonJS module: Node's ESM loader sees only its default export.
const { EventType } = proto.temporal.api.enums.v1;

export interface HistoryReport {
  events: number;
  workflowTasksFailed: Array<{ workflowId: string; cause: string; message: string }>;
  workflowTasksTimedOut: number;
  /** Retried activities (final attempt > 1), by activity type. */
  retriedActivities: Record<string, number>;
  /** The last failures before a retried activity's final attempt, by message (numbers blanked), most frequent first. */
  retryCauses: string[];
}

export async function readHistories(client: Client, workflowIds: string[], concurrency = 20): Promise<HistoryReport> {
  const report: HistoryReport = { events: 0, workflowTasksFailed: [], workflowTasksTimedOut: 0, retriedActivities: {}, retryCauses: [] };
  const causes = new Map<string, number>();
  let next = 0;
  const readOne = async (workflowId: string) => {
    const history = await client.workflow.getHandle(workflowId).fetchHistory();
    const activityTypes = new Map<string, string>();
    for (const event of history.events ?? []) {
      report.events++;
      const id = String(event.eventId);
      if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED) {
        const attributes = event.workflowTaskFailedEventAttributes;
        report.workflowTasksFailed.push({ workflowId, cause: String(attributes?.cause), message: attributes?.failure?.message ?? '' });
      } else if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT) {
        report.workflowTasksTimedOut++;
      } else if (event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) {
        activityTypes.set(id, event.activityTaskScheduledEventAttributes?.activityType?.name ?? '?');
      } else if (event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED) {
        const attributes = event.activityTaskStartedEventAttributes;
        if ((attributes?.attempt ?? 1) <= 1) continue;
        const type = activityTypes.get(String(attributes?.scheduledEventId)) ?? '?';
        report.retriedActivities[type] = (report.retriedActivities[type] ?? 0) + 1;
        const cause = `${type}: ${(attributes?.lastFailure?.message ?? 'no failure recorded').replace(/\d+/g, 'N').slice(0, 120)}`;
        causes.set(cause, (causes.get(cause) ?? 0) + 1);
      }
    }
  };
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < workflowIds.length) await readOne(workflowIds[next++]!);
    }),
  );
  report.retryCauses = [...causes].sort((a, b) => b[1] - a[1]).map(([cause, count]) => `${count}× ${cause}`);
  return report;
}
