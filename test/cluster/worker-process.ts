/**
 * A turnpike worker process for the cluster test, written like demo/worker.ts (the worker
 * `npm run cluster` and docker-compose.yml run) against the package's entry points, with tools
 * that record what they did in files shared by all worker processes: `charge_card` (approval
 * needed; each idempotency key takes effect once) and the `ask_user` client tool.
 * Env: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TURNPIKE_TASK_QUEUE, CHAOS_RECORDS_DIR,
 * WORKFLOW_BUNDLE (a prebuilt bundle, so three workers do not bundle at once). Prints "ready".
 */
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { connectionOptionsFromEnvironment, createWorker } from '../../worker/index.js';
import { askUser } from '../../demo/tools.js';
import { chaosTools } from '../chaos/chaos-tools.js';

// Polls failing while the server restarts are expected here; errors still reach the log file.
Runtime.install({ logger: new DefaultLogger('ERROR') });

const { connectionOptions, namespace } = connectionOptionsFromEnvironment();
const connection = await NativeConnection.connect(connectionOptions);
try {
  const worker = await createWorker({
    tools: [...chaosTools, askUser],
    connection,
    namespace,
    ...(process.env.WORKFLOW_BUNDLE ? { workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE } } : {}),
  });
  const running = worker.run();
  console.log('ready');
  await running;
} finally {
  await connection.close();
}
