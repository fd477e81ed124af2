/**
 * A quorum of two in finance, the requester excluded, with the worker process killed (SIGKILL)
 * between the two votes: the first vote is in the turn's history, so nothing is lost. The second
 * vote is sent while no worker runs and is accepted once a new worker process polls; the refund
 * runs exactly once (counted in a file both processes append to), and both votes are in the audit.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STARTED_BY_MEMO_KEY } from '../../client/index.js';
import { turnpikeDataConverter } from '../../content/data-converter.js';
import { startDevServer, type DevServer } from '../../scripts/dev-server.js';
import { approveToolCallUpdate, turnStateQuery } from '../../workflows/messages/definitions.js';
import type { agentTurn } from '../../workflows/index.js';
import type { PendingToolCall } from '../../workflows/types/index.js';
import { sleep, startWorkerProcess, temporaryDirectory, writeBundle, type WorkerProcess } from './chaos-support.js';

const WORKER = 'test/chaos/quorum-worker-process.ts';

let server: DevServer;
let client: Client;
let directory: string;
let bundlePath: string;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  directory = temporaryDirectory('turnpike-quorum-chaos-');
  [server, bundlePath] = await Promise.all([startDevServer(), writeBundle(directory)]);
  client = new Client({ connection: await Connection.connect({ address: server.address }), dataConverter: turnpikeDataConverter });
}, 180_000);

afterAll(async () => {
  for (const worker of workers) await worker.kill();
  await client?.connection.close();
  await server?.stop();
  if (directory) rmSync(directory, { recursive: true, force: true });
});

describe('a quorum of two whose worker is killed between the votes', () => {
  it('keeps the first vote, takes the second while no worker runs, runs the refund once and audits both votes', async () => {
    const taskQueue = 'chaos-quorum';
    const records = path.join(directory, 'records');
    const env = { TEMPORAL_ADDRESS: server.address, TURNPIKE_TASK_QUEUE: taskQueue, CHAOS_RECORDS_DIR: records, WORKFLOW_BUNDLE: bundlePath };
    const first = await startWorkerProcess(env, WORKER);
    workers.push(first);

    const handle = await client.workflow.start<typeof agentTurn>('agentTurn', {
      taskQueue,
      workflowId: 'chaos-quorum-turn',
      // A workflow task lost with the killed worker is retried after 2s rather than 10s.
      workflowTaskTimeout: '2s',
      memo: { [STARTED_BY_MEMO_KEY]: 'rita' },
      args: [{ model: { provider: 'scripted', model: 'demo' }, messages: [{ role: 'user', content: 'use refund_order with {"order":"A-7","amount":12000}' }] }],
    });

    const deadline = Date.now() + 60_000;
    let pending: PendingToolCall[] = [];
    while (pending.length === 0) {
      if (Date.now() > deadline) throw new Error(`the turn never parked; worker said: ${first.output()}`);
      pending = (await handle.query(turnStateQuery)).pending;
      if (pending.length === 0) await sleep(100);
    }
    expect(pending[0]).toMatchObject({ toolName: 'refund_order', progress: { quorum: 2, votes: [], excludedRequester: 'rita' } });
    const { approvalId, inputHash } = pending[0];

    const vote = (approver: string) => handle.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: approvalId!, approved: true, approver, approverGroups: ['finance'], inputHash, reason: `${approver} checked it` }] });
    expect(await vote('alice')).toMatchObject({ votes: { approvals: 1, quorum: 2, decided: false } });

    await first.kill();
    expect(first.child.signalCode).toBe('SIGKILL');

    // The second vote is sent while no worker runs; it is accepted once the new worker polls.
    const second = vote('bob');
    const next = await startWorkerProcess(env, WORKER);
    workers.push(next);
    expect(await second).toMatchObject({ votes: { approvals: 2, quorum: 2, decided: true } });
    const result = await handle.result();

    expect(result.toolCalls.map((call) => [call.toolName, call.outcome])).toEqual([['refund_order', 'approved']]);
    // Exactly one refund, by the new worker.
    const refunds = existsSync(path.join(records, 'refunds.log')) ? readFileSync(path.join(records, 'refunds.log'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { input: unknown; pid: number }) : [];
    expect(refunds.map((refund) => [refund.input, refund.pid])).toEqual([[{ order: 'A-7', amount: 12000 }, next.child.pid]]);
    // Both votes are in the audit, in order, with their reasons.
    expect(result.decisions).toHaveLength(1);
    expect(result.decisions![0]).toMatchObject({ outcome: 'approved', approver: 'bob' });
    expect(result.decisions![0].progress!.votes.map(({ approver, approved, reason }) => ({ approver, approved, reason }))).toEqual([
      { approver: 'alice', approved: true, reason: 'alice checked it' },
      { approver: 'bob', approved: true, reason: 'bob checked it' },
    ]);
  }, 180_000);
});
