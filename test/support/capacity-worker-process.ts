/**
 * A turnpike worker as its own process, configured as a deployment's would be for model capacity:
 * `runWorker` with the test tools, its model queue, rate and concurrency from
 * `TURNPIKE_MODEL_TASK_QUEUE`, `TURNPIKE_MODEL_REQUESTS_PER_SECOND` and
 * `TURNPIKE_MODEL_MAX_CONCURRENT_CALLS`. Env as for test/chaos/worker-process.ts, plus the
 * provider variables. Without `TURNPIKE_MODEL_TASK_QUEUE` it is a worker as before the model queue
 * (model calls on the turns' queue; `npm run bench -- --only fleet` runs both). Prints "ready" once
 * it polls, "stopped" once its Workers have stopped.
 */
import { DefaultLogger } from '@temporalio/worker';
import { runWorker } from '../../worker/index.js';
import { testTools } from './test-tools.js';

await runWorker({
  tools: testTools,
  taskQueue: process.env.TURNPIKE_TASK_QUEUE!,
  workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE! },
  runtimeOptions: { logger: new DefaultLogger('ERROR') },
  onReady: (ready) => console.log(`ready ${JSON.stringify(ready)}`),
});
console.log('stopped');
