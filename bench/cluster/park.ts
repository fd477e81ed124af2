/**
 * Parking N turns on the cluster: each a scripted turn whose one tool call needs approval (one in
 * 100 `bench_review`, approver-3's; of the rest half `bench_charge`, approver-1's, and half
 * `bench_refund`, approver-2's). Parked means visibility's
 * `AgentTurnStatus="awaiting-input"` count reached N, as an operator's query would find them.
 * Temporal actions per parked turn are counted from a sample of histories (see `actionsOf`).
 */
import { performance } from 'node:perf_hooks';
import type { Client } from '@temporalio/client';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { actionsOf } from '../history-actions.js';
import { runPool, sleep } from '../pool.js';
import { round } from '../stats.js';
import { TASK_QUEUE } from './topology.js';

const START_CONCURRENCY = 50;
/**
 * Turns started but not yet listed parked, at most: starting faster than the cluster parks only
 * queues first workflow tasks (at 100,000 started at once, the first 60,000 waited over 20 minutes
 * in the task queue's backlog while the starts took the server's time), so the time to park
 * measures what the cluster sustains.
 */
export const MAX_UNPARKED = 2_000;
const HISTORY_SAMPLE = 20;
export const PARKED_QUERY = `WorkflowType="agentTurn" AND AgentTurnStatus="awaiting-input" AND TaskQueue="${TASK_QUEUE}"`;

export interface ParkFigures {
  turns: number;
  seconds: number;
  turnsPerSecond: number;
  /** From `HISTORY_SAMPLE` parked histories: actions, events, and events by type, per turn. */
  actionsPerTurn: number;
  eventsPerTurn: number;
  actionTypes: Record<string, number>;
  historySample: number;
}

export const parkedTurnId = (index: number) => `cluster-park-${index}`;

/** The tool turn `index` calls: approver-3's one in 100, else approver-1's and approver-2's in turn. */
export const toolOfTurn = (index: number) => (index % 100 === 99 ? 'bench_review' : index % 2 === 0 ? 'bench_charge' : 'bench_refund');

export async function parkTurns(client: Client, turns: number, log: (line: string) => void): Promise<ParkFigures> {
  const turnpike = new TurnpikeClient({ client, taskQueue: TASK_QUEUE });
  const started = performance.now();
  let progress = 0;
  // The parked count, read every 2 s while turns start; each start waits while too many are unparked.
  let parked = 0;
  let starting = true;
  const counting = (async () => {
    while (starting) {
      // A refused count (the server busy) keeps the last one.
      parked = (await client.workflow.count(PARKED_QUERY).catch(() => ({ count: parked }))).count;
      await sleep(2_000);
    }
  })();
  try {
    await runPool(turns, START_CONCURRENCY, async (index) => {
      while (index - parked >= MAX_UNPARKED) await sleep(250);
      const tool = toolOfTurn(index);
      await turnpike.startTurn({ model: { provider: 'scripted', model: 'bench' }, messages: [{ role: 'user', content: `use ${tool} with {"n": ${index}}` }] }, { turnId: parkedTurnId(index) });
      if (++progress % 2_000 === 0) log(`  cluster: ${progress} of ${turns} turns started (${((performance.now() - started) / 1000).toFixed(0)} s)`);
    });
  } finally {
    starting = false;
    await counting;
  }
  log(`  cluster: ${turns} turns started in ${((performance.now() - started) / 1000).toFixed(1)} s; waiting for visibility to list them parked`);
  for (let last = -1; ; ) {
    const { count } = await client.workflow.count(PARKED_QUERY);
    if (count >= turns) break;
    if (count !== last) log(`  cluster: ${count} parked`);
    last = count;
    await sleep(2_000);
  }
  const seconds = (performance.now() - started) / 1000;
  const types: Record<string, number> = {};
  let actions = 0;
  let events = 0;
  const sample = Math.min(HISTORY_SAMPLE, turns);
  for (let index = 0; index < sample; index++) {
    const history = (await client.workflow.getHandle(parkedTurnId(Math.floor((index * turns) / sample))).fetchHistory()).events ?? [];
    events += history.length;
    const counted = actionsOf(history);
    actions += counted.actions;
    for (const [type, count] of Object.entries(counted.types)) types[type] = (types[type] ?? 0) + count;
  }
  return {
    turns,
    seconds: round(seconds, 1),
    turnsPerSecond: round(turns / seconds, 1),
    actionsPerTurn: round(actions / sample, 2),
    eventsPerTurn: round(events / sample, 2),
    actionTypes: Object.fromEntries(Object.entries(types).map(([type, count]) => [type, round(count / sample, 2)])),
    historySample: sample,
  };
}
