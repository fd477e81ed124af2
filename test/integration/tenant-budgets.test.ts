/**
 * Budgets per tenant over time, on the dev server with a private PostgreSQL (scripts/postgres.ts):
 * two worker processes (`runWorker`, configured by `TURNPIKE_TENANT_BUDGETS*`) on task queues of
 * their own share one PostgreSQL store and a daily limit for tenant `acme`. Turns of acme run on
 * either until the tenant's spend reaches the limit; the next acme turn, on the other process,
 * parks a budget approval (`scope: 'tenant'`) before the provider sees any request; another
 * tenant's turn and a turn without a tenant go on. Approving lets the parked turn finish;
 * denying ends the next one `budget-exceeded`. A grant smaller than a step lets that step run and
 * the turn asks again (in-memory store, one worker). A model step whose attempt fails after its usage
 * was recorded is retried by Temporal and counted once. Bad settings are refused.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { createWorker } from '../../worker/create-worker.js';
import { PostgresTenantUsageStore } from '../../activities/tenant-budgets/postgres-tenant-usage-store.js';
import { InMemoryTenantUsageStore, periodKey, type TenantUsageRecord } from '../../activities/tenant-budgets/tenant-usage-store.js';
import { turnStateQuery } from '../../workflows/messages/definitions.js';
import type { agentTurn } from '../../workflows/index.js';
import { startPostgres, type Postgres } from '../../scripts/postgres.js';
import { startWorkerProcess, type WorkerProcess } from '../chaos/chaos-support.js';
import { useClientWithFakes } from '../support/client-with-fakes.js';
import { freeLowPort } from '../support/free-port.js';
import { noteStarted } from '../support/history-recorder.js';
import { waitForPending, waitForState } from '../support/turnpike-harness.js';
import { testTools } from '../support/test-tools.js';

try {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
} catch {
  // Already installed in this process.
}

const directory = mkdtempSync(path.join(tmpdir(), 'turnpike-tenant-budgets-'));
// PostgreSQL runs as the postgres user when we are root: it must reach <directory>/pg.
chmodSync(directory, 0o755);

/** Each model step of the fake: 100 input and 50 output tokens. acme may spend 400 a day: three steps reach it. */
const STEP_USAGE = { inputTokens: 100, outputTokens: 50 };
const ACME_LIMIT = 400;

const suite = useClientWithFakes();
let postgres: Postgres;
let connectionString: string;
let store: PostgresTenantUsageStore;
const queues = { a: `tenant-budgets-a-${randomUUID()}`, b: `tenant-budgets-b-${randomUUID()}` };
let workers: WorkerProcess[] = [];

beforeAll(async () => {
  const port = await freeLowPort();
  postgres = await startPostgres({ dataDirectory: path.join(directory, 'pg'), port, user: 'turnpike', password: 'budget-test', logFile: path.join(directory, 'postgres.log') });
  connectionString = `postgresql://turnpike:budget-test@127.0.0.1:${port}/postgres`;
  store = new PostgresTenantUsageStore({ connectionString });
  const env = (taskQueue: string) => ({
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_NAMESPACE: inject('temporalNamespace'),
    TURNPIKE_TASK_QUEUE: taskQueue,
    WORKFLOW_BUNDLE: inject('workflowBundlePath'),
    TURNPIKE_TENANT_BUDGETS: JSON.stringify({ acme: { totalTokens: ACME_LIMIT } }),
    TURNPIKE_TENANT_BUDGETS_POSTGRES_URL: connectionString,
  });
  // Two processes, started together: both create the tables at once.
  workers = await Promise.all([startWorkerProcess(env(queues.a), 'test/support/env-worker-process.ts'), startWorkerProcess(env(queues.b), 'test/support/env-worker-process.ts')]);
}, 180_000);

afterAll(async () => {
  for (const worker of workers) await worker.terminate();
  await store?.close();
  await postgres?.stop();
  rmSync(directory, { recursive: true, force: true });
}, 120_000);

/** The fake answers every OpenAI request with a short text and the steps' usage. */
function answerEveryRequest(): void {
  suite.fake.setDefault('openai', () => ({ text: 'Done.', usage: STEP_USAGE }));
}

/** The OpenAI requests whose messages carry `marker`. */
function requestsOf(marker: string): number {
  return suite.fake.requests.filter((request) => request.provider === 'openai' && JSON.stringify(request.body).includes(marker)).length;
}

