/**
 * Model capacity shared by the fleet, on the dev server: three worker processes, each also polling
 * the model task queue (`runWorker` with `TURNPIKE_MODEL_*`), serve many turns at once against a fake
 * provider that enforces a request rate with real 429s and `retry-after`. With the queue's rate
 * configured (Temporal's task-queue rate limit, held by the server across every worker) the
 * provider sees no 429 and every turn completes with one admitted call; the same run without the
 * rate meets 429s. The model step's `ActivityTaskScheduled` shows its queue and the tenant's
 * priority; the queue is kept by child turns, a conversation's turns, hand-overs and forks; a
 * process's two Workers stop together; bad settings are refused at construction.
 *
 * The turns are started before the workers, so the model calls meet a backlog at once rather than
 * the pace at which this machine starts workflows: no timing is asserted, only counts.
 */
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { describe, expect, it, inject } from 'vitest';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { defineAgentTool } from '../../activities/agent-tools.js';
import { z } from 'zod';
import { createWorker } from '../../worker/create-worker.js';
import { ModelCapacityRunner, modelCapacityFromEnvironment, type ModelCapacityOptions } from '../../worker/model-capacity.js';
import { requestRateLimit } from '../fake-provider/rate-limit.js';
import { useClientWithFakes } from '../support/client-with-fakes.js';
import { startWorkerProcess } from '../chaos/chaos-support.js';
import { noteStarted } from '../support/history-recorder.js';
import { testTools, use } from '../support/test-tools.js';

// Workers log their state changes at INFO; errors still show (as in turnpike-harness.ts).
try {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
} catch {
  // Already installed in this process.
}

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const { EventType } = temporal.api.enums.v1;

/** The provider's limit: 8 requests in any 2 s. The queue's rate, 1 a second, stays well under it. */
const PROVIDER_LIMIT = { limit: 8, windowMs: 2_000 };
const QUEUE_RATE = 1;
const TURNS = 24;
const WORKERS = 3;

const suite = useClientWithFakes();

const research = defineAgentTool({
  name: 'research_capacity',
  description: 'Researches a target.',
  inputSchema: z.object({ target: z.string() }),
  agent: { model: { provider: 'scripted', model: 'demo' }, tools: ['record_action'] },
});

/** A Worker in this process on the turns' queue, also polling the model queue with `modelCapacity`. */
async function startInProcess(taskQueue: string, modelCapacity: ModelCapacityOptions): Promise<() => Promise<void>> {
  const native = await NativeConnection.connect({ address: inject('temporalAddress') });
  const worker = await createWorker({
    tools: [...testTools, research],
    taskQueue,
    connection: native,
    namespace: inject('temporalNamespace'),
    workflowBundle: { codePath: inject('workflowBundlePath') },
    modelCapacity,
  });
  const running = worker.run();
  return async () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running;
    await native.close();
  };
}

/**
 * Three worker processes (`runWorker`, test/support/env-worker-process.ts) on the turns'
 * queue, each polling the model queue as its `TURNPIKE_MODEL_*` variables say.
 */
async function startWorkerProcesses(taskQueue: string, modelQueue: string, requestsPerSecond: number | undefined): Promise<() => Promise<void>> {
  const env = {
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_NAMESPACE: inject('temporalNamespace'),
    TURNPIKE_TASK_QUEUE: taskQueue,
    WORKFLOW_BUNDLE: inject('workflowBundlePath'),
    TURNPIKE_MODEL_TASK_QUEUE: modelQueue,
    TURNPIKE_MODEL_MAX_CONCURRENT_CALLS: '4',
    ...(requestsPerSecond !== undefined ? { TURNPIKE_MODEL_REQUESTS_PER_SECOND: String(requestsPerSecond) } : {}),
  };
  const processes = await Promise.all(Array.from({ length: WORKERS }, () => startWorkerProcess(env, 'test/support/env-worker-process.ts')));
  return async () => {
    // SIGTERM: each process shuts down both its Workers and prints "stopped".
    const ended = await Promise.all(processes.map((worker) => worker.terminate()));
    for (const { output } of ended) expect(output).toContain('stopped');
  };
}

