/**
 * `modelGovernor`: one per model task queue (workflow id `turnpike-governor-<queue>`), it pauses
 * the queue for the whole fleet while a provider says so, and restores it after.
 *
 * A model call whose provider answers a 429 with `retry-after`, or says its remaining requests or
 * tokens are used up until a reset (activities/providers/rate-limit-headers.ts), signals it "slow
 * down until T" (worker/provider-headers.ts, with signal-with-start). The governor then, in
 * activities on the turns' queue (never the paused one):
 *
 * 1. reads the queue's rate as the server holds it (`describeTaskQueue`, the operator's setting or none);
 * 2. sets the queue's rate to 0 (`updateTaskQueueConfig`): the server dispatches none of its
 *    tasks to any worker, and calls wait in the queue;
 * 3. waits on a durable timer until T, extended by later signals that ask for longer, with no
 *    further change of the config;
 * 4. puts the rate it read back (or clears it), unless an operator changed it meanwhile.
 *
 * A worker that dies meanwhile changes nothing: the timer is the server's, and any worker of the
 * turns' queue restores the rate. It ends after {@link IDLE_MS} without a signal (the next one
 * starts it again) and continues as new long before Temporal's limits on a run's history.
 */
import * as wf from '@temporalio/workflow';
import { GOVERNOR_REASON_PREFIX, type ModelGovernorActivities, type ModelGovernorInput, type ModelGovernorState, type ModelQueueRate, type ModelSlowDown } from './governor-types.js';

export * from './governor-types.js';

/** The governor's workflow type. */
export const MODEL_GOVERNOR_WORKFLOW = 'modelGovernor';

/** "Slow down until T": sent by model calls whose provider says so. A signal, so senders never wait for the governor. */
export const modelSlowDownSignal = wf.defineSignal<[ModelSlowDown]>('turnpikeModelSlowDown');

/** What the governor is doing, for operators and tests. */
export const modelGovernorStateQuery = wf.defineQuery<ModelGovernorState>('turnpikeModelGovernorState');

/** The governor's workflow id for a model queue. */
export function modelGovernorId(modelQueue: string): string {
  return `turnpike-governor-${modelQueue}`;
}

/** A governor with no pause asked for this long ends; the next signal-with-start begins a new run. */
export const IDLE_MS = 10 * 60_000;

/** Continue as new beyond this many events or signals (Temporal's limits: 51,200 events, 10,000 signals a run). */
const MAX_EVENTS = 10_000;
const MAX_SIGNALS = 2_000;

/** Pauses one model queue while its providers say so, and restores it; see the module's comment. */
export async function modelGovernor(input: ModelGovernorInput): Promise<void> {
  const { modelQueue } = input;
  let until = input.pausedUntilMs ?? 0;
  let reason = input.reason ?? '';
  let paused = input.paused ?? false;
  let previous: ModelQueueRate | null = input.previous ?? null;
  let signals = 0;
  wf.setHandler(modelSlowDownSignal, (slowDown) => {
    signals++;
    if (Number.isFinite(slowDown.untilMs) && slowDown.untilMs > until) {
      until = slowDown.untilMs;
      reason = String(slowDown.reason ?? '').slice(0, 200);
    }
  });
  wf.setHandler(modelGovernorStateQuery, () => ({ pausedUntilMs: paused ? until : null, previous, reason: paused ? reason : null, signals }));
  const activities = wf.proxyActivities<ModelGovernorActivities>({
    startToCloseTimeout: '30s',
    retry: { initialInterval: '1s', maximumInterval: '10s' },
  });
  const tooLong = () => wf.workflowInfo().historyLength > MAX_EVENTS || wf.workflowInfo().continueAsNewSuggested || signals > MAX_SIGNALS;
  const carryOn = () => wf.makeContinueAsNewFunc<typeof modelGovernor>()({ modelQueue, pausedUntilMs: until, reason, paused, previous });

  for (;;) {
    if (!paused) {
      const asked = await wf.condition(() => until > Date.now() || tooLong(), IDLE_MS);
      if (!asked) return;
      if (until <= Date.now()) return carryOn();
      // Read before setting: a retried set never mistakes the pause for the setting to restore.
      previous = await activities.readModelQueueRate({ modelQueue });
      await activities.pauseModelQueue({ modelQueue, reason: pauseReason(until, reason) });
      paused = true;
    }
    // Until the latest time asked for; a signal asking for longer moves the timer, not the config.
    for (let target = until; Date.now() < target; target = until) {
      await wf.condition(() => until !== target || tooLong(), target - Date.now());
      if (tooLong()) return carryOn();
    }
    await activities.restoreModelQueueRate({ modelQueue, previous });
    paused = false;
    previous = null;
    if (tooLong()) return carryOn();
  }
}

/** The reason the server keeps with the pause: the governor's mark, until when, and the provider's header. */
function pauseReason(until: number, reason: string): string {
  return `${GOVERNOR_REASON_PREFIX}, paused until ${new Date(until).toISOString()} (${reason})`.slice(0, 250);
}
