/**
 * The providers' rate-limit headers slow the whole fleet (`modelCapacity.followProviderHeaders`),
 * on the dev server: two worker processes (`runWorker` with `TURNPIKE_MODEL_FOLLOW_PROVIDER_HEADERS`)
 * share a model queue against a fake OpenAI that admits 3 requests per 5 s window, says so in
 * `x-ratelimit-remaining-tokens` / `x-ratelimit-reset-tokens` on each 200, and answers requests
 * over it with a 429 and `retry-after`. With the option, the model queue's governor sets the
 * queue's rate to 0 on the server when the provider says no token is left (read back with
 * `describeTaskQueue`), the provider sees far fewer 429s than without it, the worker process that
 * reported the pause is SIGKILLed while it holds and the other restores the operator's rate (and
 * its reason) when the window resets. An in-process worker shows the same for Anthropic's headers.
 */
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { describe, expect, it, inject } from 'vitest';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { GOVERNOR_REASON_PREFIX, modelGovernorId, modelGovernorStateQuery } from '../../workflows/capacity/model-governor.js';
import type { ScriptedResponse } from '../fake-provider/server.js';
import { startWorkerProcess, type WorkerProcess } from '../chaos/chaos-support.js';
import { useClientWithFakes } from '../support/client-with-fakes.js';
import { noteStarted } from '../support/history-recorder.js';
import { startModelQueueWorker } from '../support/model-queue-worker.js';

try {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
} catch {
  // Already installed in this process.
}

const ACTIVITY = temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY;
const { EventType } = temporal.api.enums.v1;
const suite = useClientWithFakes();

const WINDOW = { limit: 3, windowMs: 5_000 };
/** How long after a pause begins a request may still reach the provider (a task dispatched before it, started late). */
const PAUSE_SLACK_MS = 2_000;
const TURNS = 9;
const OPERATOR = { requestsPerSecond: 4, reason: 'operator: provider tier 1' };

/**
 * OpenAI's limit as a fixed window: `limit` requests a window, each 200 telling the tokens left
 * (100 a request) and when they reset; a request over it gets a 429 with `retry-after`.
 */
function windowLimit({ limit, windowMs }: { limit: number; windowMs: number }) {
  let windowStart = 0;
  let used = 0;
  const admitted: number[] = [];
  const rejectedAt: number[] = [];
  const seconds = (ms: number) => `${(Math.max(ms, 1) / 1_000).toFixed(3)}s`;
  return {
    admitted,
    rejectedAt,
    respond(): ScriptedResponse {
      const now = Date.now();
      if (now >= windowStart + windowMs) {
        windowStart = now;
        used = 0;
      }
      const resetMs = windowStart + windowMs - now;
      if (used >= limit) {
        rejectedAt.push(now);
        return { status: 429, headers: { 'retry-after': String(Math.ceil(resetMs / 1_000)), 'x-ratelimit-remaining-tokens': '0', 'x-ratelimit-reset-tokens': seconds(resetMs) } };
      }
      used++;
      admitted.push(now);
      return { text: 'ok', headers: { 'x-ratelimit-limit-tokens': String(limit * 100), 'x-ratelimit-remaining-tokens': String((limit - used) * 100), 'x-ratelimit-reset-tokens': seconds(resetMs) } };
    },
  };
}

async function queueRate(modelQueue: string) {
  const described = await suite.client.workflowService.describeTaskQueue({ namespace: inject('temporalNamespace'), taskQueue: { name: modelQueue }, taskQueueType: ACTIVITY, reportConfig: true });
  const limit = described.config?.queueRateLimit;
  return { requestsPerSecond: limit?.rateLimit ? (limit.rateLimit.requestsPerSecond ?? 0) : null, reason: limit?.metadata?.reason || null };
}

async function setQueueRate(modelQueue: string, requestsPerSecond: number, reason: string) {
  await suite.client.workflowService.updateTaskQueueConfig({
    namespace: inject('temporalNamespace'),
    identity: 'test-operator',
    taskQueue: modelQueue,
    taskQueueType: ACTIVITY,
    updateQueueRateLimit: { rateLimit: { requestsPerSecond }, reason },
  });
}