async function startTurn(taskQueue: string, tenant: string | undefined, marker: string): Promise<WorkflowHandle<typeof agentTurn>> {
  const turnpike = new TurnpikeClient({ client: suite.client, taskQueue });
  const handle = await turnpike.startTurn(
    { model: { provider: 'openai', model: 'gpt-4.1-mini' }, messages: [{ role: 'user', content: `Answer briefly (${marker}).` }] },
    { turnId: `tenant-budget-${marker}`, ...(tenant ? { tenant } : {}) },
  );
  noteStarted(handle);
  return handle;
}

const today = () => periodKey('day', new Date());

describe('a daily budget of tenant acme, held by two worker processes sharing PostgreSQL', () => {
  it('runs acme turns on either process until the limit; the next parks before calling the provider, other tenants go on; approving lets it finish, denying ends the next budget-exceeded', async () => {
    answerEveryRequest();
    const run = randomUUID().slice(0, 8);
    // Three acme turns, alternating between the processes: 450 tokens, over the limit of 400.
    for (const [index, queue] of [queues.a, queues.b, queues.a].entries()) {
      const result = await (await startTurn(queue, 'acme', `acme-${run}-${index}`)).result();
      expect(result.status).toBe('completed');
      expect(result.usage).toMatchObject(STEP_USAGE);
    }
    expect(await store.spent('acme', today())).toMatchObject({ inputTokens: 300, outputTokens: 150, steps: 3 });

    // The fourth, on process b: parked before its model step reached the provider.
    const parkedMarker = `acme-${run}-parked`;
    const parked = await startTurn(queues.b, 'acme', parkedMarker);
    const [pending] = await waitForPending(parked);
    expect(pending).toMatchObject({
      kind: 'budget',
      toolCallId: 'budget-1',
      toolName: 'turnpike_budget',
      input: {
        scope: 'tenant',
        tenant: { name: 'acme', period: today() },
        exceeded: ['totalTokens'],
        spent: { inputTokens: 300, outputTokens: 150, wallTimeMs: 0, toolCalls: 0 },
        budget: { totalTokens: ACME_LIMIT },
        // A tenth of the limit, at least 1,000 tokens.
        extendBy: { totalTokens: 1_000 },
      },
    });
    expect(pending.reason).toContain('Tenant "acme" reached its budget');
    expect(requestsOf(parkedMarker)).toBe(0);
    const state = await parked.query(turnStateQuery);
    expect(state).toMatchObject({ status: 'awaiting-input', step: 0 });
    const turnpike = new TurnpikeClient({ client: suite.client, taskQueue: queues.b });
    const listed = await waitForListed(turnpike, parked.workflowId);
    expect(listed).toMatchObject({ kind: 'budget', approvalId: pending.approvalId, toolName: 'turnpike_budget', input: pending.input });

    // Another tenant and a turn without one are not held by acme's budget.
    const globex = await (await startTurn(queues.a, 'globex', `globex-${run}`)).result();
    expect(globex.status).toBe('completed');
    const untenanted = await (await startTurn(queues.b, undefined, `none-${run}`)).result();
    expect(untenanted.status).toBe('completed');
    expect(await store.spent('globex', today())).toMatchObject({ inputTokens: 100, outputTokens: 50, steps: 1 });
    // Still parked, and still no request.
    expect((await parked.query(turnStateQuery)).pending).toHaveLength(1);
    expect(requestsOf(parkedMarker)).toBe(0);

    // Approved: this turn may spend 1,000 tokens beyond the limit; its step runs once.
    await turnpike.approveToolCall(parked.workflowId, { approvalId: pending.approvalId!, approved: true, approver: 'carol' });
    const approved = await parked.result();
    expect(approved.status).toBe('completed');
    expect(approved.steps).toBe(1);
    expect(approved.usage).toMatchObject(STEP_USAGE);
    expect(approved.decisions).toEqual([expect.objectContaining({ toolCallId: 'budget-1', toolName: 'turnpike_budget', outcome: 'approved', approver: 'carol' })]);
    expect(JSON.stringify(approved.messages)).not.toContain('turnpike_budget');
    expect(requestsOf(parkedMarker)).toBe(1);
    expect(await store.spent('acme', today())).toMatchObject({ inputTokens: 400, outputTokens: 200, steps: 4 });

    // The tenant's limit did not change: the next acme turn (process a) asks again; denied, it ends budget-exceeded.
    const deniedMarker = `acme-${run}-denied`;
    const denied = await startTurn(queues.a, 'acme', deniedMarker);
    const [again] = await waitForPending(denied);
    expect(again).toMatchObject({ kind: 'budget', input: { scope: 'tenant', spent: { inputTokens: 400, outputTokens: 200 } } });
    await turnpike.approveToolCall(denied.workflowId, { approvalId: again.approvalId!, approved: false, approver: 'dave', reason: 'over for today' });
    const stopped = await denied.result();
    expect(stopped.status).toBe('budget-exceeded');
    expect(stopped.steps).toBe(0);
    expect(stopped.usage).toMatchObject({ inputTokens: 0, outputTokens: 0 });
    expect(stopped.decisions).toEqual([expect.objectContaining({ toolName: 'turnpike_budget', outcome: 'denied', approver: 'dave', reason: 'over for today' })]);
    expect((await denied.query(turnStateQuery)).pending).toEqual([]);
    expect(requestsOf(deniedMarker)).toBe(0);
    expect(await store.spent('acme', today())).toMatchObject({ inputTokens: 400, outputTokens: 200, steps: 4 });
  }, 180_000);
});

