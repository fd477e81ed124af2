/**
 * Where a one-step turn's time went, from its history's event times (the server's clock): how long
 * its first workflow task waited for a worker, its model call waited in its queue, the call ran
 * (with any wait for a token booking in the worker, and the provider), and its last workflow task
 * waited. For the fleet figure's B turns under A's burst (scenarios/fleet.ts).
 */
import proto from '@temporalio/proto';
import { percentile, round } from '../stats.js';

const { EventType } = proto.temporal.api.enums.v1;
type HistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;

export interface TurnPhases {
  firstTaskWaitMs: number;
  modelQueueWaitMs: number;
  modelCallMs: number;
  lastTaskWaitMs: number;
}

const timeOf = (event: HistoryEvent | undefined): number => {
  const time = event?.eventTime;
  return time ? Number(time.seconds ?? 0) * 1_000 + Math.floor((time.nanos ?? 0) / 1e6) : NaN;
};

/** The phases of a turn with one model call; undefined when its history has another shape. */
export function phasesOf(events: HistoryEvent[]): TurnPhases | undefined {
  const of = (type: number) => events.filter((event) => event.eventType === type);
  const scheduled = of(EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED);
  const started = of(EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED);
  const model = events.find((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel');
  const modelStarted = events.find((event) => event.activityTaskStartedEventAttributes && String(event.activityTaskStartedEventAttributes.scheduledEventId) === String(model?.eventId));
  const modelEnded = events.find((event) => event.activityTaskCompletedEventAttributes && String(event.activityTaskCompletedEventAttributes.scheduledEventId) === String(model?.eventId));
  if (!model || !modelStarted || !modelEnded || scheduled.length < 2 || started.length < 2) return undefined;
  // The workflow task the call's result scheduled: the first one after it.
  const last = scheduled.findIndex((event) => Number(event.eventId) > Number(modelEnded.eventId));
  if (last < 0 || !started[last]) return undefined;
  return {
    firstTaskWaitMs: timeOf(started[0]) - timeOf(scheduled[0]),
    modelQueueWaitMs: timeOf(modelStarted) - timeOf(model),
    modelCallMs: timeOf(modelEnded) - timeOf(modelStarted),
    lastTaskWaitMs: timeOf(started[last]) - timeOf(scheduled[last]),
  };
}

/** p50 and p95 of each phase over `phases`. */
export function phaseSummary(phases: TurnPhases[]): Record<keyof TurnPhases, { p50: number; p95: number }> {
  const summary = (pick: (phase: TurnPhases) => number) => {
    const sorted = phases.map(pick).sort((a, b) => a - b);
    return { p50: round(percentile(sorted, 50), 0), p95: round(percentile(sorted, 95), 0) };
  };
  return {
    firstTaskWaitMs: summary((phase) => phase.firstTaskWaitMs),
    modelQueueWaitMs: summary((phase) => phase.modelQueueWaitMs),
    modelCallMs: summary((phase) => phase.modelCallMs),
    lastTaskWaitMs: summary((phase) => phase.lastTaskWaitMs),
  };
}
