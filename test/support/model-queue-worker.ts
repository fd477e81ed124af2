/**
 * A Worker in the test's process on a turns' queue that also polls a model queue
 * (`modelCapacity`: a token limit, the providers' headers…), on the suite's dev server; the
 * returned function stops it.
 */
import { NativeConnection } from '@temporalio/worker';
import { inject } from 'vitest';
import type { ModelCapacityOptions } from '../../worker/model-capacity.js';
import { createWorker } from '../../worker/create-worker.js';
import { testTools } from './test-tools.js';

export async function startModelQueueWorker(taskQueue: string, modelCapacity: ModelCapacityOptions): Promise<() => Promise<void>> {
  const native = await NativeConnection.connect({ address: inject('temporalAddress') });
  const worker = await createWorker({
    tools: testTools,
    taskQueue,
    connection: native,
    namespace: inject('temporalNamespace'),
    workflowBundle: { codePath: inject('workflowBundlePath') },
    modelCapacity,
  });
  const running = worker.run();
  return async () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running;
    await native.close();
  };
}