async function waitForListed(turnpike: TurnpikeClient, turnId: string) {
  for (let attempt = 0; attempt < 300; attempt++) {
    const calls = (await turnpike.listParkedCalls({ tenant: 'acme' })).filter((call) => call.turnWorkflowId === turnId);
    if (calls.length > 0) return calls[0];
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the listing never showed turn ${turnId}`);
}

/** A worker in this process on a queue of its own, with `tenantBudgets`; returns its queue and how to stop it. */
async function startInProcess(tenantBudgets: Parameters<typeof createWorker>[0]['tenantBudgets']): Promise<{ taskQueue: string; stop(): Promise<void> }> {
  const taskQueue = `tenant-budgets-in-process-${randomUUID()}`;
  const connection = await NativeConnection.connect({ address: inject('temporalAddress') });
  const worker = await createWorker({ tools: testTools, taskQueue, connection, namespace: inject('temporalNamespace'), workflowBundle: { codePath: inject('workflowBundlePath') }, tenantBudgets });
  const running = worker.run();
  return {
    taskQueue,
    async stop() {
      worker.shutdown();
      await running;
      await connection.close();
    },
  };
}

describe('a model step retried after its usage was recorded', () => {
  it('is counted once', async () => {
    answerEveryRequest();
    // The store records the first attempt's usage, then the attempt fails as if the connection broke after the commit.
    const records: Array<{ step: TenantUsageRecord; added: boolean }> = [];
    const failingOnce = {
      spent: (tenant: string, period: string) => store.spent(tenant, period),
      async record(step: TenantUsageRecord) {
        const added = await store.record(step);
        records.push({ step, added });
        if (records.length === 1) throw new Error('connection lost after the commit');
        return added;
      },
    };
    const worker = await startInProcess({ store: failingOnce, limits: { initech: { totalTokens: 10_000 } } });
    try {
      const marker = `initech-${randomUUID().slice(0, 8)}`;
      const result = await (await startTurn(worker.taskQueue, 'initech', marker)).result();
      expect(result.status).toBe('completed');
      expect(result.steps).toBe(1);
      // Two attempts reached the provider; the store counted the step once, under the same key.
      expect(requestsOf(marker)).toBe(2);
      expect(records.map(({ added }) => added)).toEqual([true, false]);
      expect(records[0]!.step.key).toBe(records[1]!.step.key);
      expect(records[0]!.step.key).toMatch(new RegExp(`^tenant-budget-${marker}/[0-9a-f-]+/1$`));
      expect(await store.spent('initech', today())).toMatchObject({ inputTokens: 100, outputTokens: 50, steps: 1 });
    } finally {
      await worker.stop();
    }
  }, 120_000);
});

describe('a grant smaller than a step (in-memory store, one worker)', () => {
  it('lets the next step run, then the turn asks again; denied, it ends budget-exceeded with its tool call answered', async () => {
    const memory = new InMemoryTenantUsageStore();
    const worker = await startInProcess({ store: memory, limits: { hooli: { totalTokens: 0 } } });
    try {
      const marker = `hooli-${randomUUID().slice(0, 8)}`;
      suite.fake.script('openai', [
        { text: 'Recording.', toolCalls: [{ name: 'record_action', input: { action: 'grant' } }], usage: STEP_USAGE },
        { text: 'Recorded.', usage: STEP_USAGE },
      ]);
      const turnpike = new TurnpikeClient({ client: suite.client, taskQueue: worker.taskQueue });
      const handle = await startTurn(worker.taskQueue, 'hooli', marker);
      const [first] = await waitForPending(handle);
      expect(first).toMatchObject({ toolCallId: 'budget-1', input: { scope: 'tenant', exceeded: ['totalTokens'], budget: { totalTokens: 0 }, extendBy: { totalTokens: 1_000 } } });
      // Approved with 100 tokens, less than the step's 150: the step runs, and the next asks again.
      await turnpike.extendBudget(handle.workflowId, first.approvalId!, { totalTokens: 100 }, { approver: 'erin' });
      const state = await waitForState(handle, (current) => current.pending[0]?.toolCallId === 'budget-2');
      expect(state.step).toBe(1);
      expect(state.pending[0]!.input).toMatchObject({ scope: 'tenant', spent: { inputTokens: 100, outputTokens: 50 } });
      expect(requestsOf(marker)).toBe(1);
      await turnpike.approveToolCall(handle.workflowId, { approvalId: state.pending[0]!.approvalId!, approved: false, approver: 'erin' });
      const result = await handle.result();
      expect(result.status).toBe('budget-exceeded');
      expect(result.steps).toBe(1);
      expect(result.toolCalls.map((call) => call.toolName)).toEqual(['record_action']);
      expect(result.messages.map((message) => message.role)).toEqual(['assistant', 'tool']);
      expect(requestsOf(marker)).toBe(1);
      expect(await memory.spent('hooli', today())).toMatchObject({ inputTokens: 100, outputTokens: 50, steps: 1 });
    } finally {
      await worker.stop();
    }
  }, 120_000);
});

describe('bad tenant budget settings', () => {
  it('are refused with clear errors before anything connects', async () => {
    const options = (tenantBudgets: unknown) => ({ tools: testTools, taskQueue: 'never-polled', tenantBudgets: tenantBudgets as never });
    await expect(createWorker(options({ store, limits: { acme: { totalTokens: -1 } } }))).rejects.toThrow('Invalid tenantBudgets: limits["acme"].totalTokens must be a non-negative whole number of tokens (got -1)');
    await expect(createWorker(options({ store, limits: { acme: { costUsd: Number.NaN } } }))).rejects.toThrow('Invalid tenantBudgets: limits["acme"].costUsd must be a non-negative number of USD (got NaN)');
    await expect(createWorker(options({ store, period: 'week' }))).rejects.toThrow('Invalid tenantBudgets.period: expected day or month (got "week")');
    await expect(createWorker(options({ limits: {} }))).rejects.toThrow(TypeError);
    // A worker process given bad variables exits at start, naming them.
    const bad = startWorkerProcess(
      { TEMPORAL_ADDRESS: inject('temporalAddress'), TURNPIKE_TASK_QUEUE: 'never-polled', WORKFLOW_BUNDLE: inject('workflowBundlePath'), TURNPIKE_TENANT_BUDGETS: '{"acme":{"totalTokens":-5}}', TURNPIKE_TENANT_BUDGETS_POSTGRES_URL: connectionString },
      'test/support/env-worker-process.ts',
    );
    await expect(bad).rejects.toThrow(/limits\["acme"\]\.totalTokens must be a non-negative whole number/);
    const noStore = startWorkerProcess(
      { TEMPORAL_ADDRESS: inject('temporalAddress'), TURNPIKE_TASK_QUEUE: 'never-polled', WORKFLOW_BUNDLE: inject('workflowBundlePath'), TURNPIKE_TENANT_BUDGETS: '{"acme":{"totalTokens":5}}' },
      'test/support/env-worker-process.ts',
    );
    await expect(noStore).rejects.toThrow(/needs TURNPIKE_TENANT_BUDGETS_POSTGRES_URL/);
  }, 60_000);
});
