/**
 * What the approval routes and the live feed list: parked calls, shared by every request within
 * LISTING_TTL_MS, and each caller's view of them (what they may decide or read, signed when
 * decisions are); the decisions a caller may read. A decision or a result makes the next listing
 * fresh (`changed`).
 */
import type { z } from 'zod';
import type { ParkedCall, TurnpikeClient } from '../client/turnpike-client.js';
import { waitOutTransient } from '../client/transient-wait.js';
import { decidable } from '../client/listings.js';
import { MAX_PAGE_LIMIT } from '../client/expiry-pages.js';
import { mayDecide } from '../workflows/calls/call-checks.js';
import { signDecision, type Caller } from './auth.js';
import type { ReadAccess } from './read-access.js';
import { sameTenant } from './tenant-binding.js';
import type { decisionsQuery } from './request-schemas.js';

const LISTING_TTL_MS = 500;
/** Parked turns per page when the request names no `limit` (`buildApi({ listingLimit })`; see `TurnpikeClient.listParkedPage`). */
const DEFAULT_LISTING_LIMIT = 5_000;
/**
 * Parked turns per page of the live feed (at most `listingLimit`), which the dashboards show
 * first: a caller with a long queue sees its soonest 100 turns without waiting for the rest. The
 * dashboard asks for pages of the same size (api/dashboard/listing.js).
 */
const FEED_PAGE_LIMIT = 100;

/** The key of a caller's rights to decide: callers with the same share one listing. */
export function rightsKey(who: Caller): string {
  return JSON.stringify([who.identity, [...(who.groups ?? [])].sort()]);
}

export class ParkedListing {
  /** Per rights key (`rightsKey`): the listing of the calls those rights may decide, shared within LISTING_TTL_MS. */
  private readonly listings = new Map<string, { at: number; calls: Promise<ParkedCall[]> }>();
  /** Per listing: the starters of the conversations whose client-tool calls and questions it lists, for reading rights. */
  private readonly listedStarters = new WeakMap<readonly ParkedCall[], Map<string, string | undefined>>();
  /** Per listing: the cursor of the page after it, when there may be one. */
  private readonly listedNext = new WeakMap<readonly ParkedCall[], string>();
  /** Called after each change, so that open dashboards learn at once (the approvals feed's nudge). */
  onChange: () => void = () => {};

  constructor(
    private readonly client: TurnpikeClient,
    private readonly access: ReadAccess,
    private readonly options: { listingLimit?: number; decisionSecret?: string },
  ) {}

  /**
   * The first page (FEED_PAGE_LIMIT turns) of the parked calls `who` may decide, and of the
   * client-tool calls and questions (filtered by reading rights in `viewFor`): what the live feed
   * lists. See `parkedPage`.
   */
  parkedCalls = (who: Caller): Promise<ParkedCall[]> => this.parkedPage(who, { limit: Math.min(this.defaultLimit(), FEED_PAGE_LIMIT) });

  private defaultLimit(): number {
    return Math.min(this.options.listingLimit ?? DEFAULT_LISTING_LIMIT, MAX_PAGE_LIMIT);
  }

  /**
   * A page of the parked calls `who` may decide, and the client-tool calls and questions,
   * soonest-expiring turn first (`TurnpikeClient.listParkedPage`): `limit` turns
   * (`listingLimit`, 5,000, when not given), from `after` on. Visibility is asked for the turns
   * those rights may decide in (`TurnpikeApprovers`, workflows/context/approver-values.ts), in
   * windows of expiry (`TurnpikeNextExpiry`), so a page costs about what it shows, not the length
   * of the approver's queue nor every parked turn (plus a `turnState` query for the few turns
   * whose memo cannot answer).
   *
   * A first page is shared by every request with the same rights and limit within LISTING_TTL_MS:
   * the live feed and API callers (and dashboards that fell back to polling) list often, so
   * concurrent pollers share one listing instead of multiplying that load. A later page (`after`)
   * is read for its request alone.
   */
  parkedPage(who: Caller, page: { limit?: number; after?: string } = {}): Promise<ParkedCall[]> {
    const limit = page.limit ?? this.defaultLimit();
    if (page.after !== undefined) return this.list(who, limit, page.after);
    const key = `${rightsKey(who)}/${limit}`;
    const now = Date.now();
    const shared = this.listings.get(key);
    if (shared && now - shared.at <= LISTING_TTL_MS) return shared.calls;
    for (const [other, listing] of this.listings) if (now - listing.at > LISTING_TTL_MS) this.listings.delete(other);
    const calls = this.list(who, limit);
    this.listings.set(key, { at: now, calls });
    calls.catch(() => this.listings.get(key)?.calls === calls && this.listings.delete(key));
    return calls;
  }