/** `TURNS` turns of two tenants started at once, then the worker processes; resolves with their results once all ended. */
async function burst(requestsPerSecond: number | undefined) {
  const taskQueue = `test-${randomUUID()}`;
  const modelQueue = `${taskQueue}-models`;
  const limit = requestRateLimit(PROVIDER_LIMIT);
  suite.fake.setDefault('openai', () => limit.respond());
  const turnpike = new TurnpikeClient({ client: suite.client, taskQueue, modelTaskQueue: modelQueue });
  const handles: WorkflowHandle[] = [];
  for (let index = 0; index < TURNS; index++) {
    const handle = await turnpike.startTurn(
      { model: { provider: 'openai', model: 'gpt-4.1-mini' }, messages: [{ role: 'user', content: `question ${index}` }] },
      { turnId: `capacity-${randomUUID()}`, tenant: index % 2 === 0 ? 'acme' : 'globex', priority: 'batch' },
    );
    noteStarted(handle);
    handles.push(handle);
  }
  const stop = await startWorkerProcesses(taskQueue, modelQueue, requestsPerSecond);
  try {
    const results = await Promise.all(handles.map((handle) => handle.result()));
    return { results, handles, limit, modelQueue, turnpike };
  } finally {
    await stop();
  }
}

async function historyOf(workflowId: string, runId?: string): Promise<HistoryEvent[]> {
  return (await suite.client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? [];
}

function scheduledModelSteps(events: HistoryEvent[]) {
  return events
    .filter((event) => event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
    .map((event) => event.activityTaskScheduledEventAttributes!)
    .filter((attributes) => attributes.activityType?.name === 'callModel');
}

describe('model calls on a rate-limited task queue shared by three worker processes', () => {
  it('meet no 429 with the rate configured, and every turn completes with one admitted call', async () => {
    const { results, handles, limit, modelQueue } = await burst(QUEUE_RATE);
    expect(results.map((result) => result.status)).toEqual(handles.map(() => 'completed'));
    expect(limit.rejected).toBe(0);
    expect(limit.admitted.length).toBe(TURNS);
    expect(limit.busiestWindow()).toBeLessThanOrEqual(PROVIDER_LIMIT.limit);
    expect(suite.fake.requests.filter((request) => request.provider === 'openai' && request.status === 200).length).toBe(TURNS);

    // The model step was scheduled on the model queue, with the turn's priority and its tenant as the fairness key.
    for (const [index, handle] of handles.entries()) {
      const steps = scheduledModelSteps(await historyOf(handle.workflowId));
      expect(steps.map((step) => step.taskQueue?.name)).toEqual([modelQueue]);
      expect(steps[0]!.priority?.priorityKey).toBe(5);
      expect(steps[0]!.priority?.fairnessKey).toBe(index % 2 === 0 ? 'acme' : 'globex');
      // No schedule-to-start limit: a call may wait for capacity as long as it must.
      expect(Number(steps[0]!.scheduleToStartTimeout?.seconds ?? 0)).toBe(0);
    }
  }, 180_000);

  it('meet 429s without the rate (the control): every worker calls as fast as it can', async () => {
    const { results, handles, limit } = await burst(undefined);
    expect(results.map((result) => result.status)).toEqual(handles.map(() => 'completed'));
    expect(limit.rejected).toBeGreaterThan(0);
    expect(limit.admitted.length).toBe(TURNS);
  }, 180_000);
});

/** Every run of a workflow, first to last, by the continue-as-new events of their histories. */
async function runsOf(workflowId: string): Promise<string[]> {
  const runs = [(await historyOf(workflowId))[0]!.workflowExecutionStartedEventAttributes!.firstExecutionRunId!];
  for (;;) {
    const next = (await historyOf(workflowId, runs.at(-1))).at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
    if (!next) return runs;
    runs.push(next);
  }
}

describe('the model queue of a turn', () => {
  it('is kept by its child turns, a conversation\'s turns, the runs of its hand-overs and its forks; a turn without one calls on its own queue', async () => {
    const taskQueue = `test-${randomUUID()}`;
    const modelQueue = `${taskQueue}-models`;
    const turnpike = new TurnpikeClient({ client: suite.client, taskQueue, modelTaskQueue: modelQueue });
    const stop = await startInProcess(taskQueue, { requestsPerSecond: 50 });
    try {
      const scripted = { provider: 'scripted', model: 'demo' } as const;
      // A child turn of an agent tool.
      const parentId = `capacity-parent-${randomUUID()}`;
      const parent = await turnpike.startTurn({ model: scripted, messages: [{ role: 'user', content: use('research_capacity', { target: 'acme' }) }] }, { turnId: parentId, tenant: 'acme' });
      noteStarted(parent);
      const parentResult = await parent.result();
      expect(parentResult.status).toBe('completed');
      const children = (await historyOf(parentId)).flatMap((event) => event.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId ?? []);
      expect(children.length).toBe(1);
      for (const workflowId of [parentId, ...children]) {
        const steps = scheduledModelSteps(await historyOf(workflowId));
        expect(steps.length).toBeGreaterThan(0);
        expect(new Set(steps.map((step) => step.taskQueue?.name))).toEqual(new Set([modelQueue]));
      }

      // A conversation's turn.
      const conversationId = `capacity-conversation-${randomUUID()}`;
      const sent = await turnpike.sendMessage({ conversationId, conversation: { model: scripted }, text: 'look up order 1001' });
      noteStarted(turnpike.conversation(conversationId));
      noteStarted(turnpike.turn(sent.turnWorkflowId));
      expect((await turnpike.turnResult(sent.turnWorkflowId, { waitForStart: true, pollIntervalMs: 50 })).status).toBe('completed');
      expect(new Set(scheduledModelSteps(await historyOf(sent.turnWorkflowId)).map((step) => step.taskQueue?.name))).toEqual(new Set([modelQueue]));
      await turnpike.conversation(conversationId).terminate('test over');

      // A turn that hands over to new runs.
      const longId = `capacity-long-${randomUUID()}`;
      const text = Array.from({ length: 24 }, (_, index) => `look up order ${1000 + (index % 3)}`).join(' then ');
      const long = await turnpike.startTurn({ model: scripted, messages: [{ role: 'user', content: text }], maxSteps: 30, historyLimit: { events: 100 } }, { turnId: longId });
      noteStarted(long);
      expect((await long.result()).status).toBe('completed');
      const runs = await runsOf(longId);
      expect(runs.length).toBeGreaterThan(1);
      for (const runId of runs) {
        const steps = scheduledModelSteps(await historyOf(longId, runId));
        expect(steps.length).toBeGreaterThan(0);
        expect(new Set(steps.map((step) => step.taskQueue?.name))).toEqual(new Set([modelQueue]));
      }

      // A fork, made by a client without a model queue: the original's is kept.
      const plain = new TurnpikeClient({ client: suite.client, taskQueue });
      const fork = await plain.forkTurn(longId, { atStep: 1, turnId: `${longId}/fork` });
      noteStarted(plain.turn(fork.turnId));
      await plain.turnResult(fork.turnId);
      expect(new Set(scheduledModelSteps(await historyOf(fork.turnId)).map((step) => step.taskQueue?.name))).toEqual(new Set([modelQueue]));

      // Without the option, the model step runs on the turn's own queue, as before.
      const ownId = `capacity-own-${randomUUID()}`;
      const own = await plain.startTurn({ model: scripted, messages: [{ role: 'user', content: 'look up order 1001' }] }, { turnId: ownId });
      noteStarted(own);
      expect((await own.result()).status).toBe('completed');
      expect(new Set(scheduledModelSteps(await historyOf(ownId)).map((step) => step.taskQueue?.name))).toEqual(new Set([taskQueue]));
    } finally {
      await stop();
    }
  }, 180_000);
});

describe('the two Workers of a process', () => {
  it('stop together: the model Worker shut down stops the turns\' Worker, whose run() then resolves', async () => {
    const native = await NativeConnection.connect({ address: inject('temporalAddress') });
    try {
      const worker = await createWorker({
        tools: testTools,
        taskQueue: `test-${randomUUID()}`,
        connection: native,
        namespace: inject('temporalNamespace'),
        workflowBundle: { codePath: inject('workflowBundlePath') },
        modelCapacity: { requestsPerSecond: 5 },
      });
      const running = worker.run();
      const runner = worker.options.plugins?.find((plugin): plugin is ModelCapacityRunner => plugin instanceof ModelCapacityRunner);
      expect(runner?.modelWorker.options.taskQueue).toBe(`${worker.options.taskQueue}-models`);
      await until(() => runner!.modelWorker.getState() === 'RUNNING');
      runner!.modelWorker.shutdown();
      await running;
      expect(worker.getState()).toBe('STOPPED');
      expect(runner!.modelWorker.getState()).toBe('STOPPED');
    } finally {
      await native.close();
    }
  }, 60_000);
});

/** Waits until `done` holds (checked every 50 ms). */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 50));
}

