/**
 * A turnpike worker as its own process, for the chaos tests to kill with SIGKILL or stop with
 * SIGTERM: `runWorker`, as `npm run worker` runs it (chaos-worker.ts). Env: TEMPORAL_ADDRESS,
 * TURNPIKE_TASK_QUEUE, CHAOS_RECORDS_DIR, WORKFLOW_BUNDLE (path), optional
 * TURNPIKE_METRICS_ADDRESS and TURNPIKE_HEALTH_PORT, CHAOS_PRICES (a price table as JSON), and the
 * provider variables. Prints "ready" (with its URLs) once it polls.
 */
import type { PriceTable } from '../../worker/index.js';
import { runChaosWorker } from './chaos-worker.js';
import { chaosTools } from './chaos-tools.js';

await runChaosWorker({
  tools: chaosTools,
  ...(process.env.CHAOS_PRICES ? { prices: JSON.parse(process.env.CHAOS_PRICES) as PriceTable } : {}),
});
