/**
 * A long turn followed by readers, as a user runs one: 600 model steps (a lookup at each), three
 * Server-Sent Events readers of its events through the HTTP API from its start, ten times. Each
 * turn completes, each reader sees every event once and in order up to `turn-finished`, and
 * each history replays (a turn's own history failed to replay when readers' polls were updates
 * accepted next to a local activity's result).
 */
import { Worker } from '@temporalio/worker';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { turnpikeDataConverter } from '../../content/data-converter.js';
import type { TurnEvent } from '../../workflows/types/turn-events.js';
import { readSseFrom, type SseMessage } from '../support/sse-reader.js';
import { testTools } from '../support/test-tools.js';
import { startTurnpike, type TurnpikeHarness } from '../support/turnpike-harness.js';
import { serveApi } from '../support/api-server.js';

const STEPS = 600;
/** Ten in the check (`TURNPIKE_LONG_TURN_RUNS=10`); two in `npm test`, which must fit CI's time on two cores. */
const RUNS = Number(process.env.TURNPIKE_LONG_TURN_RUNS ?? 2);
const READERS = 3;
const AT_ONCE = 2;

let turnpike: TurnpikeHarness;
let api: FastifyInstance;
let base: string;

beforeAll(async () => {
  turnpike = await startTurnpike({ tools: testTools });
  ({ api, base } = await serveApi(turnpike));
});
afterAll(async () => {
  await api?.close();
  await turnpike?.stop();
});

const finished = (message: SseMessage) => message.event === 'message' && (JSON.parse(message.data) as { event: TurnEvent }).event.type === 'turn-finished';

async function runOnce(run: number): Promise<{ workflowId: string; history: unknown }> {
  const text = Array.from({ length: STEPS }, (_, step) => `look up order ${1000 + ((run + step) % 3)}`).join(' then ');
  const handle = await turnpike.startTurn({ text, maxSteps: STEPS + 1, startedBy: 'alice' });
  const readers = Array.from({ length: READERS }, () =>
    readSseFrom(`${base}/api/turns/${handle.workflowId}/events`, { authorization: 'Bearer alice-token' }, finished),
  );
  const result = await handle.result();
  expect(result.status).toBe('completed');
  expect(result.steps).toBe(STEPS + 1);
  for (const { status, messages } of await Promise.all(readers)) {
    expect(status).toBe(200);
    const offsets = messages.filter((message) => message.event === 'message').map((message) => Number(message.id));
    // Every event once, in order, from the first to `turn-finished`.
    expect(offsets).toEqual(offsets.map((_, index) => index));
    expect(finished(messages.at(-1)!)).toBe(true);
  }
  const history = await handle.fetchHistory();
  const events = history.events ?? [];
  console.log(`${STEPS}-step turn: ${events.length} history events (${(events.length / STEPS).toFixed(1)} a step), ${Number(events.at(-1)?.eventId ?? 0)} last event id`);
  return { workflowId: handle.workflowId, history };
}

describe(`a 600-step turn with three SSE readers, ${RUNS} times`, () => {
  it('completes each time, every reader sees every event to turn-finished, every history replays', { timeout: 1_200_000 }, async () => {
    const histories: Array<{ workflowId: string; history: unknown }> = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: AT_ONCE }, async () => {
        while (next < RUNS) histories.push(await runOnce(next++));
      }),
    );
    expect(histories).toHaveLength(RUNS);
    async function* all() {
      yield* histories;
    }
    const failures: string[] = [];
    for await (const result of Worker.runReplayHistories({ workflowBundle: { codePath: inject('workflowBundlePath') }, dataConverter: turnpikeDataConverter }, all())) {
      if (result.error) failures.push(`${result.workflowId}: ${result.error.message}`);
    }
    expect(failures).toEqual([]);
  });
});
