/**
 * `npm run worker`: a turnpike worker with the demo tools, against the cluster the
 * environment names (`TEMPORAL_ADDRESS`, `TEMPORAL_NAMESPACE`, ...). Your own entry point
 * looks the same with your tools in place of `demoTools`.
 */
import { NativeConnection } from '@temporalio/worker';
import { createWorker } from './create-worker.js';
import { demoTools } from './demo-tools.js';
import { connectionOptionsFromEnvironment } from './environment.js';

async function main(): Promise<void> {
  const { connectionOptions, namespace } = connectionOptionsFromEnvironment();
  const connection = await NativeConnection.connect(connectionOptions);
  try {
    const worker = await createWorker({ tools: demoTools, connection, namespace });
    console.log(`turnpike worker polling task queue "${worker.options.taskQueue}" on ${connectionOptions.address} (namespace ${namespace})`);
    await worker.run();
  } finally {
    await connection.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
