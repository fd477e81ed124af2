/**
 * A turnpike worker process for the content chaos test: `runWorker` with `export_report`
 * (content-tools.ts), over the content store TURNPIKE_CONTENT_STORE names. Env as for
 * worker-process.ts. Prints "ready" (with its URLs) once it polls.
 */
import { DefaultLogger } from '@temporalio/worker';
import { runWorker } from '../../worker/index.js';
import { exportReport } from './content-tools.js';

await runWorker({
  tools: [exportReport],
  taskQueue: process.env.TURNPIKE_TASK_QUEUE!,
  ...(process.env.WORKFLOW_BUNDLE ? { workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE } } : {}),
  runtimeOptions: { logger: new DefaultLogger('ERROR') },
  workerOptions: { stickyQueueScheduleToStartTimeout: '1s' },
  onReady: (ready) => console.log(`ready ${JSON.stringify(ready)}`),
});
console.log('stopped');
