/**
 * A turnpike worker as its own process, publishing live deltas to the PostgreSQL channel that
 * TURNPIKE_LIVE_POSTGRES_URL names, as a deployment's workers do apart from its API: `runWorker`
 * is given no `liveDeltas`, so the plugin takes its default from the environment. The test tools;
 * env as for test/chaos/worker-process.ts, plus the provider variables. Prints "ready" once it polls.
 */
import { DefaultLogger } from '@temporalio/worker';
import { runWorker } from '../../worker/index.js';
import { testTools } from './test-tools.js';

if (!process.env.TURNPIKE_LIVE_POSTGRES_URL) throw new Error('TURNPIKE_LIVE_POSTGRES_URL is not set');
await runWorker({
  tools: testTools,
  taskQueue: process.env.TURNPIKE_TASK_QUEUE!,
  workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE! },
  runtimeOptions: { logger: new DefaultLogger('ERROR') },
  onReady: (ready) => console.log(`ready ${JSON.stringify(ready)}`),
});
console.log('stopped');
