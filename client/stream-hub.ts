/**
 * One reader of a workflow's event stream per process, however many follow it: every
 * `turnEvents` / `conversationEvents` reader of a `TurnpikeClient` (the HTTP API's SSE
 * connections, `useChat` streams, the dashboard) is served from a shared feed, which alone
 * queries the workflow (event-subscription.ts). A hundred SSE connections to one turn cost the
 * turn the queries of one reader.
 *
 * A feed reads from offset 0 and keeps what it read while anybody follows it, so a reader joining
 * late or resuming from an offset is served from memory; past {@link MAX_KEPT_EVENTS} it drops its
 * oldest events, and a reader that needs one of those reads on its own. A feed ends with its
 * stream (the turn's `turn-finished`, the workflow's end) or with the first error, which every
 * reader of it receives; it stops querying {@link LINGER_MS} after its last reader leaves.
 */
import type { Client, QueryDefinition } from '@temporalio/client';
import type { LiveAhead, StreamEventsPage, StreamEventsRequest } from '../workflows/types/turn-events.js';
import { readEventStream, type StreamReadOptions } from './event-subscription.js';
import type { LiveDeltaChannel } from '../activities/live-deltas.js';
import { LivePieces } from './live-merge.js';
import { readMerged } from './live-reader.js';

/** How long a feed nobody follows keeps reading, for a reader that reconnects at once. */
const LINGER_MS = 5_000;
/** Events a feed keeps in memory at most. */
const MAX_KEPT_EVENTS = 50_000;

type Query<E> = QueryDefinition<StreamEventsPage<E>, [StreamEventsRequest?]>;
type StreamRecord<E> = { offset: number; event: E };
type FeedReader<E> = (signal: AbortSignal) => AsyncGenerator<StreamRecord<E>, void, undefined>;

class Feed<E> {
  readonly events: Array<StreamRecord<E>> = [];
  /** Events before this offset were dropped (or never kept). */
  keptFrom = 0;
  ended = false;
  error: unknown;
  readers = 0;
  private readonly wake = new Set<() => void>();
  /** Readers of live pieces waiting (live-reader.ts): a piece wakes only them. */
  private readonly wakeLive = new Set<() => void>();
  private readonly stop = new AbortController();
  private lingering?: NodeJS.Timeout;
  /** The live pieces beside the durable events, when the hub has a live channel (live-merge.ts). */
  readonly live?: LivePieces;
  private unsubscribe?: () => void;

  constructor(
    read: FeedReader<E>,
    private readonly onClosed: () => void,
    channel?: { live: LiveDeltaChannel; workflowId: string },
  ) {
    if (channel) {
      const live = (this.live = new LivePieces());
      this.unsubscribe = channel.live.subscribe(channel.workflowId, (piece) => {
        live.addPiece(piece);
        this.notify(this.wakeLive);
      });
    }
    void (async () => {
      try {
        for await (const record of read(this.stop.signal)) {
          this.events.push(record);
          this.live?.addDurable(record.event as never);
          if (this.events.length > MAX_KEPT_EVENTS) {
            const dropped = this.events.length - MAX_KEPT_EVENTS;
            this.keptFrom = this.events.splice(0, dropped).at(-1)!.offset + 1;
            this.live?.dropOldest(dropped);
          }
          this.notify();
        }
      } catch (error) {
        this.error = error;
      }
      this.ended = true;
      this.notify();
      if (this.error !== undefined || this.readers === 0) this.close();
    })();
  }

  /** Resolves at the next event (or live piece, with `live`), the feed's end, or `signal`'s abort. */
  changed(signal?: AbortSignal, live = false): Promise<void> {
    if (signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        signal?.removeEventListener('abort', done);
        this.wake.delete(done);
        this.wakeLive.delete(done);
        resolve();
      };
      this.wake.add(done);
      if (live) this.wakeLive.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  join(): void {
    this.readers++;
    clearTimeout(this.lingering);
  }

  leave(): void {
    if (--this.readers > 0) return;
    if (this.ended) this.close();
    else this.lingering = setTimeout(() => this.readers === 0 && this.close(), LINGER_MS);
  }

  /** The index of the first kept event at `offset` or later. */
  indexOf(offset: number): number {
    let low = 0;
    let high = this.events.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.events[middle]!.offset < offset) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  private notify(waiting: Set<() => void> = this.wake): void {
    for (const wake of [...waiting]) wake();
  }

  private close(): void {
    clearTimeout(this.lingering);
    this.unsubscribe?.();
    this.stop.abort();
    this.onClosed();
  }
}

export class StreamHub {
  private readonly feeds = new Map<string, Feed<unknown>>();

  constructor(
    private readonly client: Client,
    private readonly liveDeltas?: LiveDeltaChannel,
  ) {}

  /**
   * A turn's events merged with the live pieces of the hub's live channel (live-reader.ts); read
   * as {@link read} does without a channel.
   */
  async *readLive<E>(workflowId: string, query: Query<E>, options: StreamReadOptions<E> & { liveAhead?: LiveAhead[] } = {}): AsyncGenerator<StreamRecord<E> & { live?: LiveAhead[] }, void, undefined> {
    if (!this.liveDeltas) return yield* this.read(workflowId, query, options);
    const feed = this.feed(workflowId, query, options);
    feed.join();
    try {
      yield* readMerged(this.client, workflowId, query, feed, options);
    } finally {
      feed.leave();
    }
  }

  /** The events of `workflowId`'s stream from `options.fromOffset`, each once and in order (as `readEventStream`). */
  async *read<E>(workflowId: string, query: Query<E>, options: StreamReadOptions<E> = {}): AsyncGenerator<StreamRecord<E>, void, undefined> {
    const { isLast = () => false, signal } = options;
    let offset = Math.max(0, Math.floor(options.fromOffset ?? 0));
    const feed = this.feed(workflowId, query, options);
    feed.join();
    try {
      for (;;) {
        if (signal?.aborted) return;
        if (offset < feed.keptFrom) {
          // Dropped from memory: this reader reads on its own.
          yield* readEventStream(this.client, workflowId, query, { ...options, fromOffset: offset });
          return;
        }
        for (let index = feed.indexOf(offset); index < feed.events.length; index++) {
          const record = feed.events[index] as StreamRecord<E>;
          offset = record.offset + 1;
          yield record;
          if (isLast(record.event) || signal?.aborted) return;
        }
        if (feed.ended) {
          if (feed.error !== undefined) throw feed.error;
          return;
        }
        await feed.changed(signal);
      }
    } finally {
      feed.leave();
    }
  }

  /** Feeds that are reading now (for tests and metrics). */
  get size(): number {
    return this.feeds.size;
  }

  private feed<E>(workflowId: string, query: Query<E>, options: StreamReadOptions<E>): Feed<E> {
    // One feed per stream, live readers or not: pieces cost the turn no query.
    const key = `${query.name}\u0000${workflowId}`;
    let feed = this.feeds.get(key) as Feed<E> | undefined;
    // A feed that failed is not reused: the next reader starts a fresh one.
    if (!feed || (feed.ended && feed.error !== undefined)) {
      const created: Feed<E> = new Feed<E>(
        (signal) => readEventStream(this.client, workflowId, query, { isLast: options.isLast, waitForStartMs: options.waitForStartMs, signal }),
        () => {
          if (this.feeds.get(key) === created) this.feeds.delete(key);
        },
        this.liveDeltas ? { live: this.liveDeltas, workflowId } : undefined,
      );
      feed = created;
      this.feeds.set(key, feed as Feed<unknown>);
    }
    return feed;
  }
}
