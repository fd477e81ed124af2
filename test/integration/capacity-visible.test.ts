/**
 * A model step that waits for model capacity is shown, on the dev server. A turn started with a
 * `modelTaskQueue` that no worker polls yet keeps its model step queued: `waitingForCapacity`
 * says since when (the `ActivityTaskScheduled` of its step) and on which queue, and so do
 * `turnpike show`, `GET /api/turns/:id` and the dashboard's page of the turn (in Chromium), while
 * `turnState` is unchanged. Once a worker process
 * polls the model queue (`runWorker` with `TURNPIKE_MODEL_TASK_QUEUE` and its metrics endpoint) the
 * turn completes and nothing shows it any more; the worker's metrics count the calls admitted, how
 * long they waited, and the provider's 429, by tenant and queue. A step retried after a 429 is not
 * shown during its backoff, and is again (attempt 2, since it was due) once due with no worker
 * polling. (A step on the turn's own queue is never shown: test/unit/capacity-wait.test.ts.)
 *
 * No worker polling the model queue is what keeps the step queued, reliably: a very low rate would
 * let it through at a moment this test cannot control. No timing is asserted.
 */
import { existsSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { chromium, type Browser } from 'playwright-core';
import type { FastifyInstance } from 'fastify';
import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseTokenMap } from '../../api/auth.js';
import { buildApi } from '../../api/server.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { capacityWaitOf, type WaitingForCapacity } from '../../client/capacity-wait.js';
import { NativeConnection } from '@temporalio/worker';
import { createWorker } from '../../worker/create-worker.js';
import { startWorkerProcess } from '../chaos/chaos-support.js';
import { cliRunner } from '../support/cli-runner.js';
import { freePort } from '../../scripts/dev-server.js';
import { useTurnpikeWithFakes } from '../support/turnpike-harness.js';
import { testTools } from '../support/test-tools.js';
import { sample } from '../support/prometheus.js';

const { EventType } = temporal.api.enums.v1;
const suite = useTurnpikeWithFakes({ tools: testTools });
let modelQueue: string;
let capacityClient: TurnpikeClient;
let api: FastifyInstance;
let base: string;
let browser: Browser;
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const { cli, cliJson } = cliRunner(() => capacityClient);

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`No Chromium at ${CHROMIUM}: apt-get install chromium, or set CHROMIUM_PATH`);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
  modelQueue = `${suite.turnpike.taskQueue}-models`;
  capacityClient = new TurnpikeClient({ client: suite.turnpike.client, taskQueue: suite.turnpike.taskQueue, modelTaskQueue: modelQueue });
  api = await buildApi({ client: capacityClient, tokens: parseTokenMap('alice-token:alice') });
  base = await api.listen({ host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  await browser?.close();
  await api?.close();
});

/** Reads `waitingForCapacity` until it is there (for `attempt`): the turn's first workflow task schedules the step. */
async function untilWaiting(client: TurnpikeClient, turnId: string, attempt = 1): Promise<WaitingForCapacity> {
  for (let read = 0; read < 300; read++) {
    const waiting = await client.waitingForCapacity(turnId);
    if (waiting?.attempt === attempt) return waiting;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${turnId}: its model step was never shown waiting for capacity`);
}

/** A Worker in this process on the turns' queue that also polls the model queue; resolves with its stop. */
async function startModelWorker(): Promise<() => Promise<void>> {
  const native = await NativeConnection.connect({ address: inject('temporalAddress') });
  const worker = await createWorker({
    tools: testTools,
    taskQueue: suite.turnpike.taskQueue,
    connection: native,
    namespace: inject('temporalNamespace'),
    workflowBundle: { codePath: inject('workflowBundlePath') },
    modelCapacity: { taskQueue: modelQueue },
  });
  const running = worker.run();
  return async () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running;
    await native.close();
  };
}

/** Describes the turn until its pending model step satisfies `predicate`. */
async function untilDescribed(turnId: string, predicate: (activity: temporal.api.workflow.v1.IPendingActivityInfo) => boolean) {
  for (let read = 0; read < 300; read++) {
    const description = await capacityClient.turn(turnId).describe();
    if (description.raw.pendingActivities?.some(predicate)) return description;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${turnId}: its model step never reached the state expected`);
}

function millis(timestamp: { seconds?: unknown; nanos?: number | null } | null | undefined): number {
  return timestamp ? Number(timestamp.seconds) * 1_000 + Math.floor((timestamp.nanos ?? 0) / 1e6) : 0;
}

