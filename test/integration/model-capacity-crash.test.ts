/**
 * A worker process SIGKILLed while model calls wait for capacity on the model task queue: the
 * waiting calls are activity tasks held by the Temporal server, not by the process, so another
 * worker takes them and every turn completes, with one call admitted by the provider per turn.
 *
 * The kill comes at a moment the test chooses, not at a time it guesses: the provider (the fake)
 * first stops admitting calls (it answers 429 with `retry-after`, as a real provider at its limit
 * does, so a call it refuses never ran), then the test waits until every call it did admit has
 * ended its turn, checks that calls are still queued in the server, and only then kills the
 * worker. No call admitted by the provider is left in flight in the dead process, so any second
 * admitted call of a turn would be a doubled call.
 */
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { describe, expect, it, inject } from 'vitest';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import type { Json } from '../fake-provider/server.js';
import { useClientWithFakes } from '../support/client-with-fakes.js';
import { startWorkerProcess, type WorkerProcess } from '../chaos/chaos-support.js';
import { noteStarted } from '../support/history-recorder.js';

const { EventType, TaskQueueType, TaskQueueKind } = temporal.api.enums.v1;

const TURNS = 8;
/** The model queue's rate while the first worker runs: one call every 2 s, so most wait in the server. */
const SLOW_RATE = 0.5;
/** Admitted calls before the provider closes and the first worker is killed. */
const ADMITTED_BEFORE_KILL = 2;

const suite = useClientWithFakes();

/** The question a request asks (each turn asks its own), from the last user message. */
function questionOf(body: Json): string {
  const users = (body.messages as Array<{ role: string; content: unknown }>).filter((message) => message.role === 'user');
  const content = users.at(-1)?.content;
  return typeof content === 'string' ? content : JSON.stringify(content);
}

/** Admitted (200) and refused (429) provider requests, by question. */
function requestsByQuestion(status: number): Map<string, number> {
  const counts = new Map<string, number>();
  for (const request of suite.fake.requests) {
    if (request.provider !== 'openai' || request.status !== status) continue;
    const question = questionOf(request.body);
    counts.set(question, (counts.get(question) ?? 0) + 1);
  }
  return counts;
}

async function until(done: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await done())) await new Promise((resolve) => setTimeout(resolve, 50));
}

function workerProcess(taskQueue: string, modelQueue: string, requestsPerSecond: number): Promise<WorkerProcess> {
  return startWorkerProcess(
    {
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_NAMESPACE: inject('temporalNamespace'),
      TURNPIKE_TASK_QUEUE: taskQueue,
      WORKFLOW_BUNDLE: inject('workflowBundlePath'),
      TURNPIKE_MODEL_TASK_QUEUE: modelQueue,
      TURNPIKE_MODEL_REQUESTS_PER_SECOND: String(requestsPerSecond),
    },
    'test/support/env-worker-process.ts',
  );
}

/** Activity tasks waiting in the server on `queue`, as its stats tell. */
async function backlogOf(queue: string): Promise<number> {
  const described = await suite.client.workflowService.describeTaskQueue({
    namespace: inject('temporalNamespace'),
    taskQueue: { name: queue, kind: TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
    taskQueueType: TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
    reportStats: true,
  });
  return Number(described.stats?.approximateBacklogCount ?? 0);
}

describe('a worker SIGKILLed while model calls wait for capacity on the model queue', () => {
  it('loses nothing and doubles nothing: another worker takes the queued calls, every turn completes with one admitted call', async () => {
    const taskQueue = `test-${randomUUID()}`;
    const modelQueue = `${taskQueue}-models`;
    let admitting = true;
    suite.fake.setDefault('openai', () =>
      admitting ? { text: 'ok' } : { status: 429, headers: { 'retry-after': '1', 'x-ratelimit-remaining-requests': '0' } },
    );
    const turnpike = new TurnpikeClient({ client: suite.client, taskQueue, modelTaskQueue: modelQueue });
    const handles = new Map<string, WorkflowHandle>();
    for (let index = 0; index < TURNS; index++) {
      const question = `crash question ${index}`;
      const handle = await turnpike.startTurn(
        { model: { provider: 'openai', model: 'gpt-4.1-mini' }, messages: [{ role: 'user', content: question }] },
        { turnId: `capacity-crash-${randomUUID()}`, tenant: 'acme', priority: 'batch' },
      );
      noteStarted(handle);
      handles.set(question, handle);
    }

    const first = await workerProcess(taskQueue, modelQueue, SLOW_RATE);
    let second: WorkerProcess | undefined;
    try {
      await until(() => requestsByQuestion(200).size >= ADMITTED_BEFORE_KILL);
      // The provider stops admitting: from here a call that reaches it is refused and never runs.
      admitting = false;
      const admittedBeforeKill = [...requestsByQuestion(200).keys()];
      // Every admitted call has ended its turn, so none is in flight in the process about to die.
      for (const question of admittedBeforeKill) expect((await handles.get(question)!.result()).status).toBe('completed');
      // The other turns' calls are waiting in the server.
      await until(async () => (await backlogOf(modelQueue)) > 0);
      expect(admittedBeforeKill.length).toBeLessThan(TURNS);

      await first.kill();
      admitting = true;
      second = await workerProcess(taskQueue, modelQueue, 5);

      const results = await Promise.all([...handles.values()].map((handle) => handle.result()));
      expect(results.map((result) => result.status)).toEqual([...handles.keys()].map(() => 'completed'));
      expect(results.map((result) => result.text)).toEqual([...handles.keys()].map(() => 'ok'));

      // Exactly one admitted call per turn at the provider, and one completed model step in its history.
      const admitted = requestsByQuestion(200);
      expect(Object.fromEntries(admitted)).toEqual(Object.fromEntries([...handles.keys()].map((question) => [question, 1])));
      for (const handle of handles.values()) {
        const events = (await handle.fetchHistory()).events ?? [];
        const modelSteps = new Set(
          events.filter((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel').map((event) => String(event.eventId)),
        );
        expect(modelSteps.size).toBe(1);
        const completed = events.filter(
          (event) => event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED && modelSteps.has(String(event.activityTaskCompletedEventAttributes?.scheduledEventId)),
        );
        expect(completed.length).toBe(1);
      }
      expect(suite.fake.requests.every((request) => request.errors.length === 0)).toBe(true);
    } finally {
      await first.kill();
      if (second) expect((await second.terminate()).output).toContain('stopped');
    }
  }, 240_000);
});
