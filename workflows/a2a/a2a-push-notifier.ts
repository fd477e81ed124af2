/**
 * `a2aPushNotifier`: one per push notification config of an A2A task (workflow id
 * `<task id>/push/<config id>`), started by the API's `CreateTaskPushNotificationConfig` and
 * cancelled by its `DeleteTaskPushNotificationConfig`. The turn itself is not touched: its
 * commands are the same whether anyone is notified or not.
 *
 * It runs one activity, `deliverA2aPush` (activities/a2a-push/push-delivery.ts), which follows
 * the task by reading the turn and POSTs each change (a status, and at the end the answer and the
 * final status), signed, in order. Each attempt reads the turn once, delivers what is new and,
 * while the task is open, ends with a retryable failure whose `nextRetryDelay` is the next read
 * (1 s, doubling to 30 s while nothing changes): no worker slot is held between reads, and the
 * attempts enter no history. What was computed and not yet delivered is kept in the activity's
 * heartbeat details, so a receiver that is down is retried with backoff from the same
 * notification, and a worker that dies hands the rest to the next attempt on any worker.
 */
import * as wf from '@temporalio/workflow';
import type { A2aPushActivities, A2aPushConfig, A2aPushNotifierInput, A2aPushNotifierResult } from './a2a-push-types.js';

export * from './a2a-push-types.js';

/** The notifier's workflow type. */
export const A2A_PUSH_NOTIFIER_WORKFLOW = 'a2aPushNotifier';

/** The notifier's memo key: the config, so that listing a task's configs reads no workflow. */
export const A2A_PUSH_CONFIG_MEMO_KEY = 'turnpikeA2aPushConfig';

/** The config the notifier delivers to. */
export const a2aPushConfigQuery = wf.defineQuery<A2aPushConfig>('turnpikeA2aPushConfig');

/** The notifier's workflow id for a task's config. */
export function a2aPushNotifierId(taskId: string, configId: string): string {
  return `${taskId}/push/${configId}`;
}

/**
 * No attempt limit: each attempt ends with a retryable failure until the task's end is delivered,
 * and sets its own `nextRetryDelay` (the policy's intervals apply only to unexpected failures).
 * A receiver that is down is retried for as long as the notification's own limit allows
 * (push-delivery.ts); the heartbeat timeout hands a dead worker's attempt to another within 30 s.
 * An attempt lasts seconds (a read of at most 20 s, requests of at most 10 s each); one that
 * outlives `startToCloseTimeout` goes on from its last heartbeat in the next attempt.
 */
const delivery = wf.proxyActivities<A2aPushActivities>({
  startToCloseTimeout: '5m',
  heartbeatTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
});

/** Delivers a task's notifications to one config until the task ends; see the module's comment. */
export async function a2aPushNotifier(input: A2aPushNotifierInput): Promise<A2aPushNotifierResult> {
  const { config } = input;
  wf.setHandler(a2aPushConfigQuery, () => config);
  // The activity answers once, when the task's end is delivered: every attempt before ends in a retry.
  const { progress } = await delivery.deliverA2aPush({ config });
  return { delivered: progress.delivered, dropped: progress.dropped };
}
