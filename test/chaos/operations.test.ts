/**
 * What operators rely on, on a worker process run by `runWorker` (as `npm run worker` is): the
 * health endpoint, the Prometheus metrics matching what the turns did, and a graceful stop on
 * SIGTERM that lets a running tool finish instead of cancelling it.
 */
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approveToolCallUpdate, turnpikeDataConverter, turnStateQuery, type agentTurn } from '../../client/index.js';
import { freePort, startDevServer, type DevServer } from '../../scripts/dev-server.js';
import type { AgentTurnResult } from '../../workflows/types/index.js';
import { sleep, startWorkerProcess, temporaryDirectory, writeBundle, type WorkerProcess } from './chaos-support.js';
import { sample } from '../support/prometheus.js';

const TASK_QUEUE = 'operations';

let directory: string;
let records: string;
let bundlePath: string;
let server: DevServer;
let client: Client;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  directory = temporaryDirectory('turnpike-operations-');
  records = path.join(directory, 'records');
  mkdirSync(path.join(records, 'effects'), { recursive: true });
  [bundlePath, server] = await Promise.all([writeBundle(directory), startDevServer({})]);
  client = new Client({ connection: await Connection.connect({ address: server.address }), dataConverter: turnpikeDataConverter });
});

afterAll(async () => {
  for (const worker of workers) await worker.kill();
  await client?.connection.close();
  await server?.stop();
  rmSync(directory, { recursive: true, force: true });
});

async function startWorker(extra: Record<string, string> = {}): Promise<WorkerProcess> {
  const worker = await startWorkerProcess({
    TEMPORAL_ADDRESS: server.address,
    TURNPIKE_TASK_QUEUE: TASK_QUEUE,
    CHAOS_RECORDS_DIR: records,
    WORKFLOW_BUNDLE: bundlePath,
    ...extra,
  });
  workers.push(worker);
  return worker;
}

function startTurn(workflowId: string, content: string) {
  return client.workflow.start<typeof agentTurn>('agentTurn', {
    taskQueue: TASK_QUEUE,
    workflowId,
    args: [{ model: { provider: 'scripted', model: 'demo' }, messages: [{ role: 'user', content }] }],
  });
}


function longTaskEvents(): Array<{ key: string; pid: number; event: string }> {
  try {
    return readFileSync(path.join(records, 'long-task.log'), 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line));
  } catch {
    return [];
  }
}

describe('operating a worker', () => {
  it('serves health and readiness, and metrics that match what its turns did', async () => {
    const [healthPort, metricsPort] = [await freePort(), await freePort()];
    // Whole dollars per million tokens, so every step's cost is a whole number of micro-USD.
    const price = { input: 3, output: 15 };
    const worker = await startWorker({
      TURNPIKE_HEALTH_PORT: String(healthPort),
      TURNPIKE_METRICS_ADDRESS: `127.0.0.1:${metricsPort}`,
      CHAOS_PRICES: JSON.stringify({ 'scripted:demo': price }),
    });
    expect(worker.ready.healthUrl).toBe(`http://127.0.0.1:${healthPort}`);
    const readiness = await fetch(`${worker.ready.healthUrl}/readyz`);
    expect(readiness.status).toBe(200);
    expect(await readiness.json()).toEqual({ state: 'RUNNING', taskQueue: TASK_QUEUE });
    expect((await fetch(`${worker.ready.healthUrl}/healthz`)).status).toBe(200);

    const amounts = [11, 12, 13];
    const handles = await Promise.all(amounts.map((amount) => startTurn(`metrics-${amount}`, `use charge_card with {"amount": ${amount}}`)));
    for (const handle of handles) {
      let approvalId: string | undefined;
      for (let attempt = 0; attempt < 300 && !approvalId; attempt++) {
        approvalId = (await handle.query(turnStateQuery).catch(() => undefined))?.pending[0]?.approvalId;
        if (!approvalId) await sleep(100);
      }
      await handle.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: approvalId!, approved: true, approver: 'ops' }] });
    }
    const results: AgentTurnResult[] = await Promise.all(handles.map((handle) => handle.result()));
    expect(results.map((result) => result.status)).toEqual(['completed', 'completed', 'completed']);

    const metrics = await (await fetch(worker.ready.metricsUrl!)).text();
    const model = { provider: 'scripted', model: 'demo' };
    expect(sample(metrics, 'turnpike_model_tokens', { ...model, direction: 'input' })).toBe(results.reduce((sum, result) => sum + result.usage.inputTokens, 0));
    expect(sample(metrics, 'turnpike_model_tokens', { ...model, direction: 'output' })).toBe(results.reduce((sum, result) => sum + result.usage.outputTokens, 0));
    expect(sample(metrics, 'turnpike_tool_attempts', { tool: 'charge_card', result: 'ok' })).toBe(3);
    // The cost counter, in micro-USD, adds up to what the turns' results say they cost.
    const microUsd = results.reduce((sum, result) => sum + price.input * result.usage.inputTokens + price.output * result.usage.outputTokens, 0);
    expect(microUsd).toBeGreaterThan(0);
    expect(results.map((result) => Math.round(result.usage.costUsd! * 1e6)).reduce((sum, cost) => sum + cost, 0)).toBe(microUsd);
    expect(sample(metrics, 'turnpike_model_cost_microusd', model)).toBe(microUsd);
    // From the workflows: each turn parked once and was approved by a person.
    expect(sample(metrics, 'turnpike_calls_parked', { tool: 'charge_card', kind: 'approval' })).toBe(3);
    expect(sample(metrics, 'turnpike_calls_unparked', { tool: 'charge_card', kind: 'approval', outcome: 'approved' })).toBe(3);
    expect(sample(metrics, 'turnpike_decisions', { tool: 'charge_card', outcome: 'approved', automatic: 'false' })).toBe(3);
    expect(sample(metrics, 'turnpike_park_wait_ms_count', { tool: 'charge_card', outcome: 'approved' })).toBe(3);
    // The SDK's own metrics come through the same endpoint.
    expect(metrics).toMatch(/^temporal_activity_execution_latency/m);
    await worker.terminate();
  });

  it('on SIGTERM lets a running tool finish before the worker exits, and the turn completes with one attempt', async () => {
    const first = await startWorker();
    const handle = await startTurn('graceful-1', 'use long_task with {"ms": 3000}');
    for (let attempt = 0; attempt < 300 && !longTaskEvents().some((event) => event.event === 'started'); attempt++) await sleep(50);
    expect(longTaskEvents()).toMatchObject([{ event: 'started', pid: first.child.pid }]);

    const stopped = await first.terminate();
    expect(stopped.code).toBe(0);
    expect(stopped.output).toContain('stopped');
    // The attempt ran to its end inside the worker that received SIGTERM.
    expect(longTaskEvents()).toMatchObject([
      { event: 'started', pid: first.child.pid },
      { event: 'finished', pid: first.child.pid },
    ]);

    await startWorker();
    const result = await handle.result();
    expect(result.status).toBe('completed');
    expect(result.toolCalls).toMatchObject([{ toolName: 'long_task', outcome: 'executed', output: { ranFor: 3000 } }]);
    expect(longTaskEvents().filter((event) => event.event === 'started')).toHaveLength(1);
  });
});
