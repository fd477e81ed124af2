/**
 * The application's worker: its own workflows and activities on its own task queue, with
 * `TurnpikePlugin` adding turnpike's activities, payload codec and bundle settings.
 */
import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker } from '@temporalio/worker';
import { TurnpikePlugin } from 'turnpike/worker';
import * as activities from './activities.js';
import { orderDeskTools } from './tools.js';

export async function createOrderDeskWorker(options: { connection: NativeConnection; namespace: string; taskQueue: string }): Promise<Worker> {
  return Worker.create({
    ...options,
    workflowsPath: fileURLToPath(new URL('./workflows.js', import.meta.url)),
    activities,
    plugins: [new TurnpikePlugin({ tools: orderDeskTools })],
  });
}
