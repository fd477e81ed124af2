/**
 * Turns of any length: a turn hands over to a new run of itself (continue-as-new) at a step
 * boundary once its run's history reaches its `historyLimit` (workflows/turn/turn-hand-over.ts). Here
 * the limit is 1,000 events, so a 300-step turn hands over several times; with the default
 * (8,000 events) a 1,000-step turn does so once (`TURNPIKE_LONG_HAND_OVER=1` runs it).
 *
 * Readers follow it from its start, each on its own feed, with no lost or doubled event; its
 * approvals park and are decided in the run they park in; a decision sent again after a
 * hand-over is refused as before; its result equals the same turn's with no readers; every
 * run's history stays near the limit; and every run's history replays.
 */
import { Worker } from '@temporalio/worker';
import { WorkflowFailedError } from '@temporalio/client';
import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { readEventStream } from '../../client/event-subscription.js';
import { TurnpikeRejectedError } from '../../client/errors.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { turnpikeDataConverter } from '../../content/data-converter.js';
import { turnEventsQuery } from '../../workflows/messages/definitions.js';
import { streamOffsetQuery } from '../../workflows/stream/stream-guard.js';
import type { TurnEventRecord } from '../../workflows/types/turn-events.js';
import type { AgentTurnResult } from '../../workflows/types/index.js';
import { saveRuns, snapshotParked } from '../support/history-recorder.js';
import { testTools, use } from '../support/test-tools.js';
import { startTurnpike, waitForState, type TurnpikeHarness } from '../support/turnpike-harness.js';

const LONG = process.env.TURNPIKE_LONG_HAND_OVER === '1';
const STEPS = LONG ? 1_000 : 300;
const APPROVALS_AT = LONG ? [10, 500, 990] : [10, 150, 290];
const HISTORY_LIMIT = LONG ? undefined : { events: 1_000 };
const READERS = 10;

let harness: TurnpikeHarness;
let turnpike: TurnpikeClient;

beforeAll(async () => {
  harness = await startTurnpike({ tools: testTools });
  turnpike = new TurnpikeClient({ client: harness.client, taskQueue: harness.taskQueue });
});
afterAll(async () => {
  await harness?.stop();
});

function script(): string {
  return Array.from({ length: STEPS }, (_, index) =>
    APPROVALS_AT.includes(index + 1) ? use('guarded_action', { target: `step-${index + 1}`, count: index + 1 }) : `look up order ${1000 + (index % 3)}`,
  ).join(' then ');
}

interface RunOptions {
  /** Called once the turn has started. */
  started?: (handle: WorkflowHandle) => void;
  /** Called after the second approval, by when the turn has handed over at least once. */
  afterHandOver?: (handle: WorkflowHandle, firstApprovalId: string) => Promise<void>;
}

/** Runs the turn, deciding each approval as it parks. */
async function runTurn(options: RunOptions = {}): Promise<{ handle: WorkflowHandle; result: AgentTurnResult }> {
  const handle = await harness.startTurn({ text: script(), maxSteps: STEPS + 1, ...(HISTORY_LIMIT ? { historyLimit: HISTORY_LIMIT } : {}) });
  options.started?.(handle);
  let first: string | undefined;
  for (const [index, step] of APPROVALS_AT.entries()) {
    const state = await waitForState(handle, (candidate) => candidate.step === step && candidate.pending.length === 1, 600_000);
    const approvalId = state.pending[0]!.approvalId!;
    // For the replay sets: a run that a hand-over started, parked.
    if (index === 1) await snapshotParked(handle);
    await turnpike.approveToolCall(handle.workflowId, { approvalId, approved: true, approver: 'alice' });
    first ??= approvalId;
    if (index === 1) await options.afterHandOver?.(handle, first);
  }
  return { handle, result: (await handle.result()) as AgentTurnResult };
}

/**
 * A query of the ended turn, asked again when it timed out: a worker answers it by replaying the
 * turn's last run, and on a busy machine (the readers' own queries of that run beside it) the
 * server's query deadline can pass first ("query timed out before a worker could process it").
 */
async function askPatiently<T>(ask: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await ask();
    } catch (error) {
      const timedOut = /DEADLINE_EXCEEDED|timed out before a worker could process it/.test(`${String(error)} ${String((error as { cause?: unknown }).cause)}`);
      if (!timedOut || attempt >= 5) throw error;
    }
  }
}

