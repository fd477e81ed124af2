/**
 * One reader of a live feed (stream-hub.ts): the durable events from its offset, with the live
 * pieces beyond them (live-merge.ts), each unit of text once and in order.
 *
 * A reader's place is `offset` (the next durable event it reads) and `units`, the delta units of
 * the whole stream it has shown. A durable delta event is trimmed of the units already shown (a
 * live piece showed them) and skipped when nothing is left; a live piece is yielded as
 * `{ offset: <last durable offset before it>, event, live: <units beyond that offset> }`, so a
 * reader resumes with `fromOffset: offset + 1, liveAhead: live` and loses and repeats nothing.
 * A step's end (`step-finished`) or a retry (`step-retry`) sets `units` to the durable count: a
 * piece shown live that the durable stream never got (a worker died before its signal) does not
 * cut text from what follows.
 */
import type { Client, QueryDefinition } from '@temporalio/client';
import { deltaUnits, withoutFirstUnits } from '../activities/live-deltas.js';
import type { StreamEventsPage, StreamEventsRequest } from '../workflows/types/turn-events.js';
import { readEventStream, type StreamReadOptions } from './event-subscription.js';
import type { LiveMerge } from './live-merge.js';

type Query<E> = QueryDefinition<StreamEventsPage<E>, [StreamEventsRequest?]>;

/** What a reader needs of a live feed (stream-hub.ts). */
export interface LiveFeedView<E> {
  readonly events: ReadonlyArray<{ offset: number; event: E }>;
  readonly keptFrom: number;
  readonly ended: boolean;
  readonly error: unknown;
  readonly live?: LiveMerge;
  indexOf(offset: number): number;
  changed(signal?: AbortSignal): Promise<void>;
}

export async function* readMerged<E>(
  client: Client,
  workflowId: string,
  query: Query<E>,
  feed: LiveFeedView<E>,
  options: StreamReadOptions<E> & { liveAhead?: number },
): AsyncGenerator<{ offset: number; event: E; live?: number }, void, undefined> {
  const { isLast = () => false, signal } = options;
  const live = feed.live!;
  let offset = Math.max(0, Math.floor(options.fromOffset ?? 0));
  const ahead = Math.max(0, Math.floor(options.liveAhead ?? 0));
  let units: number | undefined;
  for (;;) {
    if (signal?.aborted) return;
    if (offset < feed.keptFrom) {
      // Dropped from memory: this reader reads the durable stream on its own.
      yield* readEventStream(client, workflowId, query, { ...options, fromOffset: offset });
      return;
    }
    if (units === undefined && (live.readThrough >= offset || feed.ended)) {
      const index = feed.indexOf(offset);
      units = (index < feed.events.length ? live.unitsBefore[index]! : live.durableUnits) + ahead;
    }
    if (units !== undefined) {
      for (let index = feed.indexOf(offset); index < feed.events.length; index++) {
        const record = feed.events[index]!;
        const before = live.unitsBefore[index]!;
        offset = record.offset + 1;
        const event = record.event as E & { type: string };
        const length = deltaUnits(event);
        if (length > 0) {
          if (before + length <= units) continue;
          const shown = withoutFirstUnits(event, units - before)!;
          units = before + length;
          yield { offset: record.offset, event: shown };
        } else {
          if (event.type === 'step-finished' || event.type === 'step-retry') units = before;
          yield record;
          if (isLast(record.event)) return;
        }
        if (signal?.aborted) return;
      }
      if (feed.ended) {
        if (feed.error !== undefined) throw feed.error;
        return;
      }
      for (let piece = next(units); piece; piece = next(units)) {
        const shown = withoutFirstUnits(piece.event, units - piece.unitsBefore)!;
        units = piece.unitsBefore + deltaUnits(piece.event);
        yield { offset: offset - 1, event: shown as unknown as E, live: units - live.durableUnits };
        if (signal?.aborted) return;
        // New durable events first: they come before later pieces.
        if (feed.indexOf(offset) < feed.events.length) break;
      }
      if (feed.indexOf(offset) < feed.events.length) continue;
    } else if (feed.ended) {
      if (feed.error !== undefined) throw feed.error;
      return;
    }
    await feed.changed(signal);
  }

  /** The tail's first piece with units beyond `shown` that continues it. */
  function next(shown: number) {
    if (feed.indexOf(offset) < feed.events.length) return undefined;
    const piece = live.tail.find((candidate) => candidate.unitsBefore + deltaUnits(candidate.event) > shown);
    return piece && piece.unitsBefore <= shown ? piece : undefined;
  }
}
