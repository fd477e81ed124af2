/**
 * What a dashboard meets opening a long turn that ended a while ago: one finished 1,000-step turn
 * (scripted, a tool call each step; it hands over once at the default `historyLimit`), then, per
 * sample, a fresh `TurnpikeClient` (an API process that never read it) that
 *   - resumes its events 21 before the end (a reader that reconnects, `Last-Event-ID`): the time
 *     to the first event and to `turn-finished`;
 *   - reads its events from offset 0: the time to the first event (the first page);
 *   - asks its `turnState`, twice: the first (cold) and the second (the same client).
 * A query of a closed run is answered by a worker replaying the run, so these are the figures a
 * replay per query makes slow. turnpike only: the floor has no stream.
 */
import { performance } from 'node:perf_hooks';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { streamOffsetQuery } from '../../workflows/stream/stream-guard.js';
import type { BenchContext, Systems } from '../context.js';
import { scriptedPrompt } from '../bench-tools.js';
import { summarize, type Summary } from '../stats.js';
import { turnInput } from '../turnpike-system.js';

const STEPS = 1_000;
/** Events before the end a resuming reader left at. */
const RESUME_BEFORE_END = 21;

export interface ClosedTurnFigures {
  steps: number;
  /** The turn's stream events and runs. */
  events: number;
  runs: number;
  /** Milliseconds, per sample (each a fresh client). */
  resumeFirstEvent: Summary;
  resumeLastEvent: Summary;
  fromStartFirstEvent: Summary;
  turnStateCold: Summary;
  turnStateWarm: Summary;
}

async function timeFirst(records: AsyncGenerator<{ event: { type: string } }>): Promise<{ first: number; last: number }> {
  const started = performance.now();
  let first: number | undefined;
  for await (const record of records) {
    first ??= performance.now() - started;
    if (record.event.type === 'turn-finished') break;
  }
  return { first: first ?? Number.NaN, last: performance.now() - started };
}

async function timeFirstOnly(records: AsyncGenerator<unknown>): Promise<number> {
  const started = performance.now();
  for await (const _ of records) break;
  return performance.now() - started;
}

export async function measureClosedTurn(context: BenchContext, systems: Systems): Promise<ClosedTurnFigures> {
  const samples = context.options.quick ? 3 : 5;
  const system = systems.turnpike;
  const input = { ...turnInput(scriptedPrompt(STEPS + 1)), maxSteps: STEPS + 2 };
  const handle = await system.start(input, 'closed-turn');
  await system.finishTurn(handle, STEPS + 1);
  const events = await handle.query(streamOffsetQuery);
  let runs = 0;
  for await (const _ of context.client.workflow.list({ query: `WorkflowId = "${handle.workflowId}"` })) runs++;
  context.log(`  closed turn: ${STEPS} steps, ${events} stream events, ${runs} runs`);

  const times = { resumeFirst: [] as number[], resumeLast: [] as number[], fromStart: [] as number[], stateCold: [] as number[], stateWarm: [] as number[] };
  for (let sample = 0; sample < samples; sample++) {
    // A fresh client per measure: nothing of this turn read before.
    const fresh = () => new TurnpikeClient({ client: context.client, taskQueue: system.taskQueue });
    const resumed = await timeFirst(fresh().turnEvents(handle.workflowId, { fromOffset: events - RESUME_BEFORE_END }));
    times.resumeFirst.push(resumed.first);
    times.resumeLast.push(resumed.last);
    times.fromStart.push(await timeFirstOnly(fresh().turnEvents(handle.workflowId)));
    const client = fresh();
    let started = performance.now();
    await client.turnState(handle.workflowId);
    times.stateCold.push(performance.now() - started);
    started = performance.now();
    await client.turnState(handle.workflowId);
    times.stateWarm.push(performance.now() - started);
    context.log(`  closed turn sample ${sample + 1}: resume ${resumed.first.toFixed(0)} / ${resumed.last.toFixed(0)} ms, from start ${times.fromStart.at(-1)!.toFixed(0)} ms, turnState ${times.stateCold.at(-1)!.toFixed(0)} / ${times.stateWarm.at(-1)!.toFixed(0)} ms`);
  }
  return {
    steps: STEPS,
    events,
    runs,
    resumeFirstEvent: summarize(times.resumeFirst),
    resumeLastEvent: summarize(times.resumeLast),
    fromStartFirstEvent: summarize(times.fromStart),
    turnStateCold: summarize(times.stateCold),
    turnStateWarm: summarize(times.stateWarm),
  };
}
