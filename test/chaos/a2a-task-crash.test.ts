/**
 * An A2A task waiting for approval (`input-required`) while its worker process is killed
 * (SIGKILL) and the API process serving it is closed. The client had dropped its stream; once a
 * new API process listens on the same address and a new worker polls, the same `@a2a-js/sdk`
 * client resubscribes (`SubscribeToTask`), the approval is decided through turnpike, and the
 * resumed stream carries the task to `completed` with one result for its one call. The charge
 * runs once (one effect file), by the new worker.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Role, TaskState, type StreamResponse, type Task } from '@a2a-js/sdk';
import { ClientFactory, JsonRpcTransportFactory, type Client as A2aClient } from '@a2a-js/sdk/client';
import { Client, Connection } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTokenMap } from '../../api/auth.js';
import { buildApi } from '../../api/server.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { turnpikeDataConverter } from '../../content/data-converter.js';
import { startDevServer, type DevServer } from '../../scripts/dev-server.js';
import { startWorkerProcess, temporaryDirectory, writeBundle, type WorkerProcess } from './chaos-support.js';

const TASK_QUEUE = 'chaos-a2a-task';

let server: DevServer;
let client: Client;
let directory: string;
let bundlePath: string;
const workers: WorkerProcess[] = [];
const apis: FastifyInstance[] = [];

beforeAll(async () => {
  directory = temporaryDirectory('turnpike-a2a-chaos-');
  [server, bundlePath] = await Promise.all([startDevServer(), writeBundle(directory)]);
  client = new Client({ connection: await Connection.connect({ address: server.address }), dataConverter: turnpikeDataConverter });
}, 180_000);

afterAll(async () => {
  for (const api of apis) await api.close();
  for (const worker of workers) await worker.kill();
  await client?.connection.close();
  await server?.stop();
  if (directory) rmSync(directory, { recursive: true, force: true });
});

/** An API process over the dev server serving the `cashier` agent over A2A, on `port` (0: any). */
async function startApi(turnpike: TurnpikeClient, port: number): Promise<{ api: FastifyInstance; base: string }> {
  const api = await buildApi({
    client: turnpike,
    tokens: parseTokenMap('alice-token:alice'),
    a2a: { agents: { cashier: { description: 'Charges cards, with approval', model: { provider: 'scripted', model: 'demo' }, tools: ['charge_card'] } } },
  });
  apis.push(api);
  return { api, base: await api.listen({ host: '127.0.0.1', port }) };
}

function stateOf(event: StreamResponse): TaskState | undefined {
  const payload = event.payload;
  return payload?.$case === 'task' || payload?.$case === 'statusUpdate' ? payload.value.status?.state : undefined;
}

describe('an A2A task whose worker is killed and whose API process closes while it waits for approval', () => {
  it('resumes on a resubscribed stream after the decision, completing with one result, the charge made once', async () => {
    const records = path.join(directory, 'records');
    const env = { TEMPORAL_ADDRESS: server.address, TURNPIKE_TASK_QUEUE: TASK_QUEUE, CHAOS_RECORDS_DIR: records, WORKFLOW_BUNDLE: bundlePath };
    const first = await startWorkerProcess(env);
    workers.push(first);
    const turnpike = new TurnpikeClient({ client, taskQueue: TASK_QUEUE });
    const before = await startApi(turnpike, 0);
    const authorized: typeof fetch = (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), authorization: 'Bearer alice-token' } });
    const a2a: A2aClient = await new ClientFactory({ transports: [new JsonRpcTransportFactory({ fetchImpl: authorized })] }).createFromUrl(`${before.base}/api/a2a/cashier/`);

    // Stream the task until it parks, then drop the stream (leaving the loop cancels the response body).
    const message = { messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER, parts: [{ content: { $case: 'text' as const, value: 'use charge_card with {"amount": 12}' }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [], referenceTaskIds: [] };
    let taskId = '';
    let parked: StreamResponse | undefined;
    for await (const event of a2a.sendMessageStream({ tenant: '', message, configuration: undefined, metadata: undefined })) {
      if (event.payload?.$case === 'task') taskId = event.payload.value.id;
      if (stateOf(event) === TaskState.TASK_STATE_INPUT_REQUIRED) {
        parked = event;
        break;
      }
    }
    expect(taskId).toMatch(/^a2a-cashier-/);
    expect(parked).toBeDefined();

    await first.kill();
    expect(first.child.signalCode).toBe('SIGKILL');
    // The API process goes with its connections, as a process that ends does: a plain close would
    // wait for a connection the client's pool opened and never used, until the pool drops it (4 s).
    before.api.server.closeAllConnections();
    await before.api.close();

    // A new API process on the same address, and a new worker: nothing of the task was kept in either dead process.
    const after = await startApi(turnpike, Number(new URL(before.base).port));
    expect(after.base).toBe(before.base);
    const next = await startWorkerProcess(env);
    workers.push(next);

    // The same client resubscribes; the first event is the task as it waits.
    const stream = a2a.resubscribeTask({ tenant: '', id: taskId });
    const snapshot = (await stream.next()).value as StreamResponse;
    expect(snapshot.payload?.$case).toBe('task');
    const waiting = (snapshot.payload!.value as Task).status!;
    expect(waiting.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(waiting.message!.parts[0]!.content!.value).toContain('charge_card waits for approval');

    const pending = (await turnpike.turnState(taskId)).pending;
    expect(pending).toHaveLength(1);
    await turnpike.approveToolCall(taskId, { approvalId: pending[0]!.approvalId!, approved: true, approver: 'ops', inputHash: pending[0]!.inputHash });

    const rest: StreamResponse[] = [];
    for await (const event of stream) rest.push(event);
    const last = rest.at(-1)!;
    expect(last.payload?.$case).toBe('statusUpdate');
    expect(stateOf(last)).toBe(TaskState.TASK_STATE_COMPLETED);
    // One answer, holding one result for the one call.
    const artifacts = rest.flatMap((event) => (event.payload?.$case === 'artifactUpdate' ? [event.payload.value.artifact!] : []));
    expect(artifacts).toHaveLength(1);
    expect(artifacts[0]!.parts.map((part) => part.content?.value)).toEqual(['Done. charge_card: {"charged":12,"duplicate":false}']);

    const task = await a2a.getTask({ tenant: '', id: taskId });
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.artifacts).toEqual([artifacts[0]]);
    const result = await turnpike.turnResult(taskId);
    expect(result.toolCalls.map((call) => [call.toolName, call.outcome])).toEqual([['charge_card', 'approved']]);
    const toolResults = result.messages.flatMap((entry) => (entry.role === 'tool' ? entry.content : []));
    expect(toolResults.map((part) => part.toolCallId)).toEqual([result.toolCalls[0]!.toolCallId]);

    // One charge, made by the new worker.
    const effects = readdirSync(path.join(records, 'effects'));
    expect(effects).toHaveLength(1);
    expect(JSON.parse(readFileSync(path.join(records, 'effects', effects[0]!), 'utf8'))).toEqual({ amount: 12, pid: next.child.pid });
  }, 240_000);
});
