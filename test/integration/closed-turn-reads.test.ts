/**
 * Reading a long turn after it ended (docs/streaming.md, "Reading an ended turn"): a query of a
 * closed run replays the whole run on a worker, so the reads of a closed run are counted here, by
 * a client interceptor that counts the queries a worker answered (a query refused because the run
 * is closed reaches no worker, and is counted apart).
 *
 * A reader resuming near the end of a finished turn (over SSE, by `Last-Event-ID`) causes one
 * query, not one per 1,000 events from the stream's start; a second reader, concurrent readers
 * and `turnState` of the same closed run cause no new one; and a fresh reader of a turn that
 * handed over (several runs, the last holding only the last events of the runs before it) gets
 * every event from offset 0, once and in order; so does a reader that starts from offset 0 while
 * such a turn is parked in a later run.
 */
import { Client, QueryRejectedError } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InProcessLiveDeltas } from '../../activities/live-deltas.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { isTransient } from '../../client/transient-errors.js';
import { turnEventsQuery } from '../../workflows/messages/definitions.js';
import { streamOffsetQuery } from '../../workflows/stream/stream-guard.js';
import type { TurnEvent, TurnEventRecord } from '../../workflows/types/turn-events.js';
import { serveApi } from '../support/api-server.js';
import { readSseFrom, type SseMessage } from '../support/sse-reader.js';
import { testTools, use } from '../support/test-tools.js';
import { startTurnpike, waitForState, type TurnpikeHarness } from '../support/turnpike-harness.js';

const AUTH = { authorization: 'Bearer alice-token' };
/** More than 1,000 stream events: from offset 0, the old feed took two pages of 1,000. */
const STEPS = 250;

let harness: TurnpikeHarness;
const api: FastifyInstance[] = [];

beforeAll(async () => {
  harness = await startTurnpike({ tools: testTools });
});
afterAll(async () => {
  for (const served of api) await served.close();
  await harness?.stop();
});

/** A client beside the harness's whose queries are counted: answered (by a worker) per query type, and refused. */
function countingClient() {
  const answered = new Map<string, number>();
  const counts = { refused: 0, answered: (type: string) => answered.get(type) ?? 0 };
  const client = new Client({
    connection: harness.client.connection,
    namespace: harness.client.options.namespace,
    dataConverter: harness.client.options.dataConverter,
    interceptors: {
      workflow: [
        {
          query: async (input, next) => {
            try {
              const result = await next(input);
              answered.set(input.queryType, (answered.get(input.queryType) ?? 0) + 1);
              return result;
            } catch (error) {
              if (error instanceof QueryRejectedError) counts.refused++;
              throw error;
            }
          },
        },
      ],
    },
  });
  return { client, counts };
}

async function finishedTurn(steps: number, extra: { historyLimit?: { events: number } } = {}): Promise<{ turnId: string; end: number }> {
  const text = Array.from({ length: steps }, (_, step) => `look up order ${1000 + (step % 3)}`).join(' then ');
  const handle = await harness.startTurn({ text, maxSteps: steps + 1, startedBy: 'alice', ...extra });
  expect((await handle.result()).status).toBe('completed');
  return { turnId: handle.workflowId, end: await endOf(handle) };
}

/** The offset after the last event of an ended turn. A query of the ended run replays it; on a loaded machine the server may time it out first. */
async function endOf(handle: { query: (query: typeof streamOffsetQuery) => Promise<number> }): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await handle.query(streamOffsetQuery);
    } catch (error) {
      if (attempt === 5 || !isTransient(error)) throw error;
    }
  }
}

const offsetsOf = (messages: SseMessage[]) => messages.filter((message) => message.event === 'message').map((message) => Number(message.id));
const finished = (message: SseMessage) => message.event === 'message' && (JSON.parse(message.data) as { event: TurnEvent }).event.type === 'turn-finished';
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, index) => from + index);

async function readAll(client: TurnpikeClient, turnId: string, fromOffset = 0): Promise<number[]> {
  const offsets: number[] = [];
  for await (const record of client.turnEvents(turnId, { fromOffset })) offsets.push((record as TurnEventRecord).offset);
  return offsets;
}

