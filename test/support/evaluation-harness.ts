/**
 * What the evaluation tests share: a client of the test dev server, a worker on a task queue of
 * their own that also runs the evaluation worker, the turns they record with the demo model (in the
 * order asked, even when started at once), and a run's finished report. Every turn and run they
 * start is noted for the replay sets (`RECORD_HISTORIES`, history-recorder.ts).
 */
import { randomUUID } from 'node:crypto';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { inject } from 'vitest';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { turnpikeGrpcRetryInterceptor } from '../../connection/query-retry.js';
import { turnpikeDataConverter } from '../../content/data-converter.js';
import { createWorker, type CreateWorkerOptions } from '../../worker/create-worker.js';
import type { EvaluationReport } from '../../workflows/evaluation/evaluation-types.js';
import type { AgentTurnInput } from '../../workflows/types/index.js';
import { noteStarted, saveStarted } from './history-recorder.js';

export interface EvaluationHarness {
  client: Client;
  turnpike: TurnpikeClient;
  taskQueue: string;
  /** The recorded turns' ids, in the order `start` was asked. */
  turnIds: string[];
  /** Starts a turn of the demo model with this user message. */
  start(text: string, extra?: Partial<AgentTurnInput>): Promise<WorkflowHandle>;
  /** Waits for the run to end; its report. */
  finished(evaluationId: string): Promise<EvaluationReport>;
  stop(): Promise<void>;
}

export async function startEvaluationHarness(name: string, options: Pick<CreateWorkerOptions, 'tools' | 'evaluation'>): Promise<EvaluationHarness> {
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR') });
  } catch {
    // Already installed in this process.
  }
  const taskQueue = `test-${name}-${randomUUID()}`;
  const connection = await Connection.connect({ address: inject('temporalAddress'), interceptors: [turnpikeGrpcRetryInterceptor()] });
  const client = new Client({ connection, namespace: inject('temporalNamespace'), dataConverter: turnpikeDataConverter });
  const native = await NativeConnection.connect({ address: inject('temporalAddress') });
  const worker = await createWorker({
    ...options,
    taskQueue,
    connection: native,
    namespace: inject('temporalNamespace'),
    workflowBundle: { codePath: inject('workflowBundlePath') },
  });
  const running = worker.run();
  const turnpike = new TurnpikeClient({ client, taskQueue });
  const turnIds: string[] = [];
  return {
    client,
    turnpike,
    taskQueue,
    turnIds,
    async start(text, extra = {}) {
      const workflowId = `turn-${randomUUID()}`;
      turnIds.push(workflowId);
      const handle = await client.workflow.start('agentTurn', {
        taskQueue,
        workflowId,
        args: [{ model: { provider: 'scripted', model: 'demo' }, messages: [{ role: 'user', content: text }], ...extra } satisfies AgentTurnInput],
      });
      noteStarted(handle);
      return handle;
    },
    async finished(evaluationId) {
      const handle = client.workflow.getHandle(evaluationId);
      noteStarted(handle);
      await handle.result();
      return turnpike.evaluationReport(evaluationId);
    },
    async stop() {
      await saveStarted();
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
      await native.close();
      await connection.close();
    },
  };
}
