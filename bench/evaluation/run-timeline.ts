/**
 * Where an evaluation run's lanes spend their time, from the run's own histories: each lane takes
 * a turn through `prepareEvaluationTurn` (scheduled → completed), the evaluation turn as a child
 * (initiated → completed) and `compareEvaluationTurn` (scheduled → completed), one after the
 * other. The means of the three, against a lane's time per turn (concurrency × wall time ÷ N),
 * leave the workflow tasks between them.
 */
import proto from '@temporalio/proto';
import { round } from '../stats.js';

const { EventType } = proto.temporal.api.enums.v1;
type HistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;

export interface LaneTimeline {
  /** Mean ms per turn. */
  prepareMs: number;
  childMs: number;
  compareMs: number;
}

const ms = (event: HistoryEvent) => Number(event.eventTime?.seconds ?? 0) * 1000 + (event.eventTime?.nanos ?? 0) / 1e6;

export function laneTimeline(histories: readonly (readonly HistoryEvent[])[]): LaneTimeline {
  const spans: Record<keyof LaneTimeline, number[]> = { prepareMs: [], childMs: [], compareMs: [] };
  for (const events of histories) {
    const byId = new Map(events.map((event) => [String(event.eventId), event]));
    for (const event of events) {
      if (event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED) {
        const scheduled = byId.get(String(event.activityTaskCompletedEventAttributes?.scheduledEventId));
        const type = scheduled?.activityTaskScheduledEventAttributes?.activityType?.name;
        if (scheduled && type === 'prepareEvaluationTurn') spans.prepareMs.push(ms(event) - ms(scheduled));
        if (scheduled && type === 'compareEvaluationTurn') spans.compareMs.push(ms(event) - ms(scheduled));
      } else if (event.eventType === EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED) {
        const initiated = byId.get(String(event.childWorkflowExecutionCompletedEventAttributes?.initiatedEventId));
        if (initiated) spans.childMs.push(ms(event) - ms(initiated));
      }
    }
  }
  const mean = (values: number[]) => round(values.reduce((sum, value) => sum + value, 0) / Math.max(1, values.length), 0);
  return { prepareMs: mean(spans.prepareMs), childMs: mean(spans.childMs), compareMs: mean(spans.compareMs) };
}
