/**
 * Server restart: turns parked on a dev server backed by a SQLite file; the server is stopped
 * and started again on the same file and port; every decision sent afterwards resumes its
 * turn, and the worker — left running throughout — reconnects by itself.
 */
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { turnpikeDataConverter } from '../../content/data-converter.js';
import { freePort, startDevServer, type DevServer } from '../../scripts/dev-server.js';
import { approveToolCallUpdate, turnStateQuery } from '../../workflows/messages/definitions.js';
import type { agentTurn } from '../../workflows/index.js';
import { sleep, startWorkerProcess, temporaryDirectory, writeBundle, type WorkerProcess } from './chaos-support.js';

const PARKED = 20;

let directory: string;
let bundlePath: string;
let server: DevServer | undefined;
let worker: WorkerProcess | undefined;

beforeAll(async () => {
  directory = temporaryDirectory('turnpike-restart-');
  bundlePath = await writeBundle(directory);
});
afterAll(async () => {
  await worker?.kill();
  await server?.stop();
  rmSync(directory, { recursive: true, force: true });
});

async function connect(address: string): Promise<Client> {
  return new Client({ connection: await Connection.connect({ address }), dataConverter: turnpikeDataConverter });
}

describe('server restart', () => {
  it(`resumes ${PARKED} parked turns with decisions sent after the server restarted on the same SQLite file`, async () => {
    const port = await freePort();
    const dbFile = path.join(directory, 'temporal.sqlite');
    const records = path.join(directory, 'records');
    mkdirSync(path.join(records, 'effects'), { recursive: true });
    server = await startDevServer({ port, dbFile });
    worker = await startWorkerProcess({ TEMPORAL_ADDRESS: server.address, TURNPIKE_TASK_QUEUE: 'chaos-restart', CHAOS_RECORDS_DIR: records, WORKFLOW_BUNDLE: bundlePath });

    let client = await connect(server.address);
    const ids = Array.from({ length: PARKED }, (_, index) => `restart-turn-${index}`);
    await Promise.all(
      ids.map((workflowId, index) =>
        client.workflow.start<typeof agentTurn>('agentTurn', {
          taskQueue: 'chaos-restart',
          workflowId,
          args: [{ model: { provider: 'scripted', model: 'demo' }, messages: [{ role: 'user', content: `use charge_card with {"amount": ${index + 1}}` }] }],
        }),
      ),
    );
    const approvals = new Map<string, string>();
    for (const workflowId of ids) {
      for (;;) {
        const state = await client.workflow.getHandle(workflowId).query(turnStateQuery).catch(() => undefined);
        if (state?.pending[0]?.approvalId) {
          approvals.set(workflowId, state.pending[0].approvalId);
          break;
        }
        await sleep(100);
      }
    }
    await client.connection.close();

    await server.stop();
    server = await startDevServer({ port, dbFile });
    client = await connect(server.address);

    // The parked state survived: every turn is still running and reports its pending call.
    const descriptions = await Promise.all(ids.map((workflowId) => client.workflow.getHandle(workflowId).describe()));
    expect(descriptions.map((description) => description.status.name)).toEqual(Array(PARKED).fill('RUNNING'));

    await Promise.all(
      ids.map((workflowId) =>
        client.workflow.getHandle(workflowId).executeUpdate(approveToolCallUpdate, { args: [{ approvalId: approvals.get(workflowId)!, approved: true, approver: 'ops' }] }),
      ),
    );
    const results = await Promise.all(ids.map((workflowId) => client.workflow.getHandle<typeof agentTurn>(workflowId).result()));
    expect(results.map((result) => [result.status, result.toolCalls[0].outcome])).toEqual(Array(PARKED).fill(['completed', 'approved']));
    expect(readdirSync(path.join(records, 'effects'))).toHaveLength(PARKED);
    console.log(`server-restart: ${PARKED} turns parked, 1 server restart, ${PARKED} decisions after it, ${PARKED} completed, lost: 0`);
    await client.connection.close();
  });
});