async function getTurn(turnId: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${base}/api/turns/${encodeURIComponent(turnId)}`, { headers: { authorization: 'Bearer alice-token' } });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}


describe('a model step waiting for capacity', () => {
  it('is shown by waitingForCapacity, turnpike show, GET /api/turns/:id and the dashboard until a worker takes it; the worker counts it', async () => {
    const turnId = `capacity-visible-${randomUUID()}`;
    // The first attempt meets the provider's 429, the second is answered.
    suite.fake.script('openai', [{ status: 429, headers: { 'retry-after': '1' } }, { text: 'admitted at last' }]);
    const handle = await capacityClient.startTurn(
      { model: { provider: 'openai', model: 'gpt-4.1-mini' }, messages: [{ role: 'user', content: 'one question' }] },
      { turnId, startedBy: 'alice', tenant: 'acme', priority: 'interactive' },
    );

    const waiting = await untilWaiting(capacityClient, turnId);
    expect(waiting).toEqual({ since: expect.any(String), taskQueue: modelQueue, attempt: 1 });
    // Since when: the time the turn scheduled its model step, as its history records it.
    const events = (await handle.fetchHistory()).events ?? [];
    const scheduled = events.find((event) => event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)!;
    expect(scheduled.activityTaskScheduledEventAttributes?.activityType?.name).toBe('callModel');
    expect(scheduled.activityTaskScheduledEventAttributes?.taskQueue?.name).toBe(modelQueue);
    const scheduledAt = Number(scheduled.eventTime!.seconds) * 1_000 + Math.floor((scheduled.eventTime!.nanos ?? 0) / 1e6);
    expect(waiting.since).toBe(new Date(scheduledAt).toISOString());
    // turnState is the workflow's own view, unchanged: a running turn in its first step.
    const state = await capacityClient.turnState(turnId);
    expect(state).toMatchObject({ status: 'running', step: 1, pending: [] });
    expect(state).not.toHaveProperty('waitingForCapacity');

    const shown = await cli('show', turnId);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(`waiting for model capacity since ${waiting.since} on task queue ${modelQueue}`);
    const shownJson = await cliJson<{ waitingForCapacity?: WaitingForCapacity }>('show', turnId);
    expect(shownJson.waitingForCapacity).toEqual(waiting);
    const read = await getTurn(turnId);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ turnId, state: { status: 'running' }, waitingForCapacity: waiting });
    // The dashboard's page of the turn says it.
    const page = await browser.newPage();
    await page.goto(`${base}/?turn=${encodeURIComponent(turnId)}`);
    await page.fill('#token', 'alice-token');
    await page.click('#login-form button[type=submit]');
    const notice = page.locator('#turn-capacity:not([hidden])');
    await notice.waitFor();
    expect(await notice.textContent()).toMatch(new RegExp(`^Waiting for model capacity since .+ on ${modelQueue}\\.$`));
    await page.close();

    // A worker process polls the model queue: the step is admitted, retried after the 429, answered.
    const metricsPort = await freePort();
    const worker = await startWorkerProcess(
      {
        TEMPORAL_ADDRESS: inject('temporalAddress'),
        TEMPORAL_NAMESPACE: inject('temporalNamespace'),
        WORKFLOW_BUNDLE: inject('workflowBundlePath'),
        TURNPIKE_TASK_QUEUE: suite.turnpike.taskQueue,
        TURNPIKE_MODEL_TASK_QUEUE: modelQueue,
        TURNPIKE_METRICS_ADDRESS: `127.0.0.1:${metricsPort}`,
      },
      'test/support/env-worker-process.ts',
    );
    try {
      const result = await handle.result();
      expect(result.status).toBe('completed');
      expect(result.text).toBe('admitted at last');
      expect(await capacityClient.waitingForCapacity(turnId)).toBeUndefined();
      const after = await getTurn(turnId);
      expect(after.body).not.toHaveProperty('waitingForCapacity');
      expect(after.body).toMatchObject({ state: { status: 'completed' } });

      const metrics = await (await fetch(worker.ready.metricsUrl!)).text();
      const labels = { tenant: 'acme', queue: modelQueue };
      expect(sample(metrics, 'turnpike_model_calls_admitted', labels)).toBe(2);
      expect(sample(metrics, 'turnpike_model_rate_limited', labels)).toBe(1);
      expect(sample(metrics, 'turnpike_model_capacity_wait_ms_count', labels)).toBe(2);
    } finally {
      await worker.terminate();
    }
    const ended = await cli('show', turnId);
    expect(ended.stdout).not.toContain('waiting for model capacity');
  });


  it('shows a retried step again once its backoff is over, with its attempt, since it was due', async () => {
    const turnId = `capacity-retry-${randomUUID()}`;
    // The first attempt meets a 429 that asks for 10 s: the model Worker stops during the backoff.
    suite.fake.script('openai', [{ status: 429, headers: { 'retry-after': '10' } }, { text: 'the retry' }]);
    const stopModelWorker = await startModelWorker();
    const handle = await capacityClient.startTurn(
      { model: { provider: 'openai', model: 'gpt-4.1-mini' }, messages: [{ role: 'user', content: 'again' }] },
      { turnId, startedBy: 'alice', tenant: 'globex' },
    );
    const description = await untilDescribed(turnId, (activity) => activity.attempt === 2);
    await stopModelWorker();
    // The server's own description of the retry: scheduled, due at the end of its backoff.
    const [retry] = description.raw.pendingActivities!;
    expect(retry!.state).toBe(temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED);
    const dueMs = Math.max(millis(retry!.scheduledTime), millis(retry!.nextAttemptScheduleTime));
    expect(dueMs).toBeGreaterThan(millis(retry!.lastAttemptCompleteTime));
    // In its backoff it waits for its time, not for capacity; once due, for capacity.
    expect(capacityWaitOf(description, dueMs - 1)).toBeUndefined();
    expect(capacityWaitOf(description, dueMs)).toEqual({ since: new Date(dueMs).toISOString(), taskQueue: modelQueue, attempt: 2 });

    // No worker polls the model queue now: the due retry waits there, and is shown.
    const waiting = await untilWaiting(capacityClient, turnId, 2);
    expect(waiting).toEqual({ since: new Date(dueMs).toISOString(), taskQueue: modelQueue, attempt: 2 });
    const stopAgain = await startModelWorker();
    try {
      expect((await handle.result()).text).toBe('the retry');
    } finally {
      await stopAgain();
    }
    expect(await capacityClient.waitingForCapacity(turnId)).toBeUndefined();
  });
});
