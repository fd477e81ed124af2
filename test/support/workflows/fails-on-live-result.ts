/**
 * A workflow for test/integration/legacy-query-guard.test.ts: one activity, then a command (a
 * memo) and a TypeError when the activity's result is met live, not on replay. Its activation
 * fails exactly when a worker with an empty cache meets the result inside a legacy query's task.
 */
import * as wf from '@temporalio/workflow';

export const statusQuery = wf.defineQuery<string>('status');

const { slowStep } = wf.proxyActivities<{ slowStep(ms: number): Promise<number> }>({ startToCloseTimeout: '30s', taskQueue: 'legacy-query-guard-activities' });

export async function failsOnLiveResult(ms: number): Promise<string> {
  wf.setHandler(statusQuery, () => 'waiting');
  await slowStep(ms);
  wf.upsertMemo({ parked: 'yes' });
  if (!wf.workflowInfo().unsafe.isReplaying) throw new TypeError('met only live');
  return 'unreachable live';
}
