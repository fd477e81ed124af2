/**
 * `capacityWaitOf`: which pending activity of a described turn is a model step waiting for
 * capacity. The description's shape is the server's (`PendingActivityInfo`);
 * test/integration/capacity-visible.test.ts reads a real one from the dev server.
 */
import { temporal } from '@temporalio/proto';
import { describe, expect, it } from 'vitest';
import { capacityWaitOf } from '../../client/capacity-wait.js';

const { PendingActivityState } = temporal.api.enums.v1;
const NOW = Date.parse('2026-12-02T08:00:00.000Z');
const seconds = (ms: number) => ({ seconds: Math.floor(ms / 1_000), nanos: (ms % 1_000) * 1e6 });

function described(activity: Record<string, unknown>, status = 'RUNNING') {
  return {
    taskQueue: 'turns',
    status: { name: status },
    raw: {
      pendingActivities: [
        {
          activityType: { name: 'callModel' },
          state: PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED,
          scheduledTime: seconds(NOW - 5_250),
          attempt: 1,
          activityOptions: { taskQueue: { name: 'turns-models' } },
          ...activity,
        },
      ],
    },
  } as unknown as Parameters<typeof capacityWaitOf>[0];
}

describe('capacityWaitOf', () => {
  it('shows a model step scheduled on the model queue, since it was scheduled', () => {
    expect(capacityWaitOf(described({}), NOW)).toEqual({ since: '2026-12-02T07:59:54.750Z', taskQueue: 'turns-models', attempt: 1 });
  });

  it('shows a retry once its backoff is over, since then, with its attempt', () => {
    const retry = described({ attempt: 3, nextAttemptScheduleTime: seconds(NOW - 1_000) });
    expect(capacityWaitOf(retry, NOW)).toEqual({ since: '2026-12-02T07:59:59.000Z', taskQueue: 'turns-models', attempt: 3 });
  });

  it('does not show a retry still in its backoff', () => {
    expect(capacityWaitOf(described({ attempt: 2, nextAttemptScheduleTime: seconds(NOW + 4_000) }), NOW)).toBeUndefined();
  });

  it('does not show a step a worker has taken, one on the turn\'s own queue, another activity, or an ended turn', () => {
    expect(capacityWaitOf(described({ state: PendingActivityState.PENDING_ACTIVITY_STATE_STARTED }), NOW)).toBeUndefined();
    expect(capacityWaitOf(described({ activityOptions: { taskQueue: { name: 'turns' } } }), NOW)).toBeUndefined();
    expect(capacityWaitOf(described({ activityOptions: null }), NOW)).toBeUndefined();
    expect(capacityWaitOf(described({ activityType: { name: 'executeTool' } }), NOW)).toBeUndefined();
    expect(capacityWaitOf(described({}, 'TERMINATED'), NOW)).toBeUndefined();
  });

  it('reads a description without pending activities', () => {
    expect(capacityWaitOf({ taskQueue: 'turns', status: { name: 'RUNNING' }, raw: {} } as unknown as Parameters<typeof capacityWaitOf>[0], NOW)).toBeUndefined();
  });
});