describe('bad model capacity settings', () => {
  const common = { tools: testTools, taskQueue: 'capacity-bad-input', workflowBundle: { code: '' } };

  it.each([
    [{ requestsPerSecond: 0 }, /requestsPerSecond: must be a finite number above 0 \(got 0\)/],
    [{ requestsPerSecond: -2 }, /requestsPerSecond: must be a finite number above 0 \(got -2\)/],
    [{ requestsPerSecond: Number.NaN }, /requestsPerSecond: must be a finite number above 0 \(got NaN\)/],
    [{ requestsPerSecond: Number.POSITIVE_INFINITY }, /requestsPerSecond: must be a finite number above 0 \(got Infinity\)/],
    [{ taskQueue: '' }, /modelCapacity.taskQueue: a task queue name must be a non-empty string/],
    [{ taskQueue: 'capacity-bad-input' }, /is the turns' own task queue/],
    [{ maxConcurrentCalls: 0 }, /maxConcurrentCalls: must be a whole number of at least 1/],
  ])('are refused by createWorker before it connects: %o', async (modelCapacity, message) => {
    await expect(createWorker({ ...common, modelCapacity: modelCapacity as ModelCapacityOptions })).rejects.toThrow(message);
  });

  it('an empty model queue is refused by TurnpikeClient', async () => {
    expect(() => new TurnpikeClient({ client: suite.client, taskQueue: 'capacity-bad-input', modelTaskQueue: '' })).toThrow(/Invalid modelTaskQueue: a task queue name must be a non-empty string/);
    expect(() => new TurnpikeClient({ client: suite.client, taskQueue: 'capacity-bad-input', modelTaskQueue: '  ' })).toThrow(/Invalid modelTaskQueue/);
  });

  it('runWorker reads them from the environment, and refuses a variable that is not a number above 0', () => {
    expect(modelCapacityFromEnvironment({})).toBeUndefined();
    expect(modelCapacityFromEnvironment({ TURNPIKE_MODEL_TASK_QUEUE: 'models', TURNPIKE_MODEL_REQUESTS_PER_SECOND: '2.5', TURNPIKE_MODEL_MAX_CONCURRENT_CALLS: '8' })).toEqual({ taskQueue: 'models', requestsPerSecond: 2.5, maxConcurrentCalls: 8 });
    expect(() => modelCapacityFromEnvironment({ TURNPIKE_MODEL_REQUESTS_PER_SECOND: 'fast' })).toThrow('TURNPIKE_MODEL_REQUESTS_PER_SECOND must be a number above 0 (got "fast")');
    expect(() => modelCapacityFromEnvironment({ TURNPIKE_MODEL_REQUESTS_PER_SECOND: '0' })).toThrow(/TURNPIKE_MODEL_REQUESTS_PER_SECOND must be a number above 0/);
  });
});