async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** `TURNS` turns queued on a model queue with the operator's rate, then two worker processes; `during` runs while they serve them. */
async function burst(follow: boolean, during?: (context: { modelQueue: string; processes: WorkerProcess[] }) => Promise<void>, afterTurns?: (modelQueue: string) => Promise<void>) {
  const taskQueue = `test-${randomUUID()}`;
  const modelQueue = `${taskQueue}-models`;
  await setQueueRate(modelQueue, OPERATOR.requestsPerSecond, OPERATOR.reason);
  const limit = windowLimit(WINDOW);
  suite.fake.setDefault('openai', () => limit.respond());
  const turnpike = new TurnpikeClient({ client: suite.client, taskQueue, modelTaskQueue: modelQueue });
  const handles: WorkflowHandle[] = [];
  for (let index = 0; index < TURNS; index++) {
    const handle = await turnpike.startTurn({ model: { provider: 'openai', model: 'gpt-4.1-mini' }, messages: [{ role: 'user', content: `question ${index}` }] }, { turnId: `headers-${randomUUID()}` });
    noteStarted(handle);
    handles.push(handle);
  }
  const env = {
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_NAMESPACE: inject('temporalNamespace'),
    TURNPIKE_TASK_QUEUE: taskQueue,
    WORKFLOW_BUNDLE: inject('workflowBundlePath'),
    TURNPIKE_MODEL_TASK_QUEUE: modelQueue,
    TURNPIKE_MODEL_MAX_CONCURRENT_CALLS: '2',
    ...(follow ? { TURNPIKE_MODEL_FOLLOW_PROVIDER_HEADERS: 'true' } : {}),
  };
  const processes = await Promise.all([0, 1].map(() => startWorkerProcess(env, 'test/support/env-worker-process.ts')));
  try {
    await during?.({ modelQueue, processes });
    const results = await Promise.all(handles.map((handle) => handle.result()));
    expect(results.map((result) => result.status)).toEqual(handles.map(() => 'completed'));
    expect(limit.admitted.length).toBe(TURNS);
    // While a worker still polls the turns' queue, where the governor's restore runs.
    await afterTurns?.(modelQueue);
    return { limit, modelQueue };
  } finally {
    await Promise.all(processes.map((process) => process.terminate()));
  }
}

function eventMs(event: temporal.api.history.v1.IHistoryEvent): number {
  return Number(event.eventTime!.seconds) * 1_000 + Math.floor((event.eventTime!.nanos ?? 0) / 1e6);
}

/** The events of every run of a queue's governor, first to last (it continues as new at the suite's 40 events). */
async function governorEvents(modelQueue: string): Promise<temporal.api.history.v1.IHistoryEvent[]> {
  const id = modelGovernorId(modelQueue);
  const latest = (await suite.client.workflow.getHandle(id).fetchHistory()).events ?? [];
  let runId: string | null | undefined = latest[0]!.workflowExecutionStartedEventAttributes!.firstExecutionRunId;
  const events: temporal.api.history.v1.IHistoryEvent[] = [];
  while (runId) {
    const run = (await suite.client.workflow.getHandle(id, runId).fetchHistory()).events ?? [];
    events.push(...run);
    runId = run.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
  }
  return events;
}

/** [paused at, restore began at] per pause, in ms since the epoch, from a governor's history. */
function pausesOf(events: temporal.api.history.v1.IHistoryEvent[]): Array<[number, number]> {
  const typeOf = new Map<string, string>();
  const pauses: Array<[number, number]> = [];
  let pausedAt: number | undefined;
  for (const event of events) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled) {
      typeOf.set(String(event.eventId), scheduled.activityType!.name!);
      if (scheduled.activityType!.name === 'restoreModelQueueRate' && pausedAt !== undefined) {
        pauses.push([pausedAt, eventMs(event)]);
        pausedAt = undefined;
      }
    }
    const completed = event.activityTaskCompletedEventAttributes;
    if (completed && typeOf.get(String(completed.scheduledEventId)) === 'pauseModelQueue') pausedAt = eventMs(event);
  }
  return pauses;
}

