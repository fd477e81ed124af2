/**
 * An MCP task waiting for approval while its worker process is killed (SIGKILL) and the API
 * process that created it is closed: the approval is decided through turnpike once a new worker
 * polls, and a new API instance serves the task's result to a new MCP client. The charge runs once
 * (one effect file), by the new worker.
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, type CallToolResult, type Task } from '@modelcontextprotocol/sdk/types.js';
import { Client, Connection } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTokenMap } from '../../api/auth.js';
import { buildApi } from '../../api/server.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { turnpikeDataConverter } from '../../content/data-converter.js';
import { startDevServer, type DevServer } from '../../scripts/dev-server.js';
import { sleep, startWorkerProcess, temporaryDirectory, writeBundle, type WorkerProcess } from './chaos-support.js';

const TASK_QUEUE = 'chaos-mcp-task';

let server: DevServer;
let client: Client;
let directory: string;
let bundlePath: string;
const workers: WorkerProcess[] = [];
const apis: FastifyInstance[] = [];

beforeAll(async () => {
  directory = temporaryDirectory('turnpike-mcp-chaos-');
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

/** An API process over the dev server, serving the `cashier` agent, and an MCP client of it for alice. */
async function apiWithClient(): Promise<{ api: FastifyInstance; turnpike: TurnpikeClient; mcp: McpClient }> {
  const turnpike = new TurnpikeClient({ client, taskQueue: TASK_QUEUE });
  const api = await buildApi({
    client: turnpike,
    tokens: parseTokenMap('alice-token:alice'),
    mcp: { agents: { cashier: { description: 'Charges cards, with approval', model: { provider: 'scripted', model: 'demo' }, tools: ['charge_card'] } }, pollIntervalMs: 200 },
  });
  apis.push(api);
  const base = await api.listen({ host: '127.0.0.1', port: 0 });
  const mcp = new McpClient({ name: 'mcp-chaos-test', version: '1.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${base}/api/mcp`), { requestInit: { headers: { authorization: 'Bearer alice-token' } } }));
  await mcp.listTools();
  return { api, turnpike, mcp };
}

describe('an MCP task whose worker is killed and whose API process closes while it waits for approval', () => {
  it('is decided through turnpike and its result is fetched from a new API instance, the charge made once', async () => {
    const records = path.join(directory, 'records');
    const env = { TEMPORAL_ADDRESS: server.address, TURNPIKE_TASK_QUEUE: TASK_QUEUE, CHAOS_RECORDS_DIR: records, WORKFLOW_BUNDLE: bundlePath };
    const first = await startWorkerProcess(env);
    workers.push(first);

    const before = await apiWithClient();
    const stream = before.mcp.experimental.tasks.callToolStream({ name: 'cashier', arguments: { prompt: 'use charge_card with {"amount": 12}' } });
    const created = (await stream.next()).value as { type: string; task: Task };
    await stream.return(undefined);
    expect(created.type).toBe('taskCreated');
    const taskId = created.task.taskId;

    let parked: Task | undefined;
    for (let read = 0; read < 600 && parked?.statusMessage === undefined; read++) {
      if (read > 0) await sleep(100);
      parked = await before.mcp.experimental.tasks.getTask(taskId);
    }
    expect(parked?.status).toBe('working');
    expect(parked?.statusMessage).toContain('charge_card');

    await first.kill();
    expect(first.child.signalCode).toBe('SIGKILL');
    await before.mcp.close();
    await before.api.close();

    const next = await startWorkerProcess(env);
    workers.push(next);
    const pending = (await before.turnpike.turnState(taskId)).pending[0]!;
    await before.turnpike.approveToolCall(taskId, { approvalId: pending.approvalId!, approved: true, approver: 'ops', inputHash: pending.inputHash });

    const after = await apiWithClient();
    const result = (await after.mcp.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)) as CallToolResult;
    expect(result.isError).toBeUndefined();
    expect(result.content.map((part) => (part.type === 'text' ? part.text : '')).join('')).toContain('12');
    expect((await after.mcp.experimental.tasks.getTask(taskId)).status).toBe('completed');
    await after.mcp.close();

    // One charge, made by the new worker.
    const effects = readdirSync(path.join(records, 'effects'));
    expect(effects).toHaveLength(1);
    expect(JSON.parse(readFileSync(path.join(records, 'effects', effects[0]!), 'utf8'))).toEqual({ amount: 12, pid: next.child.pid });
  }, 240_000);
});
