/**
 * A Worker in the test's process on a turns' queue that also polls a model queue with a token
 * limit (`modelCapacity.tokenLimit`), on the suite's dev server; the returned function stops it.
 */
import { NativeConnection } from '@temporalio/worker';
import { inject } from 'vitest';
import type { ModelTokenLimit } from '../../activities/model-tokens/token-gate.js';
import { createWorker } from '../../worker/create-worker.js';
import { testTools } from './test-tools.js';

export async function startModelQueueWorker(taskQueue: string, modelQueue: string, tokenLimit: ModelTokenLimit, maxConcurrentCalls?: number): Promise<() => Promise<void>> {
  const native = await NativeConnection.connect({ address: inject('temporalAddress') });
  const worker = await createWorker({
    tools: testTools,
    taskQueue,
    connection: native,
    namespace: inject('temporalNamespace'),
    workflowBundle: { codePath: inject('workflowBundlePath') },
    modelCapacity: { taskQueue: modelQueue, tokenLimit, ...(maxConcurrentCalls ? { maxConcurrentCalls } : {}) },
  });
  const running = worker.run();
  return async () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running;
    await native.close();
  };
}