describe("the providers' rate-limit headers, followed by two worker processes", () => {
  let control = 0;

  it('without the option (the control): the calls over the window meet 429s, and the queue keeps the operator\'s rate', async () => {
    const { limit, modelQueue } = await burst(false);
    control = limit.rejectedAt.length;
    expect(control).toBeGreaterThanOrEqual(4);
    expect(await queueRate(modelQueue)).toEqual(OPERATOR);
    await expect(suite.client.workflow.getHandle(modelGovernorId(modelQueue)).describe()).rejects.toMatchObject({ name: 'WorkflowNotFoundError' });
  }, 180_000);

  it('with it: no token left pauses the queue on the server, the reporter is SIGKILLed while it holds, the other worker restores the operator\'s rate', async () => {
    let killedPid: number | undefined;
    let killedAt = 0;
    const { limit, modelQueue } = await burst(true, async ({ modelQueue, processes }) => {
      // The third call of the first window says no token is left (or a fourth, already dispatched,
      // meets the 429): the governor sets the rate to 0.
      const paused = await eventually(() => queueRate(modelQueue), (rate) => rate.requestsPerSecond === 0, 'the queue paused');
      expect(paused.reason).toContain(GOVERNOR_REASON_PREFIX);
      expect(paused.reason).toMatch(/x-ratelimit-remaining-tokens: 0|429 retry-after: \d/);
      // The process whose call reported it (the signal's identity is its client's, `<pid>@<host>`).
      const governor = suite.client.workflow.getHandle(modelGovernorId(modelQueue));
      noteStarted(governor);
      const signaled = (await governor.fetchHistory()).events!.find((event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED)!;
      killedPid = Number(signaled.workflowExecutionSignaledEventAttributes!.identity!.split('@')[0]);
      const reporter = processes.find((process) => process.child.pid === killedPid);
      expect(reporter).toBeDefined();
      // It dies while the queue is paused (checked below against the governor's history).
      killedAt = Date.now();
      await reporter!.kill();
      // The governor holds the operator's setting as the one to restore, while it pauses.
      const state = await governor.query(modelGovernorStateQuery);
      if (state.pausedUntilMs !== null) expect(state.previous).toEqual(OPERATOR);
      // The other process's worker restores the operator's rate once the window has reset.
      await eventually(() => queueRate(modelQueue), (rate) => rate.requestsPerSecond === OPERATOR.requestsPerSecond, 'the rate restored after the kill', 60_000);
    }, async (modelQueue) => {
      // Once the last window has reset the operator's setting is back, reason and all.
      expect(await eventually(() => queueRate(modelQueue), (rate) => rate.requestsPerSecond === OPERATOR.requestsPerSecond, 'the rate restored at the end')).toEqual(OPERATOR);
    });
    expect(killedPid).toBeGreaterThan(0);
    // The pauses, from the governor's history: from each pause's completion to its restore's scheduling.
    const pauses = pausesOf(await governorEvents(modelQueue));
    expect(pauses.length).toBeGreaterThanOrEqual(2);
    expect(pauses.some(([from, to]) => from <= killedAt && killedAt < to), 'the reporter was killed during a pause').toBe(true);
    // The provider hears nothing during a pause, past the calls already running or already handed
    // to a worker's poll when it began: two seconds' slack, as a loaded machine takes that long from
    // a dispatched task to its request (at half a second, a run beside other test files met two).
    const requests = [...limit.admitted, ...limit.rejectedAt];
    expect(pauses.flatMap(([from, to]) => requests.filter((at) => at > from + PAUSE_SLACK_MS && at < to))).toEqual([]);
    // Fewer 429s than without the option: only calls already taken when a pause began meet one.
    console.log(`provider-headers: 429s ${limit.rejectedAt.length} with the option, ${control} without; ${pauses.length} pauses`);
    // More than one run: the suite's server suggests continue-as-new at 40 events, and the pauses span them.
    expect(limit.rejectedAt.length).toBeLessThan(control);
  }, 240_000);
});

describe("Anthropic's rate-limit headers, followed by an in-process worker", () => {
  it('pause the queue until the reset they name, and a queue without an operator\'s rate is left without one', async () => {
    const taskQueue = `test-${randomUUID()}`;
    const modelQueue = `${taskQueue}-models`;
    let resetAt = 0;
    const seen: number[] = [];
    suite.fake.setDefault('anthropic', () => {
      seen.push(Date.now());
      resetAt = Math.ceil((Date.now() + 3_000) / 1_000) * 1_000;
      const reset = new Date(resetAt).toISOString().replace('.000Z', 'Z');
      return {
        text: 'ok',
        headers: {
          'anthropic-ratelimit-requests-limit': '50',
          'anthropic-ratelimit-requests-remaining': '49',
          'anthropic-ratelimit-requests-reset': reset,
          'anthropic-ratelimit-input-tokens-limit': '30000',
          'anthropic-ratelimit-input-tokens-remaining': '0',
          'anthropic-ratelimit-input-tokens-reset': reset,
        },
      };
    });
    const stop = await startModelQueueWorker(taskQueue, { taskQueue: modelQueue, followProviderHeaders: true });
    try {
      const turnpike = new TurnpikeClient({ client: suite.client, taskQueue, modelTaskQueue: modelQueue });
      const model = { provider: 'anthropic', model: 'claude-sonnet-4-5' } as const;
      const first = await turnpike.startTurn({ model, messages: [{ role: 'user', content: 'first' }] }, { turnId: `headers-anthropic-${randomUUID()}` });
      noteStarted(first);
      expect((await first.result()).status).toBe('completed');
      const paused = await eventually(() => queueRate(modelQueue), (rate) => rate.requestsPerSecond === 0, 'the queue paused');
      expect(paused.reason).toContain('anthropic-ratelimit-input-tokens-remaining: 0');
      noteStarted(suite.client.workflow.getHandle(modelGovernorId(modelQueue)));
      // A turn started during the pause waits in the queue until the reset, then is answered.
      const second = await turnpike.startTurn({ model, messages: [{ role: 'user', content: 'second' }] }, { turnId: `headers-anthropic-${randomUUID()}` });
      noteStarted(second);
      const firstReset = resetAt;
      expect((await second.result()).status).toBe('completed');
      expect(seen.length).toBe(2);
      expect(seen[1]!).toBeGreaterThanOrEqual(firstReset - 50);
      // No operator's rate before, none after: the setting is cleared once the second window resets.
      expect(await eventually(() => queueRate(modelQueue), (rate) => rate.requestsPerSecond === null, 'the pause cleared')).toEqual({ requestsPerSecond: null, reason: null });
    } finally {
      await stop();
    }
  }, 120_000);
});
