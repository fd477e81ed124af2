/**
 * What streaming costs and how fast it is: turns through turnpike's `openai` provider against the
 * fake OpenAI server (fake-openai.ts), which streams like the real API and here paces its events
 * as a model writes tokens ({@link TOKEN_INTERVAL_MS} apart).
 *
 * History: the same 3-step turn (2 tool steps, then a text answer) three ways, interleaved —
 *   - `off`: `model.stream: false`, nobody subscribed: the non-streaming turn;
 *   - `on`: streaming, nobody subscribed: what the model activity's batched publishes add;
 *   - `on + subscriber`: streaming with a `TurnpikeClient.turnEvents` reader from the start: what
 *     the reader adds on top (it reads by query, which history does not record: it should add nothing).
 * Streaming is judged against the same provider with streaming off, not against the scripted
 * model: that isolates the stream (the provider's HTTP call is the same either way).
 *
 * Token-to-subscriber latency: for every text event the fake writes, the time from the write
 * (the fake runs in this process, so one clock) to when the subscriber has received text up to
 * and including it — the first token of a step (published at once) and every token (after the
 * first, the activity batches for up to 200 ms; see activities/step-stream.ts).
 */
import { performance } from 'node:perf_hooks';
import { Client } from '@temporalio/client';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import type { TurnEventRecord } from '../../workflows/types/turn-events.js';
import type { BenchContext, Systems } from '../context.js';
import { FAKE_OPENAI_MODEL } from '../fake-openai-settings.js';
import { historySize, type HistorySize } from '../history-size.js';
import { percentile } from '../stats.js';
import { TurnpikeSystem } from '../turnpike-system.js';

/** A model writing ~50 tokens a second. */
export const TOKEN_INTERVAL_MS = 20;
const STEPS = 3;

export interface StreamingHistory {
  /** Medians over the turns measured. */
  events: number;
  protoBytes: number;
  /** Signals (the activity's batched publishes) and accepted updates (subscriber polls), medians. */
  signals: number;
  updates: number;
}

export interface LatencyPercentiles {
  n: number;
  p50: number;
  p95: number;
  max: number;
}

export interface StreamingFigures {
  steps: number;
  turns: number;
  tokenIntervalMs: number;
  off: StreamingHistory;
  on: StreamingHistory;
  onWithSubscriber: StreamingHistory;
  /** on − off, and on + subscriber − off: what streaming adds to one turn's history. */
  added: { unwatched: { events: number; protoBytes: number }; watched: { events: number; protoBytes: number } };
  /** Milliseconds from the fake provider writing a text event to the subscriber having it: today's path (durable stream by query). */
  latency: { firstToken: LatencyPercentiles; everyToken: LatencyPercentiles };
  /** The same, for a reader of the same turns with the live channel (`turnEvents(id, { live: true })`, pieces over IPC from the worker process). */
  liveLatency: { firstToken: LatencyPercentiles; everyToken: LatencyPercentiles; pieceArrival: LatencyPercentiles };
  /** What each path costs while a turn streams (medians over the watched turns). */
  cost: {
    /** `turnEvents` queries per second of a watched turn, by each path's own client. */
    durableQueriesPerSecond: number;
    liveQueriesPerSecond: number;
    /** Live pieces the worker process sent per second of a watched turn. */
    livePiecesPerSecond: number;
    /** CPU ms of the worker process per turn: streaming with nobody reading, and read by both paths. */
    workerCpuMs: { unwatched: number; watched: number };
    /** CPU ms of this (the API's) process per watched turn: both readers, the fake provider and the bench. */
    apiCpuMs: { watched: number };
  };
}

const median = (values: number[]) => percentile([...values].sort((a, b) => a - b), 50);

function percentiles(samples: number[]): LatencyPercentiles {
  const sorted = [...samples].sort((a, b) => a - b);
  return { n: sorted.length, p50: percentile(sorted, 50), p95: percentile(sorted, 95), max: sorted.at(-1) ?? Number.NaN };
}

