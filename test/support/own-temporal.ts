/**
 * A Temporal dev server of one test file's own, with a turnpike worker on it: for tests of what
 * reads a whole namespace (the content sweep), which other files' workflows on the shared server
 * would otherwise take part in.
 */
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { inject } from 'vitest';
import { createTurnpikeDataConverter } from '../../content/data-converter.js';
import type { ContentStore } from '../../content/content-store.js';
import { startDevServer, type DevServer } from '../../scripts/dev-server.js';
import { createWorker } from '../../worker/create-worker.js';
import { testTools } from './test-tools.js';

try {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
} catch {
  // Already installed in this process.
}

export interface OwnTemporal {
  server: DevServer;
  connection: Connection;
  /** With turnpike's data converter over the test's store, as the worker's. */
  client: Client;
  /** The worker's task queue. */
  taskQueue: string;
  /** Another client on the same connection, with a data converter of the test's. */
  clientWith(dataConverter: DataConverter): Client;
  stop(): Promise<void>;
}

export async function startOwnTemporal({ contentStore }: { contentStore: ContentStore }): Promise<OwnTemporal> {
  const server = await startDevServer({ log: () => undefined });
  const taskQueue = `test-${randomUUID()}`;
  let connection: Connection | undefined;
  let nativeConnection: NativeConnection | undefined;
  let worker: Worker | undefined;
  let running: Promise<void> | undefined;
  const stop = async () => {
    if (worker?.getState() === 'RUNNING') worker.shutdown();
    await running;
    await nativeConnection?.close();
    await connection?.close();
    await server.stop();
  };
  try {
    connection = await Connection.connect({ address: server.address });
    nativeConnection = await NativeConnection.connect({ address: server.address });
    worker = await createWorker({
      tools: testTools,
      taskQueue,
      contentStore,
      connection: nativeConnection,
      namespace: server.namespace,
      workflowBundle: { codePath: inject('workflowBundlePath') },
    });
    running = worker.run();
  } catch (error) {
    await stop();
    throw error;
  }
  const opened = connection;
  return {
    server,
    connection: opened,
    client: new Client({ connection: opened, namespace: server.namespace, dataConverter: createTurnpikeDataConverter({ contentStore }) }),
    taskQueue,
    clientWith: (dataConverter) => new Client({ connection: opened, namespace: server.namespace, dataConverter }),
    stop,
  };
}
