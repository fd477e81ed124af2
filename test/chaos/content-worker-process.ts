/**
 * A turnpike worker process for the content chaos test: `runWorker` with `export_report`
 * (content-tools.ts), over the content store TURNPIKE_CONTENT_STORE names. Env as for
 * worker-process.ts. Prints "ready" (with its URLs) once it polls.
 */
import { exportReport } from './content-tools.js';
import { runChaosWorker } from './chaos-worker.js';

await runChaosWorker({
  tools: [exportReport],
});
