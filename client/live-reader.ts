/**
 * One reader of a live feed (stream-hub.ts): the durable events from its offset, in offset order,
 * and each live piece the moment the feed has it (live-merge.ts), each unit of text once.
 *
 * A live piece is shown at once when it continues what this reader showed of its step-attempt:
 * it never waits for the durable stream, so it may come before durable events that precede it in
 * the stream (the previous step's `step-finished`, its tool calls and results); every delta event
 * names its `step` and `attempt`. A piece of a retry (`attempt` > 1) waits for its `step-retry`.
 * The durable stream then confirms: its delta events are trimmed of the units a piece already
 * showed, or skipped. What the reader showed beyond the durable stream rides on each record as
 * `live` (per step-attempt, its units shown); a reader resumes from the durable offset with
 * `{ fromOffset: offset + 1, liveAhead: live }`, and the durable deltas it already saw are
 * trimmed again, so nothing is repeated or lost. A piece the durable stream never got (a worker
 * died before its signal) is forgotten at the step's `step-finished` or `step-retry`.
 */
import type { Client, QueryDefinition } from '@temporalio/client';
import { deltaUnits, withoutFirstUnits } from '../activities/live-deltas.js';
import type { LiveAhead, StreamEventsPage, StreamEventsRequest, TurnEvent } from '../workflows/types/turn-events.js';
import { readEventStream, type StreamReadOptions } from './event-subscription.js';
import { advance, compareAttempts, type DurablePlace, type LivePieces } from './live-merge.js';

type Query<E> = QueryDefinition<StreamEventsPage<E>, [StreamEventsRequest?]>;

/** What a reader needs of a live feed (stream-hub.ts). */
export interface LiveFeedView<E> {
  readonly events: ReadonlyArray<{ offset: number; event: E }>;
  readonly keptFrom: number;
  readonly ended: boolean;
  readonly error: unknown;
  readonly live?: LivePieces;
  indexOf(offset: number): number;
  changed(signal?: AbortSignal, live?: boolean): Promise<void>;
}

const keyOf = (event: { step: number; attempt: number }) => `${event.step}:${event.attempt}`;

export async function* readMerged<E>(
  client: Client,
  workflowId: string,
  query: Query<E>,
  feed: LiveFeedView<E>,
  options: StreamReadOptions<E> & { liveAhead?: LiveAhead[] },
): AsyncGenerator<{ offset: number; event: E; live?: LiveAhead[] }, void, undefined> {
  const { isLast = () => false, signal } = options;
  const live = feed.live!;
  let offset = Math.max(0, Math.floor(options.fromOffset ?? 0));
  const ahead = new Map<string, LiveAhead>((options.liveAhead ?? []).map((entry) => [keyOf(entry), { ...entry }]));
  let durable: DurablePlace | undefined;
  let seq = live.firstSeq;
  const shownAhead = () => (ahead.size > 0 ? { live: [...ahead.values()].map((entry) => ({ ...entry })) } : {});

  for (;;) {
    if (signal?.aborted) return;
    if (offset < feed.keptFrom) {
      // Dropped from memory: this reader reads the durable stream on its own.
      yield* readEventStream(client, workflowId, query, { ...options, fromOffset: offset });
      return;
    }
    // The durable stream's place at `offset`: known from the start, or once the feed has read that far.
    const readThrough = (feed.events.at(-1)?.offset ?? -1) + 1;
    if (durable === undefined && (offset === 0 || readThrough >= offset || feed.ended)) durable = placeBefore(offset);
    if (durable === undefined) {
      if (feed.ended) {
        if (feed.error !== undefined) throw feed.error;
        return;
      }
      await feed.changed(signal);
      continue;
    }

    for (let index = feed.indexOf(offset); index < feed.events.length; index++) {
      const record = feed.events[index]!;
      offset = record.offset + 1;
      const event = record.event as E & TurnEvent;
      const start = live.deltaStart[index]!;
      durable = advance(durable, event).place;
      const units = deltaUnits(event);
      let shown: E | undefined = event;
      if (units > 0) {
        const key = keyOf(event as { step: number; attempt: number });
        const seen = ahead.get(key)?.units ?? 0;
        if (start + units >= seen) ahead.delete(key);
        shown = withoutFirstUnits(event, seen - start);
      }
      for (const [key, entry] of ahead) if (compareAttempts(entry, durable) < 0) ahead.delete(key);
      if (shown !== undefined) {
        yield { offset: record.offset, event: shown, ...shownAhead() };
        if (units === 0 && isLast(record.event)) return;
        if (signal?.aborted) return;
      }
    }
    if (feed.ended) {
      if (feed.error !== undefined) throw feed.error;
      return;
    }

    for (seq = Math.max(seq, live.firstSeq); seq < live.endSeq; seq = Math.max(seq, live.firstSeq)) {
      const piece = live.pieces[seq - live.firstSeq]!;
      seq++;
      const { event } = piece;
      const order = compareAttempts(event, durable);
      // Older than the durable stream's place, or a retry whose `step-retry` is not read yet.
      if (order < 0 || (event.attempt > 1 && order > 0)) continue;
      const key = keyOf(event);
      const seen = ahead.get(key)?.units ?? (order === 0 ? durable.units : 0);
      const end = piece.start + deltaUnits(event);
      if (piece.start > seen || end <= seen) continue;
      ahead.set(key, { step: event.step, attempt: event.attempt, units: end });
      yield { offset: offset - 1, event: withoutFirstUnits(event, seen - piece.start) as unknown as E, ...shownAhead() };
      if (signal?.aborted) return;
      // New durable events first: they come before later pieces.
      if (feed.indexOf(offset) < feed.events.length) break;
    }
    if (feed.indexOf(offset) < feed.events.length) continue;
    await feed.changed(signal, true);
  }

  /** The durable stream's place before `from`, from the kept events before it. */
  function placeBefore(from: number): DurablePlace {
    for (let index = feed.indexOf(from) - 1; index >= 0; index--) {
      const event = feed.events[index]!.event as unknown as TurnEvent;
      const units = deltaUnits(event);
      if (units > 0 || event.type === 'step-retry' || event.type === 'step-finished') {
        const { place } = advance({ step: -1, attempt: 0, units: 0 }, event);
        return units > 0 ? { ...place, units: live.deltaStart[index]! + units } : place;
      }
    }
    return { step: -1, attempt: 0, units: 0 };
  }
}
