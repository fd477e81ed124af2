import * as wf from '@temporalio/workflow';

const { step } = wf.proxyActivities<{ step(i: number): Promise<number> }>({ startToCloseTimeout: '30s' });

export const approve = wf.defineUpdate<string, [string]>('approve');
export const approveSignal = wf.defineSignal<[string]>('approveSignal');
export const status = wf.defineQuery<string>('status');

/**
 * A few activity steps, then it parks (a memo and a one-day timer) until `approve` names the
 * approval it parked with. The validator refuses unknown ids; the handler trusts the validator,
 * as turnpike's does, so an update that skipped its validator throws a TypeError.
 */
export async function parkingWorkflow(steps: number): Promise<string> {
  const entries = new Map<string, { parked: boolean }>();
  let state = 'running';
  let decided = false;
  wf.setHandler(status, () => state);
  // Refused signals: unknown ids change nothing and send no command.
  wf.setHandler(approveSignal, (id) => {
    if (entries.has(id)) decided = true;
  });
  wf.setHandler(
    approve,
    (id) => {
      const entry = entries.get(id);
      if (entry!.parked) decided = true;
      return 'ok';
    },
    {
      validator: (id) => {
        if (!entries.has(id)) throw new Error(`unknown approvalId ${id}`);
      },
    },
  );
  for (let i = 0; i < steps; i++) await step(i);
  entries.set('apr_1', { parked: true });
  state = 'awaiting-input';
  wf.upsertMemo({ pending: 'apr_1' });
  if (!(await wf.condition(() => decided, '1 day'))) return 'timed-out';
  state = 'done';
  return 'done';
}

const { slowStep } = wf.proxyActivities<{ slowStep(ms: number): Promise<number> }>({
  startToCloseTimeout: '30s',
  taskQueue: 'legacy-query-activities',
});

/**
 * For `query-after-failure.ts`: one activity, then a command (a memo) and a TypeError when the
 * result is met live, as turnpike's update handler throws when its validator did not run.
 */
export async function failsOnLiveResult(ms: number): Promise<string> {
  wf.setHandler(status, () => 'waiting');
  await slowStep(ms);
  wf.upsertMemo({ parked: 'yes' });
  if (!wf.workflowInfo().unsafe.isReplaying) throw new TypeError('met only live');
  return 'unreachable live';
}