function summarizeHistory(sizes: HistorySize[]): StreamingHistory {
  return {
    events: median(sizes.map((size) => size.events)),
    protoBytes: median(sizes.map((size) => size.protoBytes)),
    signals: median(sizes.map((size) => size.eventTypes.WORKFLOW_EXECUTION_SIGNALED ?? 0)),
    updates: median(sizes.map((size) => size.eventTypes.WORKFLOW_EXECUTION_UPDATE_ACCEPTED ?? 0)),
  };
}

/** Text written by the fake, as cumulative length at each write. */
interface Mark {
  length: number;
  at: number;
}

export async function measureStreaming(context: BenchContext, systems: Systems): Promise<StreamingFigures> {
  const { turnpike } = systems;
  const model = { provider: 'openai', model: FAKE_OPENAI_MODEL } as const;
  const streaming = new TurnpikeSystem(context.client, turnpike.taskQueue, turnpike.worker, 'turnpike-openai', { ...model, stream: true });
  const plain = new TurnpikeSystem(context.client, turnpike.taskQueue, turnpike.worker, 'turnpike-openai', { ...model, stream: false });
  const queries = { durable: 0, live: 0 };
  const counting = (path: 'durable' | 'live') =>
    new Client({
      connection: context.client.connection,
      namespace: context.client.options.namespace,
      dataConverter: context.client.options.dataConverter,
      interceptors: { workflow: [{ query: (input, next) => (queries[path]++, next(input)) }] },
    });
  const reader = new TurnpikeClient({ client: counting('durable'), taskQueue: turnpike.taskQueue });
  const liveReader = new TurnpikeClient({ client: counting('live'), taskQueue: turnpike.taskQueue, liveDeltas: turnpike.worker.liveDeltas });
  const workerCpu = async () => {
    const sample = await turnpike.worker.sample();
    return (sample.cpuUser + sample.cpuSystem) / 1000;
  };
  const turns = context.options.quick ? 8 : 30;

  let written: Mark[] = [];
  let writtenLength = 0;
  context.fakeOpenAI.setStreamControl({
    eventIntervalMs: TOKEN_INTERVAL_MS,
    onEvent: (frame) => {
      const content = (frame.data as { choices?: Array<{ delta?: { content?: unknown } }> })?.choices?.[0]?.delta?.content;
      if (typeof content !== 'string' || content.length === 0) return;
      writtenLength += content.length;
      written.push({ length: writtenLength, at: performance.now() });
    },
  });

  const sizes = { off: [] as HistorySize[], on: [] as HistorySize[], watched: [] as HistorySize[] };
  const firstToken: number[] = [];
  const everyToken: number[] = [];
  const liveFirstToken: number[] = [];
  const liveEveryToken: number[] = [];
  const pieceArrival: number[] = [];
  const cost = { durableQps: [] as number[], liveQps: [] as number[], piecesPerSecond: [] as number[], workerUnwatched: [] as number[], workerWatched: [] as number[], api: [] as number[] };

  try {
    for (let turn = 0; turn < turns; turn++) {
      // Interleaved, so the machine's load drifts over all three alike.
      const off = await plain.startTurn(STEPS);
      await plain.finishTurn(off, STEPS);
      sizes.off.push(await historySize(off));

      let cpuBefore = await workerCpu();
      const on = await streaming.startTurn(STEPS);
      await streaming.finishTurn(on, STEPS);
      cost.workerUnwatched.push((await workerCpu()) - cpuBefore);
      sizes.on.push(await historySize(on));

      written = [];
      writtenLength = 0;
      const read = async (client: TurnpikeClient, workflowId: string, live: boolean) => {
        const received: Mark[] = [];
        let receivedLength = 0;
        const records: TurnEventRecord[] = [];
        for await (const record of client.turnEvents(workflowId, { live })) {
          records.push(record);
          if (record.event.type === 'text-delta') {
            receivedLength += record.event.text.length;
            received.push({ length: receivedLength, at: performance.now() });
          }
        }
        return { records, received, receivedLength };
      };
      cpuBefore = await workerCpu();
      const apiBefore = process.cpuUsage();
      const queriesBefore = { ...queries };
      const startedAt = performance.now();
      const watched = await streaming.startTurn(STEPS);
      let turnPieces = 0;
      const arrived: Mark[] = [];
      let arrivedLength = 0;
      const unsubscribe = turnpike.worker.liveDeltas.subscribe(watched.workflowId, ({ event }) => {
        turnPieces++;
        if (event.type !== 'text-delta') return;
        arrivedLength += event.text.length;
        arrived.push({ length: arrivedLength, at: performance.now() });
      });
      // Both paths read the same turn: today's (durable stream by query) and the live channel.
      const readings = [read(reader, watched.workflowId, false), read(liveReader, watched.workflowId, true)];
      await streaming.finishTurn(watched, STEPS);
      const [durable, live] = await Promise.all(readings);
      const seconds = (performance.now() - startedAt) / 1000;
      unsubscribe();
      const api = process.cpuUsage(apiBefore);
      cost.api.push((api.user + api.system) / 1000);
      cost.workerWatched.push((await workerCpu()) - cpuBefore);
      cost.durableQps.push((queries.durable - queriesBefore.durable) / seconds);
      cost.liveQps.push((queries.live - queriesBefore.live) / seconds);
      cost.piecesPerSecond.push(turnPieces / seconds);
      for (const [path, { records, received, receivedLength }] of [['durable', durable!], ['live', live!]] as const) {
        if (records.some(({ event }) => event.type === 'step-retry')) throw new Error(`turn ${watched.workflowId} retried a step; its latencies would mix attempts`);
        if (receivedLength !== writtenLength) throw new Error(`turn ${watched.workflowId}: the ${path} subscriber got ${receivedLength} characters of text, the fake wrote ${writtenLength}`);
        written.forEach((mark, index) => {
          const arrival = received.find((got) => got.length >= mark.length)!;
          const latency = arrival.at - mark.at;
          (path === 'live' ? liveEveryToken : everyToken).push(latency);
          if (index === 0) (path === 'live' ? liveFirstToken : firstToken).push(latency);
        });
      }
      written.forEach((mark) => {
        const arrival = arrived.find((got) => got.length >= mark.length);
        if (arrival) pieceArrival.push(arrival.at - mark.at);
      });
      sizes.watched.push(await historySize(watched));
    }
  } finally {
    context.fakeOpenAI.setStreamControl(undefined);
  }

  const off = summarizeHistory(sizes.off);
  const on = summarizeHistory(sizes.on);
  const onWithSubscriber = summarizeHistory(sizes.watched);
  return {
    steps: STEPS,
    turns,
    tokenIntervalMs: TOKEN_INTERVAL_MS,
    off,
    on,
    onWithSubscriber,
    added: {
      unwatched: { events: on.events - off.events, protoBytes: on.protoBytes - off.protoBytes },
      watched: { events: onWithSubscriber.events - off.events, protoBytes: onWithSubscriber.protoBytes - off.protoBytes },
    },
    latency: { firstToken: percentiles(firstToken), everyToken: percentiles(everyToken) },
    liveLatency: { firstToken: percentiles(liveFirstToken), everyToken: percentiles(liveEveryToken), pieceArrival: percentiles(pieceArrival) },
    cost: {
      durableQueriesPerSecond: median(cost.durableQps),
      liveQueriesPerSecond: median(cost.liveQps),
      livePiecesPerSecond: median(cost.piecesPerSecond),
      workerCpuMs: { unwatched: median(cost.workerUnwatched), watched: median(cost.workerWatched) },
      apiCpuMs: { watched: median(cost.api) },
    },
  };
}
