/**
 * A sub-agent's parked approval survives its worker: a turn calls `billing_agent`, whose child
 * turn parks a card charge; the worker process is killed with SIGKILL and a new one started; the
 * charge is listed with its parent turn and approved through the HTTP API; the child and then the
 * parent complete, and every tool ran exactly once (one child turn, one charge).
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseTokenMap } from '../../api/auth.js';
import { buildApi } from '../../api/server.js';
import { TurnpikeClient, type ParkedCall } from '../../client/turnpike-client.js';
import { turnpikeDataConverter } from '../../content/data-converter.js';
import { startDevServer, type DevServer } from '../../scripts/dev-server.js';
import type { agentTurn } from '../../workflows/index.js';
import { startFakeProviderServer, type FakeProviderServer, type Json } from '../fake-provider/server.js';
import { sleep, startWorkerProcess, temporaryDirectory, writeBundle, type WorkerProcess } from './chaos-support.js';

let server: DevServer;
let fake: FakeProviderServer;
let client: Client;
let api: FastifyInstance;
let directory: string;
let bundlePath: string;
let worker: WorkerProcess | undefined;

const taskQueue = 'chaos-agent-tools';

beforeAll(async () => {
  directory = temporaryDirectory('turnpike-chaos-agents-');
  [server, fake, bundlePath] = await Promise.all([startDevServer(), startFakeProviderServer(), writeBundle(directory)]);
  client = new Client({ connection: await Connection.connect({ address: server.address }), dataConverter: turnpikeDataConverter });
  api = await buildApi({ client: new TurnpikeClient({ client, taskQueue }), tokens: parseTokenMap('alice-token:alice') });
  // The lead delegates to the billing agent, which charges once; each answers once its call has a result.
  fake.setDefault('openai', (body: Json) => {
    const system = String(body.messages[0]?.content ?? '');
    const answered = body.messages.some((message: { role: string }) => message.role === 'tool');
    if (system.includes('billing agent')) return answered ? { text: 'Charged 42.' } : { toolCalls: [{ name: 'charge_card', input: { amount: 42 } }] };
    return answered ? { text: 'Order 7 is paid.' } : { toolCalls: [{ id: 'call_billing', name: 'billing_agent', input: { order: '7' } }] };
  });
});

afterAll(async () => {
  await worker?.kill();
  await api?.close();
  await client?.connection.close();
  await fake?.close();
  await server?.stop();
  rmSync(directory, { recursive: true, force: true });
});

async function until<T>(what: string, read: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const value = await read().catch(() => undefined);
    if (value !== undefined) return value;
    await sleep(200);
  }
  throw new Error(`never saw ${what}`);
}

async function approvals(): Promise<ParkedCall[]> {
  const response = await api.inject({ method: 'GET', url: '/api/approvals', headers: { authorization: 'Bearer alice-token' } });
  expect(response.statusCode).toBe(200);
  return (response.json() as { calls: ParkedCall[] }).calls;
}

it('approves a sub-agent’s parked charge through the HTTP API after its worker was killed; both turns complete, every tool ran once', async () => {
  const records = path.join(directory, 'records');
  const env = {
    TEMPORAL_ADDRESS: server.address,
    TURNPIKE_TASK_QUEUE: taskQueue,
    CHAOS_RECORDS_DIR: records,
    WORKFLOW_BUNDLE: bundlePath,
    OPENAI_API_KEY: 'sk-test-chaos',
    OPENAI_BASE_URL: fake.openaiBaseURL,
  };
  worker = await startWorkerProcess(env, 'test/chaos/agent-worker-process.ts');
  const parent = await client.workflow.start<typeof agentTurn>('agentTurn', {
    taskQueue,
    workflowId: 'chaos-agent-parent',
    workflowTaskTimeout: '2s',
    args: [{ model: { provider: 'openai', model: 'gpt-4.1-mini' }, system: 'You are the lead.', messages: [{ role: 'user', content: 'Settle order 7.' }], tools: ['billing_agent'] }],
  });
  const childId = `${parent.workflowId}/call_billing`;
  const listed = await until('the child’s charge in the approvals listing', async () => (await approvals()).find((call) => call.turnWorkflowId === childId));
  expect(listed).toMatchObject({ toolName: 'charge_card', parentTurnId: parent.workflowId, parentToolCallId: 'call_billing' });

  await worker.kill();
  worker = await startWorkerProcess(env, 'test/chaos/agent-worker-process.ts');
  const decided = await api.inject({
    method: 'POST',
    url: `/api/turns/${encodeURIComponent(childId)}/approvals/${listed.approvalId}`,
    headers: { authorization: 'Bearer alice-token' },
    payload: { approved: true, inputHash: listed.inputHash },
  });
  expect(decided.statusCode, decided.body).toBe(200);

  const parentResult = await parent.result();
  const childResult = await client.workflow.getHandle<typeof agentTurn>(childId).result();
  expect(childResult).toMatchObject({ status: 'completed', text: 'Charged 42.' });
  expect(parentResult).toMatchObject({ status: 'completed', text: 'Order 7 is paid.' });
  expect(parentResult.toolCalls).toEqual([expect.objectContaining({ toolCallId: 'call_billing', output: 'Charged 42.', isError: false })]);
  // One child turn (found by its parent), one charge attempt, one effect.
  const children = await until('the child listed by its parent', async () => {
    const found = [];
    for await (const execution of client.workflow.list({ query: `TurnpikeParentTurnId="${parent.workflowId}"` })) found.push(execution.workflowId);
    return found.length > 0 ? found : undefined;
  });
  expect(children).toEqual([childId]);
  expect(readFileSync(path.join(records, 'attempts.log'), 'utf8').trim().split('\n')).toHaveLength(1);
  expect(readdirSync(path.join(records, 'effects'))).toEqual([encodeURIComponent(`${childId}/${childResult.toolCalls[0].toolCallId}`)]);
  expect(fake.requests.every((request) => request.errors.length === 0)).toBe(true);
});
