/**
 * A turn's own history must always replay. Two ways it did not, both in the SDK and both met by
 * turnpike's design (docs/versioning.md): a local activity's result that a query split from its
 * marker (turns run no local activity: the tool description and each step's approval policies
 * ride on the model step's activity, activities/model-step.ts), and an update accepted by a
 * worker with an empty cache after commands it precedes on replay (readers read by query, so the
 * only updates are decisions). This generator produces both shapes on purpose, many times over:
 * a slow approval policy at every step while a reader follows the turn's stream, queries arrive,
 * bad decisions arrive as signals and as updates (refused), and the worker is restarted every 25
 * turns, so the turns in flight are picked up by a worker with an empty cache. At
 * the end every history is replayed and every ended turn answers its `turnState` query.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { WorkflowHandle } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { defineTool } from '../../activities/tools.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { turnpikeDataConverter } from '../../content/data-converter.js';
import { approveToolCallSignal, approveToolCallUpdate, turnStateQuery } from '../../workflows/messages/definitions.js';
import { startTurnpike, type TurnpikeHarness } from '../support/turnpike-harness.js';
import { use } from '../support/test-tools.js';

const TURNS = 200;
const CONCURRENCY = 8;
const RESTART_EVERY = 25;
/**
 * One bad signal and one bad update per turn this often. Faster, a task slowed by the loaded
 * machine meets Temporal's default of 100 events buffered while a task runs, and the server
 * fails that task (`FORCE_CLOSE_COMMAND`) to write them: a platform limit, met by the test's
 * own flood (12 signals a second to one turn), not by the turn's code.
 */
const SIGNAL_EVERY_MS = 200;

/** A policy slow enough that queries, polls, signals and updates arrive while it runs. */
const slowPolicy = defineTool({
  name: 'slow_policy',
  description: 'Its approval policy takes a while; parks when asked to.',
  inputSchema: z.object({ n: z.number().int(), park: z.boolean() }),
  approval: async (input) => {
    await sleep(20 + ((input.n * 37) % 80));
    return input.park ? 'user-approval' : 'approved';
  },
  async execute(input) {
    return { ran: input.n };
  },
});

const quickTool = defineTool({
  name: 'quick_tool',
  description: 'Runs at once.',
  inputSchema: z.object({ n: z.number().int() }),
  async execute(input) {
    return { quick: input.n };
  },
});

interface Noise {
  queries: number;
  signals: number;
  refusedUpdates: number;
  readerEvents: number;
  readersFinished: number;
}

/** Queries, bad signals and bad updates in a loop until `done`; one stream reader, to the turn's last event. */
function makeNoise(turnpike: TurnpikeClient, handle: WorkflowHandle, done: AbortSignal): { noise: Noise; finished: Promise<void> } {
  const noise: Noise = { queries: 0, signals: 0, refusedUpdates: 0, readerEvents: 0, readersFinished: 0 };
  const bad = { approvalId: 'apr_unknown', approved: true };
  const loop = async (work: () => Promise<void>, pauseMs: number) => {
    while (!done.aborted) {
      await work().catch(() => undefined);
      await sleep(pauseMs);
    }
  };
  const reader = (async () => {
    let offset = 0;
    for await (const record of turnpike.turnEvents(handle.workflowId)) {
      expect(record.offset).toBe(offset++);
      noise.readerEvents++;
      if (record.event.type === 'turn-finished') noise.readersFinished++;
    }
  })();
  const finished = Promise.all([
    reader,
    loop(async () => {
      await handle.query(turnStateQuery);
      noise.queries++;
    }, 200),
    loop(async () => {
      await handle.signal(approveToolCallSignal, bad);
      noise.signals++;
    }, SIGNAL_EVERY_MS),
    loop(async () => {
      await handle.executeUpdate(approveToolCallUpdate, { args: [bad] }).catch(() => {
        noise.refusedUpdates++;
      });
    }, SIGNAL_EVERY_MS),
  ]).then(() => undefined);
  // Awaited once the turn has ended; a reader that fails before then fails the test there, not as an unhandled rejection.
  finished.catch(() => undefined);
  return { noise, finished };
}

