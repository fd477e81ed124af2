/**
 * A turnpike worker as its own process, for the chaos tests to kill with SIGKILL or stop with
 * SIGTERM: `runWorker`, as `npm run worker` runs it. Env: TEMPORAL_ADDRESS, TURNPIKE_TASK_QUEUE,
 * CHAOS_RECORDS_DIR, WORKFLOW_BUNDLE (path), optional TURNPIKE_METRICS_ADDRESS and
 * TURNPIKE_HEALTH_PORT, CHAOS_PRICES (a price table as JSON), and the provider variables. Prints "ready" (with its URLs) once it polls.
 */
import { DefaultLogger } from '@temporalio/worker';
import { runWorker, type PriceTable } from '../../worker/index.js';
import { chaosTools } from './chaos-tools.js';

await runWorker({
  tools: chaosTools,
  taskQueue: process.env.TURNPIKE_TASK_QUEUE!,
  ...(process.env.WORKFLOW_BUNDLE ? { workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE } } : {}),
  ...(process.env.CHAOS_PRICES ? { prices: JSON.parse(process.env.CHAOS_PRICES) as PriceTable } : {}),
  runtimeOptions: { logger: new DefaultLogger('ERROR') },
  workerOptions: {
    // A killed worker's sticky tasks move to the shared queue after this, not after 10s.
    stickyQueueScheduleToStartTimeout: '1s',
  },
  onReady: (ready) => console.log(`ready ${JSON.stringify(ready)}`),
});
console.log('stopped');
