/**
 * Following the providers' rate-limit headers (`modelCapacity.followProviderHeaders`): the model
 * Worker's calls watch every response their provider sends (activities/providers/observed-fetch.ts);
 * when one says to wait (a 429's `retry-after`, or remaining requests or tokens used up until a
 * reset: activities/providers/rate-limit-headers.ts), the process tells the queue's governor
 * (workflows/capacity/model-governor.ts) "slow down until T" with signal-with-start, and the
 * governor pauses the queue for the whole fleet on the server until then.
 *
 * Coalesced per process and queue: a window already reported is not reported again unless a
 * response asks for more than {@link COALESCE_MS} longer, so a burst of calls meeting the same
 * limit sends one signal, and the governor changes the queue's config once per pause.
 */
import { Context } from '@temporalio/activity';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { observingProviderResponses } from '../activities/providers/observed-fetch.js';
import { slowDownFrom, type ProviderSlowDown, type SlowDownThresholds } from '../activities/providers/rate-limit-headers.js';
import { MODEL_GOVERNOR_WORKFLOW, modelGovernorId, modelSlowDownSignal, type modelGovernor } from '../workflows/capacity/model-governor.js';

/** `true`, or the remaining counts at or below which the queue pauses (default 0 each). */
export type FollowProviderHeaders = boolean | SlowDownThresholds;

/** A later window is reported only if it ends this much later than the one already reported. */
export const COALESCE_MS = 1_000;

export interface ProviderHeadersTarget {
  /** The model queue the governor pauses. */
  modelQueue: string;
  /** Where the governor and its activities run: the turns' queue, polled by the same workers. */
  governorTaskQueue: string;
  thresholds: SlowDownThresholds;
}

/** The checked option: thresholds, or undefined when off. */
export function checkedFollowProviderHeaders(value: unknown): SlowDownThresholds | undefined {
  if (value === undefined || value === false) return undefined;
  if (value === true) return {};
  const invalid = () => new TypeError(`Invalid modelCapacity.followProviderHeaders: expected true, false or { requests?, tokens? } with whole numbers of at least 0 (got ${JSON.stringify(value)})`);
  if (value === null || typeof value !== 'object') throw invalid();
  const { requests, tokens, ...rest } = value as Record<string, unknown>;
  if (Object.keys(rest).length > 0) throw invalid();
  for (const count of [requests, tokens]) if (count !== undefined && !(Number.isInteger(count) && (count as number) >= 0)) throw invalid();
  return { ...(requests !== undefined ? { requests: requests as number } : {}), ...(tokens !== undefined ? { tokens: tokens as number } : {}) };
}

/** The model Worker's activity interceptor: each `callModel` runs watched, and reports what its provider says. */
export function providerHeadersInterceptor(target: ProviderHeadersTarget): ActivityInterceptorsFactory {
  let reportedUntil = 0;
  const report = (context: Context, slowDown: ProviderSlowDown) => {
    if (slowDown.untilMs <= reportedUntil + COALESCE_MS) return;
    const before = reportedUntil;
    reportedUntil = slowDown.untilMs;
    context.client.workflow
      .signalWithStart<typeof modelGovernor, [typeof slowDown]>(MODEL_GOVERNOR_WORKFLOW, {
        workflowId: modelGovernorId(target.modelQueue),
        taskQueue: target.governorTaskQueue,
        args: [{ modelQueue: target.modelQueue }],
        signal: modelSlowDownSignal,
        signalArgs: [slowDown],
      })
      .catch((error: unknown) => {
        // Not reported: the next response that says so tries again. The call itself goes on.
        if (reportedUntil === slowDown.untilMs) reportedUntil = before;
        context.log.warn('could not tell the model governor to slow down', { modelQueue: target.modelQueue, error: String(error) });
      });
  };
  return (context) => ({
    inbound: {
      execute: (input, next) =>
        context.info.activityType !== 'callModel'
          ? next(input)
          : observingProviderResponses((status, headers) => {
              const slowDown = slowDownFrom(status, headers, Date.now(), target.thresholds);
              if (slowDown) report(context, slowDown);
            }, () => next(input)),
    },
  });
}