describe('determinism under load', () => {
  let harness: TurnpikeHarness;
  let turnpike: TurnpikeClient;

  beforeAll(async () => {
    // Restarts are graceful, as a deploy's are: running model steps and tools finish first. Every
    // restart hands the turns in flight to a worker with an empty cache. (A cache smaller than the
    // turns in flight would do it too, but then every query replays a whole history.)
    harness = await startTurnpike({ tools: [slowPolicy, quickTool], shutdownGraceTime: '10s' });
    turnpike = new TurnpikeClient({ client: harness.client, taskQueue: harness.taskQueue });
  });
  afterAll(async () => {
    await harness?.stop();
  });

  it(`${TURNS} turns with a slow policy at every step, readers, queries, bad signals and updates and a worker restart every ${RESTART_EVERY} turns: every turn completes, no workflow task fails, every history replays`, { timeout: 900_000 }, async () => {
    const totals: Noise = { queries: 0, signals: 0, refusedUpdates: 0, readerEvents: 0, readersFinished: 0 };
    const handles: WorkflowHandle[] = [];
    const restarts = Array.from({ length: TURNS / RESTART_EVERY - 1 }, (_, index) => (index + 1) * RESTART_EVERY);
    let started = 0;

    const runTurn = async (index: number) => {
      const text = `${use('slow_policy', { n: index, park: false })} then ${use('slow_policy', { n: index + 1, park: true })} then ${use('quick_tool', { n: index })}`;
      const handle = await harness.startTurn({ text, tools: ['slow_policy', 'quick_tool'] });
      handles.push(handle);
      const done = new AbortController();
      const { noise, finished } = makeNoise(turnpike, handle, done.signal);
      const { pending } = await waitForParked(handle);
      await turnpike.approveToolCall(handle.workflowId, { approvalId: pending[0]!.approvalId!, approved: true });
      const result = await handle.result();
      done.abort();
      await finished;
      for (const key of Object.keys(totals) as Array<keyof Noise>) totals[key] += noise[key];
      expect(result.status).toBe('completed');
      expect(result.toolCalls.map((call: { outcome: string }) => call.outcome)).toEqual(['approved', 'approved', 'executed']);
    };

    const lanes = Array.from({ length: CONCURRENCY }, async () => {
      while (started < TURNS) {
        const index = started++;
        if (restarts[0] !== undefined && index >= restarts[0]) {
          restarts.shift();
          // Turns in flight are picked up by the next worker from their histories.
          await harness.stopWorker();
          await harness.startWorker();
        }
        await runTurn(index);
      }
    });
    await Promise.all(lanes);
    expect(handles).toHaveLength(TURNS);
    expect(restarts).toEqual([]);
    // The noise reached the turns: the test is only as good as the traffic during policies.
    expect(totals.queries).toBeGreaterThan(TURNS);
    expect(totals.signals).toBeGreaterThan(TURNS);
    expect(totals.refusedUpdates).toBeGreaterThan(TURNS);
    console.log(`determinism under load: ${TURNS} turns, ${JSON.stringify(totals)}`);
    // Every reader read every event of its turn, in order, to turn-finished.
    expect(totals.readersFinished).toBe(TURNS);
    expect(totals.readerEvents).toBeGreaterThan(TURNS * 10);

    const failedTasks: string[] = [];
    let unhandledCommand = 0;
    const histories: Array<{ workflowId: string; history: unknown }> = [];
    for (const handle of handles) {
      const history = await handle.fetchHistory();
      for (const event of history.events ?? []) {
        const failed = event.workflowTaskFailedEventAttributes;
        // UnhandledCommand is the server's answer to a task that would end the turn while a
        // signal (here, a refused one) arrived meanwhile: it is recorded as a failed task, and the
        // next task sees the signal and ends the turn. Not a failure of the turn's code.
        if (failed?.failure?.message === 'UnhandledCommand') unhandledCommand++;
        else if (failed) failedTasks.push(`${handle.workflowId} event ${event.eventId}: cause ${failed.cause}, ${failed.failure?.message ?? 'no failure'} (${failed.identity})`);
      }
      histories.push({ workflowId: handle.workflowId, history });
      // A query of an ended turn replays it on the worker; on a loaded machine one may time out
      // before a worker takes it (DEADLINE_EXCEEDED), so it is asked again.
      expect((await queryAnswered(handle)).status).toBe('completed');
    }
    console.log(`determinism under load: ${unhandledCommand} tasks answered UnhandledCommand (a signal arrived as the turn ended)`);
    expect(failedTasks).toEqual([]);

    async function* all() {
      yield* histories;
    }
    const replayFailures: string[] = [];
    let replayed = 0;
    for await (const result of Worker.runReplayHistories({ workflowBundle: { codePath: inject('workflowBundlePath') }, dataConverter: turnpikeDataConverter }, all())) {
      replayed++;
      if (result.error) replayFailures.push(`${result.workflowId}: ${result.error.message}`);
    }
    expect(replayFailures).toEqual([]);
    expect(replayed).toBe(TURNS);
  });
});

async function queryAnswered(handle: WorkflowHandle) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await handle.query(turnStateQuery);
    } catch (error) {
      if (attempt >= 5 || !/DEADLINE_EXCEEDED|timed out/.test(`${error}${(error as { cause?: unknown }).cause}`)) throw error;
    }
  }
}

async function waitForParked(handle: WorkflowHandle) {
  const deadline = Date.now() + 300_000;
  while (Date.now() < deadline) {
    const state = await handle.query(turnStateQuery).catch(() => undefined);
    if (state && state.pending.length === 1 && state.pending[0]!.approvalId) return state;
    await sleep(50);
  }
  // What it was doing instead: its pending activities and last events.
  const { raw } = await handle.describe();
  const activities = (raw.pendingActivities ?? []).map((activity) => `${activity.activityType?.name} attempt ${activity.attempt} state ${activity.state} worker ${activity.lastWorkerIdentity} started ${activity.lastStartedTime?.seconds}`);
  const events = ((await handle.fetchHistory()).events ?? []).slice(-12).map((event) => `${event.eventId} ${event.eventType}`);
  throw new Error(`${handle.workflowId} never parked; pending activities: ${JSON.stringify(activities)}; last events: ${events.join(', ')}`);
}
