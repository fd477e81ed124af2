/**
 * Where a one-step turn's time went, for the fleet figure's B turns under A's burst
 * (scenarios/fleet.ts): its client's start and result times and its history's event times (the
 * server's clock, on the same machine) cut the turn into consecutive segments that add up to the
 * latency the client measured:
 *   start (the start request, until the server has started the workflow) → the first workflow
 *   task's wait for a worker → its run → the model call's wait in its queue → the call's time in
 *   its worker until its request reached the provider (a wait for a token booking is here) → the
 *   provider and the call's completion → the next workflow task's wait →
 *   the rest of the turn's workflow tasks until it completed → the result's way to the client.
 * Each segment's p50 and p95 say how it varies; the mean of each over the slowest 5% of turns says
 * where the p95 itself went.
 */
import proto from '@temporalio/proto';
import { percentile, round } from '../stats.js';

const { EventType } = proto.temporal.api.enums.v1;
type HistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;

export interface TurnPhases {
  startMs: number;
  firstTaskWaitMs: number;
  firstTaskRunMs: number;
  modelQueueWaitMs: number;
  beforeRequestMs: number;
  modelCallMs: number;
  lastTaskWaitMs: number;
  finishMs: number;
  resultMs: number;
}

export const PHASES: ReadonlyArray<keyof TurnPhases> = ['startMs', 'firstTaskWaitMs', 'firstTaskRunMs', 'modelQueueWaitMs', 'beforeRequestMs', 'modelCallMs', 'lastTaskWaitMs', 'finishMs', 'resultMs'];

/** When the client asked for the turn, when its model request reached the provider and when the client had its result (`Date.now()`). */
export interface ClientTimes {
  startedAt: number;
  requestAt: number;
  endedAt: number;
}

const timeOf = (event: HistoryEvent | undefined): number => {
  const time = event?.eventTime;
  return time ? Number(time.seconds ?? 0) * 1_000 + Math.floor((time.nanos ?? 0) / 1e6) : NaN;
};

/** The segments of a turn with one model call; undefined when its history has another shape. */
export function phasesOf(events: HistoryEvent[], client: ClientTimes): TurnPhases | undefined {
  const of = (type: number) => events.filter((event) => event.eventType === type);
  const executionStarted = of(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED)[0];
  const executionCompleted = of(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED)[0];
  const scheduled = of(EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED);
  const started = of(EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED);
  const completed = of(EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
  const model = events.find((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel');
  const modelStarted = events.find((event) => event.activityTaskStartedEventAttributes && String(event.activityTaskStartedEventAttributes.scheduledEventId) === String(model?.eventId));
  const modelEnded = events.find((event) => event.activityTaskCompletedEventAttributes && String(event.activityTaskCompletedEventAttributes.scheduledEventId) === String(model?.eventId));
  if (!executionStarted || !executionCompleted || !model || !modelStarted || !modelEnded || scheduled.length < 2 || started.length < 2 || completed.length < 1) return undefined;
  // The workflow task the call's result scheduled: the first one after it.
  const last = scheduled.findIndex((event) => Number(event.eventId) > Number(modelEnded.eventId));
  if (last < 0 || !started[last]) return undefined;
  return {
    startMs: timeOf(executionStarted) - client.startedAt,
    firstTaskWaitMs: timeOf(started[0]) - timeOf(executionStarted),
    firstTaskRunMs: timeOf(completed[0]) - timeOf(started[0]),
    modelQueueWaitMs: timeOf(modelStarted) - timeOf(completed[0]),
    beforeRequestMs: client.requestAt - timeOf(modelStarted),
    modelCallMs: timeOf(modelEnded) - client.requestAt,
    lastTaskWaitMs: timeOf(started[last]) - timeOf(modelEnded),
    finishMs: timeOf(executionCompleted) - timeOf(started[last]),
    resultMs: client.endedAt - timeOf(executionCompleted),
  };
}

export type PhaseSummary = Record<keyof TurnPhases, { p50: number; p95: number; slowestMean: number }>;

/** Each segment's p50 and p95 over `phases`, and its mean over the slowest 5% of the turns (at least one). */
export function phaseSummary(phases: TurnPhases[]): PhaseSummary {
  const total = (phase: TurnPhases) => PHASES.reduce((sum, name) => sum + phase[name], 0);
  const slowest = [...phases].sort((a, b) => total(b) - total(a)).slice(0, Math.max(1, Math.ceil(phases.length * 0.05)));
  const summary = (name: keyof TurnPhases) => {
    const sorted = phases.map((phase) => phase[name]).sort((a, b) => a - b);
    const slowestMean = slowest.reduce((sum, phase) => sum + phase[name], 0) / slowest.length;
    return { p50: round(percentile(sorted, 50), 0), p95: round(percentile(sorted, 95), 0), slowestMean: round(slowestMean, 0) };
  };
  return Object.fromEntries(PHASES.map((name) => [name, summary(name)])) as PhaseSummary;
}
