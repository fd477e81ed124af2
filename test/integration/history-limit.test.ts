/**
 * A turn's `historyLimit` (issue #54): a limit under what a hand-over must carry would have a new
 * run hand over again before its first step, forever. `startTurn` refuses it before anything
 * starts, naming the smallest value that works; a turn started past the client (an older client,
 * the Temporal CLI) fails at once with `InvalidTurnInput` naming it; and a turn given the smallest
 * values hands over and ends. Real dev server, the scripted model.
 */
import { randomUUID } from 'node:crypto';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { TurnpikeRejectedError } from '../../client/errors.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { turnpikeDataConverter } from '../../content/data-converter.js';
import { MIN_HISTORY_LIMIT_BYTES, MIN_HISTORY_LIMIT_EVENTS } from '../../workflows/turn/turn-hand-over.js';
import type { HistoryLimit } from '../../workflows/types/index.js';
import { noteStarted, saveRuns } from '../support/history-recorder.js';
import { testTools } from '../support/test-tools.js';
import { startTurnpike, type TurnpikeHarness } from '../support/turnpike-harness.js';
import { serveApi, type ServedApi } from '../support/api-server.js';

let harness: TurnpikeHarness;
let turnpike: TurnpikeClient;
let served: ServedApi;

beforeAll(async () => {
  harness = await startTurnpike({ tools: testTools });
  turnpike = new TurnpikeClient({ client: harness.client, taskQueue: harness.taskQueue });
  served = await serveApi(harness);
});
afterAll(async () => {
  await served?.api.close();
  await harness?.stop();
});

const model = { provider: 'scripted', model: 'demo' } as const;
const lookups = (count: number) => Array.from({ length: count }, (_, index) => `look up order ${1000 + (index % 3)}`).join(' then ');

describe('a historyLimit under what a hand-over must carry', () => {
  it.each<[string, unknown, RegExp]>([
    ['bytes: 100', { bytes: 100 }, /historyLimit\.bytes must be an integer of at least 2097152 \(2 MiB\).*forever/],
    ['bytes: 2 MiB - 1', { bytes: MIN_HISTORY_LIMIT_BYTES - 1 }, /historyLimit\.bytes must be an integer of at least 2097152/],
    ['events: 99', { events: 99, bytes: MIN_HISTORY_LIMIT_BYTES }, /historyLimit\.events must be an integer of at least 100/],
    ['events: 150.5', { events: 150.5 }, /historyLimit\.events must be an integer of at least 100/],
    ['a number', 5_000, /historyLimit must be an object \{ events\?, bytes\? \}/],
  ])('is refused by startTurn before anything starts (%s)', async (_, historyLimit, message) => {
    const turnId = `turn-${randomUUID()}`;
    const refusal = await turnpike
      .startTurn({ model, messages: [{ role: 'user', content: lookups(2) }], historyLimit: historyLimit as HistoryLimit }, { turnId })
      .catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(TurnpikeRejectedError);
    expect((refusal as TurnpikeRejectedError).type).toBe('InvalidRequest');
    expect((refusal as TurnpikeRejectedError).message).toMatch(message);
    expect((refusal as TurnpikeRejectedError).message).toMatch(/no turn was started/);
    await expect(harness.client.workflow.getHandle(turnId).describe()).rejects.toThrow(/not found/i);
  });

  it('is refused by POST /api/turns with a 400 naming the smallest value, and nothing starts', async () => {
    const turnId = `turn-${randomUUID()}`;
    const response = await fetch(`${served.base}/api/turns`, {
      method: 'POST',
      headers: { authorization: 'Bearer alice-token', 'content-type': 'application/json' },
      body: JSON.stringify({ turnId, input: { model, messages: [{ role: 'user', content: lookups(2) }], historyLimit: { bytes: 65_536 } } }),
    });
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as { error: { type: string; message: string } };
    expect(error.type).toBe('InvalidRequest');
    expect(error.message).toMatch(/historyLimit\.bytes must be an integer of at least 2097152 \(2 MiB\)/);
    await expect(harness.client.workflow.getHandle(turnId).describe()).rejects.toThrow(/not found/i);
  });

  it('fails a turn started past the client at once, with InvalidTurnInput naming the smallest value', async () => {
    const handle = await harness.startTurn({ text: lookups(2), historyLimit: { bytes: 1_000_000 } });
    const error = await handle.result().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(WorkflowFailedError);
    const cause = (error as WorkflowFailedError).cause as { type?: string; message: string };
    expect(cause.type).toBe('InvalidTurnInput');
    expect(cause.message).toMatch(/^agentTurn input\.historyLimit\.bytes must be an integer of at least 2097152 \(2 MiB\)/);
    // It failed in its first workflow task: no step ran, no activity was scheduled.
    const { events } = await handle.fetchHistory();
    expect(events?.some((event) => event.activityTaskScheduledEventAttributes)).toBe(false);
  });
});