/** The result without what differs between two runs of the same turn: approval ids and times. */
function comparable(result: AgentTurnResult): unknown {
  return JSON.parse(JSON.stringify(result).replace(/"apr_[0-9a-f]+"/g, '"apr"').replace(/"decidedAt":"[^"]+"/g, '"decidedAt":""'));
}

describe(`a ${STEPS}-step turn that hands over to new runs`, () => {
  it('keeps its readers, decisions and result across every hand-over; each run stays near its limit and replays', { timeout: 1_800_000 }, async () => {
    const quiet = await runTurn();

    let readers: Array<Promise<TurnEventRecord[]>> = [];
    const watched = await runTurn({
      // Readers from its start, each with a feed of its own (as in separate processes).
      started: (handle) => {
        readers = Array.from({ length: READERS }, async () => {
          const records: TurnEventRecord[] = [];
          for await (const record of readEventStream(harness.client, handle.workflowId, turnEventsQuery, { isLast: (event) => event.type === 'turn-finished' })) records.push(record);
          return records;
        });
      },
      // The first approval, decided before a hand-over, is refused as decided after it: the ledger was carried.
      afterHandOver: async (handle, firstApprovalId) => {
        const refusal = await turnpike.approveToolCall(handle.workflowId, { approvalId: firstApprovalId, approved: false, approver: 'bob' }).catch((error: unknown) => error);
        expect(refusal).toBeInstanceOf(TurnpikeRejectedError);
        expect((refusal as TurnpikeRejectedError).type).toBe('ApprovalAlreadyDecided');
      },
    });
    const { handle, result } = watched;
    expect(result.status).toBe('completed');
    expect(result.steps).toBe(STEPS + 1);
    expect(result.toolCalls).toHaveLength(STEPS);
    expect(result.toolCalls.filter((call) => call.outcome === 'approved')).toHaveLength(APPROVALS_AT.length);
    expect(comparable(result)).toEqual(comparable(quiet.result));

    const events = await askPatiently(() => handle.query(streamOffsetQuery));
    for (const records of await Promise.all(readers)) {
      expect(records.map(({ offset }) => offset)).toEqual(Array.from({ length: events }, (_, offset) => offset));
      expect(records.at(-1)!.event).toMatchObject({ type: 'turn-finished', status: 'completed', steps: STEPS + 1 });
    }

    const runs = [];
    for await (const execution of harness.client.workflow.list({ query: `WorkflowId = "${handle.workflowId}"` })) runs.push(execution);
    expect(runs.length).toBeGreaterThan(1);
    const histories: Array<{ workflowId: string; history: Awaited<ReturnType<WorkflowHandle['fetchHistory']>> }> = [];
    for (const run of runs) {
      const history = await harness.client.workflow.getHandle(handle.workflowId, run.runId).fetchHistory();
      // A run hands over at the first step boundary past its limit: a step's events more at most.
      expect(history.events?.length).toBeLessThan((HISTORY_LIMIT?.events ?? 8_000) + 100);
      histories.push({ workflowId: `${handle.workflowId}/${run.runId}`, history });
    }
    // For the replay sets: every run, those that handed over (with the patch's marker) included.
    await saveRuns(handle, runs.map((run) => run.runId).reverse());
    console.log(`${STEPS}-step turn: ${runs.length} runs of ${histories.map(({ history }) => history.events?.length).join(', ')} events; ${events} stream events`);

    const failures: string[] = [];
    const all = async function* () {
      yield* histories;
    };
    for await (const replayed of Worker.runReplayHistories({ workflowBundle: { codePath: inject('workflowBundlePath') }, dataConverter: turnpikeDataConverter }, all())) {
      if (replayed.error) failures.push(`${replayed.workflowId}: ${replayed.error.message}`);
    }
    expect(failures).toEqual([]);
  });
});

describe('a history limit too small to hand over', () => {
  it.each([{ bytes: 100 }, { bytes: 2 * 1024 * 1024 - 1 }, { events: 99 }])('fails the turn at once with InvalidTurnInput: %j', async (historyLimit) => {
    const handle = await harness.startTurn({ text: 'look up order 1001 then look up order 1002', maxSteps: 5, historyLimit });
    const error = await handle.result().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(WorkflowFailedError);
    const cause = (error as WorkflowFailedError).cause as { type?: string; message: string };
    expect(cause.type).toBe('InvalidTurnInput');
    expect(cause.message).toMatch(/historyLimit\.(bytes must be an integer of at least 2097152|events must be an integer of at least 100)/);
  });

  it('takes the smallest byte limit, and a turn under it runs as before', async () => {
    const handle = await harness.startTurn({ text: 'look up order 1001 then look up order 1002', maxSteps: 5, historyLimit: { bytes: 2 * 1024 * 1024 } });
    expect((await handle.result()).status).toBe('completed');
  });
});
