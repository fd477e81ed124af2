/**
 * One reader of a workflow's event stream per process, however many follow it: every
 * `turnEvents` / `conversationEvents` reader of a `TurnpikeClient` (the HTTP API's SSE
 * connections, `useChat` streams, the dashboard) is served from a shared feed, which alone
 * queries the workflow (event-subscription.ts). A hundred SSE connections to one turn cost the
 * turn the queries of one reader.
 *
 * A feed reads from the offset of the reader that started it (a reader resuming near the end of
 * a long turn costs the queries of the events after it, not of the whole stream) and keeps what
 * it read while anybody follows it, so a reader joining late or resuming from a later offset is
 * served from memory. A reader from an earlier offset reads the events before the feed's on its
 * own, then follows the feed; so does one behind the events the feed dropped (it keeps
 * {@link MAX_KEPT_EVENTS}). A live reader needs the feed from the stream's start (its merge
 * places each durable delta in its step-attempt), so a live feed starts at 0, unless the
 * turn has closed and the reader showed nothing ahead: no piece can come then, and it is read as
 * a durable reader. A closed run's pages are read once per client (closed-runs.ts). A feed ends with its
 * stream (the turn's `turn-finished`, the workflow's end) or with the first error, which every
 * reader of it receives; it stops querying {@link LINGER_MS} after its last reader leaves.
 */
import type { Client, QueryDefinition } from '@temporalio/client';
import type { LiveAhead, StreamEventsPage, StreamEventsRequest } from '../workflows/types/turn-events.js';
import { readEventStream, type StreamReadOptions } from './event-subscription.js';
import type { LiveDeltaChannel } from '../activities/live-deltas.js';
import type { ClosedRuns } from './closed-runs.js';
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
  keptFrom: number;
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
    /** The offset the feed reads from. */
    readonly from: number,
    read: FeedReader<E>,
    private readonly onClosed: () => void,
    channel?: { live: LiveDeltaChannel; workflowId: string },
  ) {
    this.keptFrom = from;
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
    private readonly closedRuns?: ClosedRuns,
  ) {}

  /**
   * A turn's events merged with the live pieces of the hub's live channel (live-reader.ts); read
   * as {@link read} does without a channel, or when the turn has closed and the reader showed
   * nothing ahead of its offset.
   */
  async *readLive<E>(workflowId: string, query: Query<E>, options: StreamReadOptions<E> & { liveAhead?: LiveAhead[] } = {}): AsyncGenerator<StreamRecord<E> & { live?: LiveAhead[] }, void, undefined> {
    if (!this.liveDeltas) return yield* this.read(workflowId, query, options);
    const from = Math.max(0, Math.floor(options.fromOffset ?? 0));
    const existing = this.feeds.get(this.keyOf(workflowId, query));
    if (from > 0 && !options.liveAhead?.length && !(existing?.from === 0) && (await this.closed(workflowId))) return yield* this.read(workflowId, query, options);
    const feed = this.feed(workflowId, query, options, 0, true);
    feed.join();
    try {
      yield* readMerged(this.client, workflowId, query, feed, { ...options, closedRuns: this.closedRuns });
    } finally {
      feed.leave();
    }
  }

  /** The events of `workflowId`'s stream from `options.fromOffset`, each once and in order (as `readEventStream`). */
  async *read<E>(workflowId: string, query: Query<E>, options: StreamReadOptions<E> = {}): AsyncGenerator<StreamRecord<E>, void, undefined> {
    const { isLast = () => false, signal } = options;
    let offset = Math.max(0, Math.floor(options.fromOffset ?? 0));
    const feed = this.feed(workflowId, query, options, offset);
    feed.join();
    try {
      for (;;) {
        if (signal?.aborted) return;
        if (offset < feed.keptFrom) {
          // Before the feed's first event (or dropped from memory): this reader reads those on its own.
          const until = feed.keptFrom;
          for await (const record of readEventStream(this.client, workflowId, query, { ...options, fromOffset: offset, untilOffset: until, closedRuns: this.closedRuns })) {
            offset = record.offset + 1;
            yield record;
            if (isLast(record.event) || signal?.aborted) return;
          }
          offset = Math.max(offset, until);
          continue;
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

  /** Whether the workflow's latest run has closed (a description: no replay). */
  private async closed(workflowId: string): Promise<boolean> {
    try {
      return (await this.client.workflow.getHandle(workflowId).describe()).status.name !== 'RUNNING';
    } catch {
      return false; // the feed meets the error, and tells its readers
    }
  }

  private keyOf(workflowId: string, query: Query<unknown>): string {
    return `${query.name}\u0000${workflowId}`;
  }

  /** The stream's feed, started at `from` when there is none; a `live` reader's is from 0: a feed from a later offset is then replaced. */
  private feed<E>(workflowId: string, query: Query<E>, options: StreamReadOptions<E>, from: number, live = false): Feed<E> {
    // One feed per stream, live readers or not: pieces cost the turn no query.
    const key = this.keyOf(workflowId, query as Query<unknown>);
    let feed = this.feeds.get(key) as Feed<E> | undefined;
    // A feed that failed is not reused: the next reader starts a fresh one. Nor is one from a
    // later offset by a live reader; it goes on for its readers, and new ones join the new feed.
    if (!feed || (feed.ended && feed.error !== undefined) || (live && feed.from > 0)) {
      const created: Feed<E> = new Feed<E>(
        from,
        (signal) => readEventStream(this.client, workflowId, query, { isLast: options.isLast, waitForStartMs: options.waitForStartMs, signal, fromOffset: from, closedRuns: this.closedRuns }),
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
