/**
 * A worker that takes a turn's workflow task and then stops answering (killed, frozen, cut off)
 * leaves that task in flight until its timeout. Meanwhile the server buffers one query of the turn
 * and refuses the others ("consistent query buffer is full"), however long the timeout is. Stream
 * readers ask again and wait it out: when the task times out, a live worker runs the turn, and
 * every reader reads every event once, to the end.
 *
 * The stalled worker is played by a poll of the task queue through the server's own API, whose
 * task is never answered; the turn's workflow task timeout is longer than one read's quick
 * retries last, so each reader meets several failed reads before the turn goes on.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import type { AgentTurnInput } from '../../workflows/types/turn.js';
import { startTurnpike, type TurnpikeHarness } from '../support/turnpike-harness.js';

const READERS = 3;
/** Longer than the connection's quick retries of one refused query last (about 6 s, connection/query-retry.ts). */
const STALLED_TASK_TIMEOUT = '25s';

describe('a workflow task held by a worker that stopped answering', () => {
  let harness: TurnpikeHarness;
  let turnpike: TurnpikeClient;

  beforeAll(async () => {
    harness = await startTurnpike({ tools: [] });
    // No live worker until the stalled one holds the turn's first workflow task.
    await harness.stopWorker();
    turnpike = new TurnpikeClient({ client: harness.client, taskQueue: harness.taskQueue });
  });
  afterAll(async () => {
    await harness?.stop();
  });

  it(`readers wait out the refused queries until the task times out (${STALLED_TASK_TIMEOUT}), then read the whole turn`, { timeout: 120_000 }, async () => {
    const input: AgentTurnInput = { model: { provider: 'scripted', model: 'demo' }, messages: [{ role: 'user', content: 'hello' }] };
    const handle = await harness.client.workflow.start('agentTurn', {
      taskQueue: harness.taskQueue,
      workflowId: `turn-${randomUUID()}`,
      args: [input],
      workflowTaskTimeout: STALLED_TASK_TIMEOUT,
    });
    const stalled = await harness.client.connection.withDeadline(Date.now() + 60_000, () =>
      harness.client.workflowService.pollWorkflowTaskQueue({
        namespace: inject('temporalNamespace'),
        taskQueue: { name: harness.taskQueue },
        identity: 'stalled-worker',
      }),
    );
    expect(stalled.workflowExecution?.workflowId).toBe(handle.workflowId);

    const readers = Array.from({ length: READERS }, async () => {
      const types: string[] = [];
      let offset = 0;
      for await (const record of turnpike.turnEvents(handle.workflowId)) {
        expect(record.offset).toBe(offset++);
        types.push(record.event.type);
      }
      return types;
    });
    // The live worker gets the turn once the stalled task times out.
    await harness.startWorker();

    const result = await handle.result();
    expect(result.status).toBe('completed');
    const read = await Promise.all(readers);
    for (const types of read) {
      expect(types.at(-1)).toBe('turn-finished');
      expect(types).toEqual(read[0]);
    }
    // The stalled task did time out: the turn's history says so.
    const { events } = await handle.fetchHistory();
    expect(events?.some((event) => event.workflowTaskTimedOutEventAttributes)).toBe(true);
  });
});