describe('a turn that took a smaller byte limit before the floor was raised', () => {
  it('replays as it ran: the floor is asked of new turns only (patch 0.5.0-history-limit-floor)', async () => {
    const handle = await harness.startTurn({ text: lookups(3), historyLimit: { bytes: MIN_HISTORY_LIMIT_BYTES } });
    expect(await handle.result()).toMatchObject({ status: 'completed' });
    const history = await handle.fetchHistory();
    // The same history with a limit of 1,000,000 bytes in its input: what a worker from before the floor recorded.
    const payload = history.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
    expect(new TextDecoder().decode(payload.metadata!.encoding!)).toBe('json/plain');
    const input = JSON.parse(new TextDecoder().decode(payload.data!)) as { historyLimit: HistoryLimit };
    input.historyLimit = { bytes: 1_000_000 };
    payload.data = new TextEncoder().encode(JSON.stringify(input));
    await Worker.runReplayHistory({ workflowBundle: { codePath: inject('workflowBundlePath') }, dataConverter: turnpikeDataConverter }, history, handle.workflowId);
  });
});

describe('the smallest historyLimit', () => {
  it('hands over and ends; each new run starts far under the byte limit', async () => {
    const turnId = `turn-${randomUUID()}`;
    const steps = 40;
    const handle = (await turnpike.startTurn(
      { model, messages: [{ role: 'user', content: lookups(steps) }], maxSteps: steps + 1, historyLimit: { events: MIN_HISTORY_LIMIT_EVENTS, bytes: MIN_HISTORY_LIMIT_BYTES } },
      { turnId },
    )) as WorkflowHandle;
    noteStarted(handle);
    const result = await turnpike.turnResult(turnId);
    expect(result).toMatchObject({ status: 'completed', steps: steps + 1 });
    expect(result.toolCalls).toHaveLength(steps);

    const runs = [];
    for await (const execution of harness.client.workflow.list({ query: `WorkflowId = "${turnId}"` })) runs.push(execution);
    expect(runs.length).toBeGreaterThan(2);
    const firstTasks: number[] = [];
    for (const run of runs) {
      const { events } = await harness.client.workflow.getHandle(turnId, run.runId).fetchHistory();
      // Each run hands over at the first step boundary past 100 events: a step's events more at most.
      expect(events!.length).toBeLessThan(MIN_HISTORY_LIMIT_EVENTS + 40);
      const started = events!.find((event) => event.workflowTaskStartedEventAttributes)!.workflowTaskStartedEventAttributes!;
      firstTasks.push(Number(started.historySizeBytes));
    }
    // What a run's first check sees: its first events, carried state included, far under 2 MiB.
    expect(Math.max(...firstTasks)).toBeLessThan(MIN_HISTORY_LIMIT_BYTES / 8);
    console.log(`smallest historyLimit: ${runs.length} runs; history at each run's first task: ${firstTasks.join(', ')} bytes`);
    await saveRuns(handle, runs.map((run) => run.runId).reverse());
  });
});
