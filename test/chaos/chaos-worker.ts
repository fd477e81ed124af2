/**
 * What every chaos worker process (worker-process.ts and its variants) runs: `runWorker`, as
 * `npm run worker` runs it, with the given tools and options on TURNPIKE_TASK_QUEUE, the
 * workflow bundle WORKFLOW_BUNDLE names, quiet logs and sticky tasks that move to the shared queue
 * after 1 s when the process is killed. Prints "ready" (with its URLs) once it polls, and
 * "stopped" once it has shut down.
 */
import { DefaultLogger } from '@temporalio/worker';
import { runWorker, type RunWorkerOptions } from '../../worker/index.js';

export async function runChaosWorker(options: Omit<RunWorkerOptions, 'taskQueue'>): Promise<void> {
  await runWorker({
    ...options,
    taskQueue: process.env.TURNPIKE_TASK_QUEUE!,
    ...(process.env.WORKFLOW_BUNDLE ? { workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE } } : {}),
    runtimeOptions: { logger: new DefaultLogger('ERROR') },
    workerOptions: {
      // A killed worker's sticky tasks move to the shared queue after this, not after 10s.
      stickyQueueScheduleToStartTimeout: '1s',
    },
    onReady: (ready) => console.log(`ready ${JSON.stringify(ready)}`),
  });
  console.log('stopped');
}