  private list(who: Caller, limit: number, after?: string): Promise<ParkedCall[]> {
    // A listing that Temporal refuses for a while (its persistence or visibility rate limit) is asked again, then answered 503.
    const approver = { identity: who.identity, ...(who.groups ? { groups: who.groups } : {}) };
    const listed = waitOutTransient('the parked calls', this.client.transientPatienceMs, () => this.client.listParkedPage({ limit, approver, ...(after !== undefined ? { after } : {}) }));
    return listed.then(async ({ calls: all, next }) => {
      const conversations = all.flatMap((call) => (!decidable(call) && !call.startedBy && call.conversationId ? [call.conversationId] : []));
      this.listedStarters.set(all, await this.access.conversationStarters(conversations));
      if (next !== undefined) this.listedNext.set(all, next);
      return all;
    });
  }

  /** The calls of a listing that `keep` keeps, as a listing of its own (its starters and next page kept). */
  narrowed(all: readonly ParkedCall[], keep: (call: ParkedCall) => boolean): readonly ParkedCall[] {
    const kept = all.filter(keep);
    const starters = this.listedStarters.get(all);
    const next = this.listedNext.get(all);
    if (starters) this.listedStarters.set(kept, starters);
    if (next !== undefined) this.listedNext.set(kept, next);
    return kept;
  }

  /**
   * What `caller` sees of a page of the listing: the calls they may decide, with counts per tool
   * (of this page) and signed when decisions are, and `next`, the cursor of the page after it.
   */
  viewFor(all: readonly ParkedCall[], who: Caller, keep: (call: ParkedCall) => boolean = () => true) {
    const identity = who.identity;
    // Each approver sees what they may decide (the turn checks again when they do); client-tool
    // calls and MCP questions are listed to those who may read their turn (api/read-access.ts).
    const starters = this.listedStarters.get(all) ?? new Map<string, string | undefined>();
    // A caller bound to a tenant sees that tenant's calls only, even those it could decide.
    const admin = this.access.isAdmin(who);
    const mine = all.filter((call) =>
      sameTenant(who, admin, call.tenant) && (decidable(call) ? mayDecide(call, { approver: identity, approverGroups: who.groups }) : this.access.mayReadListed(who, call, starters)),
    );
    const counts: Record<string, number> = {};
    for (const call of mine) if (decidable(call)) counts[call.toolName] = (counts[call.toolName] ?? 0) + 1;
    const secret = this.options.decisionSecret;
    const sign = (call: ParkedCall) =>
      secret && call.approvalId ? { decisionToken: signDecision(secret, { turnId: call.turnWorkflowId, approvalId: call.approvalId, inputHash: call.inputHash, approver: identity }) } : {};
    const sorted = mine.filter(keep).sort((a, b) => a.expiresAt.localeCompare(b.expiresAt));
    const next = this.listedNext.get(all);
    return { approver: identity, counts, calls: sorted.map((call) => ({ ...call, ...sign(call) })), ...(next !== undefined ? { next } : {}) };
  }

  /** Decisions on turns the caller may read, each turn checked once; `next` pages on from the last one read. */
  async readableDecisions(who: Caller, query: Omit<z.infer<typeof decisionsQuery>, 'format'>) {
    // A caller bound to a tenant reads that tenant's decisions only (api/tenant-binding.ts).
    const admin = this.access.isAdmin(who);
    const all = await this.client.listDecisions(!admin && who.tenant !== undefined ? { ...query, tenant: who.tenant } : query);
    const next = all.length > 0 ? { next: { until: all.at(-1)!.decidedAt } } : {};
    if (admin) return { decisions: all, ...next };
    const turns = [...new Set(all.map((decision) => decision.turnWorkflowId))];
    const readable = new Set<string>();
    for (let at = 0; at < turns.length; at += 32) {
      const batch = turns.slice(at, at + 32);
      const allowed = await Promise.all(batch.map((turnId) => this.access.mayReadTurn(who, turnId).catch(() => false)));
      batch.forEach((turnId, index) => allowed[index] && readable.add(turnId));
    }
    return { decisions: all.filter((decision) => readable.has(decision.turnWorkflowId)), ...next };
  }

  /** After a decision or a result: the next listing must not show the call, and open dashboards should learn at once. */
  changed(): void {
    this.listings.clear();
    this.onChange();
  }
}
