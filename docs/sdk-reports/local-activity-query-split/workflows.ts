import * as wf from '@temporalio/workflow';

const { localStep } = wf.proxyLocalActivities<{ localStep(i: number): Promise<number> }>({
  startToCloseTimeout: '10s',
});
const { remoteStep } = wf.proxyActivities<{ remoteStep(i: number): Promise<number> }>({
  startToCloseTimeout: '10s',
});

export const getIter = wf.defineQuery<number>('getIter');
export const ping = wf.defineUpdate<number>('ping');
export const pingSlow = wf.defineUpdate<number>('pingSlow');

export async function loopWorkflow(iterations: number): Promise<number> {
  let iter = 0;
  wf.setHandler(getIter, () => iter);
  wf.setHandler(ping, () => iter);
  wf.setHandler(pingSlow, async () => {
    await wf.sleep(5);
    return iter;
  });
  for (; iter < iterations; iter++) {
    await localStep(iter);
    await remoteStep(iter);
  }
  await wf.condition(wf.allHandlersFinished);
  return iter;
}
