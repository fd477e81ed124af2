/**
 * A turnpike worker as its own process, for the chaos tests to kill with SIGKILL.
 * Env: TEMPORAL_ADDRESS, TURNPIKE_TASK_QUEUE, CHAOS_RECORDS_DIR, WORKFLOW_BUNDLE (path), and
 * the provider variables. Prints "ready" once it polls.
 */
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { createWorker } from '../../worker/create-worker.js';
import { chaosTools } from './chaos-tools.js';

Runtime.install({ logger: new DefaultLogger('ERROR') });

const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS! });
const worker = await createWorker({
  tools: chaosTools,
  connection,
  taskQueue: process.env.TURNPIKE_TASK_QUEUE!,
  ...(process.env.WORKFLOW_BUNDLE ? { workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE } } : {}),
  workerOptions: {
    // A killed worker's sticky tasks move to the shared queue after this, not after 10s.
    stickyQueueScheduleToStartTimeout: '1s',
  },
});
const running = worker.run();
console.log('ready');
await running;
await connection.close();
