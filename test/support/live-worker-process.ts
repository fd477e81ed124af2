/**
 * A turnpike worker as its own process, publishing live deltas to the PostgreSQL channel that
 * TURNPIKE_LIVE_POSTGRES_URL names (liveDeltasFromEnvironment), as a deployment's workers do
 * apart from its API. The test tools; env as for test/chaos/worker-process.ts, plus the provider
 * variables. Prints "ready" once it polls.
 */
import { DefaultLogger } from '@temporalio/worker';
import { liveDeltasFromEnvironment, runWorker } from '../../worker/index.js';
import { testTools } from './test-tools.js';

const liveDeltas = liveDeltasFromEnvironment();
if (!liveDeltas) throw new Error('TURNPIKE_LIVE_POSTGRES_URL is not set');
await runWorker({
  tools: testTools,
  liveDeltas,
  taskQueue: process.env.TURNPIKE_TASK_QUEUE!,
  workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE! },
  runtimeOptions: { logger: new DefaultLogger('ERROR') },
  onReady: (ready) => console.log(`ready ${JSON.stringify(ready)}`),
});
await liveDeltas.close();
console.log('stopped');
