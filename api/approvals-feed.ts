/**
 * One live feed of the parked-call listing for every open dashboard, instead of each tab
 * polling `GET /api/approvals`: browsers allow six HTTP/1.1 connections per host, so an
 * `EventSource` per turn would not scale to a queue, but one per tab does.
 *
 * The feed polls the listing from visibility — one `listParkedCalls` for all subscribers,
 * every `intervalMs` after the previous listing finished, and only while someone listens —
 * and each subscriber is sent its own view (what that caller may decide) only when it changed.
 * Polling was chosen over subscribing to every parked turn's event stream: the listing is
 * visibility pages (no workflow query for a parked turn), it sees turns started anywhere, and
 * its cost does not grow with the number of open tabs. A decision made through this API
 * `nudge`s the feed so that every tab sees it at once rather than at the next poll.
 *
 * There is one feed per rights to decide (`ApprovalsFeeds`): each lists only the turns its
 * callers may decide in (api/parked-listing.ts), so the cost grows with the approvers listening,
 * each by what they may decide, and not with every parked turn.
 */
import type { ParkedCall } from '../client/turnpike-client.js';
import type { Caller } from './auth.js';
import { rightsKey } from './parked-listing.js';

/** How often the feed lists parked calls while anyone listens. */
export const DEFAULT_FEED_INTERVAL_MS = 2_000;

export type FeedListener = (calls: readonly ParkedCall[] | Error) => void;

export class ApprovalsFeed {
  private readonly listeners = new Set<FeedListener>();
  private latest: readonly ParkedCall[] | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private again = false;

  /** `list`: the listing (shared with `GET /api/approvals`); `intervalMs`: the pause between listings. */
  constructor(
    private readonly list: () => Promise<readonly ParkedCall[]>,
    private readonly intervalMs = DEFAULT_FEED_INTERVAL_MS,
  ) {}

  /** Calls `listener` with the latest listing now (if any) and with each later one; returns the unsubscribe. */
  subscribe(listener: FeedListener): () => void {
    this.listeners.add(listener);
    if (this.latest) listener(this.latest);
    if (this.listeners.size === 1) this.nudge();
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) {
        clearTimeout(this.timer);
        this.timer = undefined;
        this.latest = undefined;
      }
    };
  }

  /** Lists again now (after the listing under way, if one is). */
  nudge(): void {
    if (this.listeners.size === 0) return;
    if (this.running) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    void this.poll();
  }

  /** Whether no one listens. */
  get idle(): boolean {
    return this.listeners.size === 0;
  }

  /** Listings made so far (for tests and measurements). */
  listings = 0;

  private async poll(): Promise<void> {
    this.running = true;
    this.again = false;
    let result: readonly ParkedCall[] | Error;
    try {
      result = await this.list();
      this.listings++;
      this.latest = result;
    } catch (error) {
      result = error instanceof Error ? error : new Error(String(error));
    }
    this.running = false;
    for (const listener of this.listeners) listener(result);
    if (this.listeners.size === 0) return;
    if (this.again) this.nudge();
    else this.timer = setTimeout(() => void this.poll(), this.intervalMs);
  }
}

/** One `ApprovalsFeed` per rights to decide (`rightsKey`), while anyone with those rights listens. */
export class ApprovalsFeeds {
  private readonly feeds = new Map<string, ApprovalsFeed>();

  /** `list`: the listing for a caller's rights (`ParkedListing.parkedCalls`); `intervalMs`: the pause between listings. */
  constructor(
    private readonly list: (who: Caller) => Promise<readonly ParkedCall[]>,
    private readonly intervalMs = DEFAULT_FEED_INTERVAL_MS,
  ) {}

  /** Subscribes `listener` to the feed of `who`'s rights; returns the unsubscribe. */
  subscribe(who: Caller, listener: FeedListener): () => void {
    const key = rightsKey(who);
    let feed = this.feeds.get(key);
    if (!feed) {
      feed = new ApprovalsFeed(() => this.list(who), this.intervalMs);
      this.feeds.set(key, feed);
    }
    const unsubscribe = feed.subscribe(listener);
    const subscribed = feed;
    return () => {
      unsubscribe();
      if (subscribed.idle && this.feeds.get(key) === subscribed) this.feeds.delete(key);
    };
  }

  /** Every feed lists again now. */
  nudge(): void {
    for (const feed of this.feeds.values()) feed.nudge();
  }

  /** Listings made so far by the feeds listened to now (for tests and measurements). */
  get listings(): number {
    let total = 0;
    for (const feed of this.feeds.values()) total += feed.listings;
    return total;
  }
}
