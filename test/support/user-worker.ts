/**
 * A user's own Worker with `TurnpikePlugin` on the test dev server: the user's workflows file, its
 * own activities and the test tools (test-tools.ts) on its own task queue, and a Client with the plugin (turnpike's
 * payload codec, so large results read back as JSON). Shared by the tests of the plugin, of
 * `turnpike replay` and of transcript references.
 */
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { inject } from 'vitest';
import { TurnpikeClient } from '../../client/index.js';
import { turnpikeGrpcRetryInterceptor } from '../../connection/query-retry.js';
import { TurnpikePlugin } from '../../worker/index.js';
import { testTools } from './test-tools.js';

export interface UserWorker {
  nativeConnection: NativeConnection;
  client: Client;
  /** A TurnpikeClient on the worker's task queue. */
  turnpike: TurnpikeClient;
  /** Shuts the worker down, waits for it, and closes both connections. */
  stop(): Promise<void>;
}

/** Starts the worker running (its run ends when `stop` is called). */
export async function startUserWorker(options: { taskQueue: string; workflowsPath: string; activities?: object }): Promise<UserWorker> {
  const address = inject('temporalAddress');
  const namespace = inject('temporalNamespace');
  const connection = await Connection.connect({ address, interceptors: [turnpikeGrpcRetryInterceptor()] });
  const nativeConnection = await NativeConnection.connect({ address });
  const client = new Client({ connection, namespace, plugins: [new TurnpikePlugin()] });
  const worker = await Worker.create({
    connection: nativeConnection,
    namespace,
    taskQueue: options.taskQueue,
    workflowsPath: options.workflowsPath,
    ...(options.activities ? { activities: options.activities } : {}),
    plugins: [new TurnpikePlugin({ tools: testTools })],
  });
  const running = worker.run();
  return {
    nativeConnection,
    client,
    turnpike: new TurnpikeClient({ client, taskQueue: options.taskQueue }),
    async stop() {
      worker.shutdown();
      await running;
      await nativeConnection.close();
      await connection.close();
    },
  };
}
