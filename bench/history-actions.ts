/**
 * Temporal actions in a workflow history, as Temporal Cloud bills them: shared by the figures
 * that report actions per turn (the cluster's parked turns, the evaluation run's turns).
 */
import proto from '@temporalio/proto';

const { EventType } = proto.temporal.api.enums.v1;

/**
 * History events that are billable actions by Temporal Cloud's definition: the workflow's start,
 * each activity scheduled, timer, search-attribute upsert or memo change, marker (side effects,
 * local activities, version markers), signal, accepted update and child started. Retried
 * activity attempts (also actions) are not in a history's events; a figure that counts actions
 * from histories says whether any retried.
 */
export const ACTION_EVENTS = new Set<number>([
  EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
  EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
  EventType.EVENT_TYPE_TIMER_STARTED,
  EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES,
  EventType.EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED,
  EventType.EVENT_TYPE_MARKER_RECORDED,
  EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED,
  EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED,
  EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED,
]);

type HistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;

/** A history's event type without its `EVENT_TYPE_` prefix. */
export const eventTypeName = (event: HistoryEvent): string => EventType[event.eventType ?? 0]?.replace('EVENT_TYPE_', '') ?? String(event.eventType);

/** The actions among a history's events, in all and by event type. */
export function actionsOf(events: readonly HistoryEvent[]): { actions: number; types: Record<string, number> } {
  const types: Record<string, number> = {};
  let actions = 0;
  for (const event of events) {
    if (!ACTION_EVENTS.has(event.eventType ?? 0)) continue;
    actions++;
    const type = eventTypeName(event);
    types[type] = (types[type] ?? 0) + 1;
  }
  return { actions, types };
}

/**
 * Activity attempts beyond the first in a history (each one an action that its events do not
 * show): from the `attempt` of each activity's started event.
 */
export function activityRetriesOf(events: readonly HistoryEvent[]): number {
  let retries = 0;
  for (const event of events) {
    const started = event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED ? event.activityTaskStartedEventAttributes : undefined;
    if (started && (started.attempt ?? 1) > 1) retries += (started.attempt ?? 1) - 1;
  }
  return retries;
}
