/**
 * `npm run worker`: a turnpike worker with the demo tools, against the cluster the
 * environment names (`TEMPORAL_ADDRESS`, `TEMPORAL_NAMESPACE`, ...). Built on the package's
 * public entry points (`turnpike`, `turnpike/worker`), like an application's own worker.
 */
import { NativeConnection } from '@temporalio/worker';
import { connectionOptionsFromEnvironment, createWorker } from '../worker/index.js';
import { demoTools } from './tools.js';

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