describe(`a finished ${STEPS}-step turn`, () => {
  let turn: { turnId: string; end: number };
  beforeAll(async () => {
    turn = await finishedTurn(STEPS);
    expect(turn.end).toBeGreaterThan(1_000);
  }, 600_000);

  for (const live of [false, true]) {
    it(`a reader resuming near its end over SSE causes one query${live ? ', through an API with a live channel' : ''}; a second reader, concurrent readers and turnState none more`, { timeout: 600_000 }, async () => {
      const { client: temporal, counts } = countingClient();
      const client = new TurnpikeClient({ client: temporal, taskQueue: harness.taskQueue, ...(live ? { liveDeltas: new InProcessLiveDeltas() } : {}) });
      const served = await serveApi(harness, { client });
      api.push(served.api);
      const url = `${served.base}/api/turns/${turn.turnId}/events`;
      const resumeAfter = turn.end - 22;

      const first = await readSseFrom(url, { ...AUTH, 'last-event-id': String(resumeAfter) }, finished);
      expect(offsetsOf(first.messages)).toEqual(range(resumeAfter + 1, turn.end));
      expect(finished(first.messages.at(-1)!)).toBe(true);
      expect(counts.answered('turnEvents')).toBe(1);

      // Again, by another reader: served from what the first read kept.
      const again = await readSseFrom(url, { ...AUTH, 'last-event-id': String(resumeAfter + 5) }, finished);
      expect(offsetsOf(again.messages)).toEqual(range(resumeAfter + 6, turn.end));
      expect(counts.answered('turnEvents')).toBe(1);

      // Five readers from the start at once: one replay reads the whole stream for all of them.
      const whole = await Promise.all(Array.from({ length: 5 }, () => readAll(client, turn.turnId)));
      for (const offsets of whole) expect(offsets).toEqual(range(0, turn.end));
      expect(counts.answered('turnEvents')).toBe(2);
      const fromStart = await readSseFrom(url, AUTH, finished);
      expect(offsetsOf(fromStart.messages)).toEqual(range(0, turn.end));
      expect(counts.answered('turnEvents')).toBe(2);

      // The state of the ended turn: one query, however often and by however many it is asked.
      const states = await Promise.all(Array.from({ length: 4 }, () => client.turnState(turn.turnId)));
      const later = await client.turnState(turn.turnId);
      for (const state of [...states, later]) expect(state).toMatchObject({ status: 'completed', step: STEPS + 1 });
      expect(counts.answered('turnState')).toBe(1);
      // The refusals that told the reads the run was closed reached no worker.
      expect(counts.refused).toBeGreaterThan(0);
    });
  }
});

describe('a finished turn that handed over', () => {
  it('a fresh reader from offset 0 gets every event once and in order, across its runs', { timeout: 900_000 }, async () => {
    // 1,000 history events a run: about 80 steps; 500 steps publish more than the 2,000 events a run carries.
    const turn = await finishedTurn(500, { historyLimit: { events: 1_000 } });
    const runs: string[] = [];
    for await (const execution of harness.client.workflow.list({ query: `WorkflowId = "${turn.turnId}"` })) runs.push(execution.runId);
    expect(runs.length).toBeGreaterThan(2);
    console.log(`500-step turn: ${runs.length} runs, ${turn.end} stream events`);
    const last = await harness.client.workflow.getHandle(turn.turnId).query(turnEventsQuery, { fromOffset: 0, limit: 1 });
    // The last run no longer holds the first events.
    expect(last.events[0]!.offset).toBeGreaterThan(0);

    const { client: temporal, counts } = countingClient();
    const client = new TurnpikeClient({ client: temporal, taskQueue: harness.taskQueue });
    expect(await readAll(client, turn.turnId)).toEqual(range(0, turn.end));
    const replays = counts.answered('turnEvents');
    expect(replays).toBeLessThanOrEqual(runs.length);
    expect(await readAll(client, turn.turnId, 10)).toEqual(range(10, turn.end));
    expect(counts.answered('turnEvents')).toBe(replays);
  });
});

describe('a running turn that handed over', () => {
  it('a reader from offset 0, started while it is parked in a later run, gets every event once and in order', { timeout: 900_000 }, async () => {
    const steps = 500;
    const parkAt = 450;
    const text = Array.from({ length: steps }, (_, index) => (index + 1 === parkAt ? use('guarded_action', { target: 'late', count: 1 }) : `look up order ${1000 + (index % 3)}`)).join(' then ');
    const handle = await harness.startTurn({ text, maxSteps: steps + 1, startedBy: 'alice', historyLimit: { events: 1_000 } });
    const state = await waitForState(handle, (candidate) => candidate.step === parkAt && candidate.pending.length === 1, 600_000);
    // Parked in a run that holds only the last events of the runs before it.
    const page = await handle.query(turnEventsQuery, { fromOffset: 0, limit: 1 });
    expect(page.events[0]!.offset).toBeGreaterThan(0);

    const client = new TurnpikeClient({ client: harness.client, taskQueue: harness.taskQueue });
    const records = client.turnEvents(handle.workflowId);
    // The first event, read while the turn is parked (running), before it is decided.
    const first = await records.next();
    const offsets = [(first.value as TurnEventRecord).offset];
    await client.approveToolCall(handle.workflowId, { approvalId: state.pending[0]!.approvalId!, approved: true, approver: 'alice' });
    for await (const record of records) offsets.push(record.offset);
    expect((await handle.result()).status).toBe('completed');
    expect(offsets).toEqual(range(0, await endOf(handle)));
  });
});
