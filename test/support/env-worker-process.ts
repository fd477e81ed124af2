/**
 * A turnpike worker as its own process, configured from the environment as a deployment's is:
 * `runWorker` with the test tools and nothing else, so the plugin takes the rest from the
 * variables. The live channel from `TURNPIKE_LIVE_POSTGRES_URL`; the model queue, its rate and
 * concurrency from `TURNPIKE_MODEL_TASK_QUEUE`, `TURNPIKE_MODEL_REQUESTS_PER_SECOND` and
 * `TURNPIKE_MODEL_MAX_CONCURRENT_CALLS` (without them, model calls run on the turns' queue, as
 * before the model queue: `npm run bench -- --only fleet` runs both). Env as for
 * test/chaos/worker-process.ts, plus the provider variables. Prints "ready" once it polls,
 * "stopped" once its Workers have stopped.
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
