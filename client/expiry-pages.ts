/**
 * An approver's queue a page at a time, soonest-expiring first (`TurnpikeClient.listParkedPage`).
 *
 * Temporal's SQL visibility (PostgreSQL, SQLite) cannot order a listing by a search attribute, so
 * reading the first N turns of a queue gives the newest-started N, not the most urgent. Each turn
 * keeps `TurnpikeNextExpiry` (workflows/context/next-expiry.ts), and a page reads the queue in
 * windows of that attribute, soonest first: `TurnpikeNextExpiry <= now + 1 min`, then the next 4
 * min, 16, 64, … (each window 4 times the last), until the page is full. Every turn of an earlier
 * window expires before every turn of a later one, so sorting what the windows read (by expiry,
 * then turn id) gives the queue's first turns. A window is counted first (`count` is one cheap
 * query): one that holds more than a few pages is narrowed (a quarter at a time) before it is read,
 * so a page reads about what it shows even when thousands of turns expire within a minute.
 *
 * The order is the turn's: its soonest decision, whoever may decide it; a turn's parked calls are
 * listed together, never split between pages. `next` is the expiry and turn id of a page's last
 * turn; the next page reads from that expiry on and keeps what sorts after it. Turns parked or
 * decided between two pages show up or drop out as they sort (a new turn that expires before the
 * cursor is not shown until the first page is read again); nothing already shown repeats, and
 * nothing that stayed parked is skipped.
 *
 * After the dated turns come, ordered by turn id, those that publish no expiry: turns with no
 * decision parked (only client-tool calls or questions, `NEXT_EXPIRY_NONE`), turns a worker from
 * before the attribute runs (still at `NEXT_EXPIRY_NONE`), and turns started without it (no value:
 * before it existed, or in a namespace without it). These are read all at once, up to
 * `UNDATED_LIMIT` turns, on each page that reaches them. A namespace without `TurnpikeNextExpiry`
 * reads the queue up to `UNDATED_LIMIT` turns and pages it in memory, by the same order and cursor.
 */
import { NEXT_EXPIRY_NONE, nextExpiry } from '../workflows/context/next-expiry.js';
import { knownWithoutNextExpiry, refusedNextExpiry } from './approvers-attribute.js';
import { inScope, parkedScope, readParkedTurns, type ParkedCall, type ParkedCallsOptions, type ParkedTurn, type TurnReader } from './listings.js';

/** What `listParkedPage` reads. */
export interface ParkedPageOptions extends Omit<ParkedCallsOptions, 'limit'> {
  /** Turns per page (their calls come together): 1 to 5,000; 50 when not given. */
  limit?: number;
  /** The `next` of the page before, to read on from it. */
  after?: string;
}

/** A page of an approver's queue: its calls, soonest-expiring turn first, and the cursor of the next page when there may be one. */
export interface ParkedPage {
  /** The calls of the page's turns, soonest-expiring turn first (then by turn id); a turn's calls together. */
  calls: ParkedCall[];
  /** Pass as `after` for the next page; absent when the queue ended with this page. Opaque: a turn's expiry and id. */
  next?: string;
}

export const DEFAULT_PAGE_LIMIT = 50;
export const MAX_PAGE_LIMIT = 5_000;
/** Turns without an expiry read at most, on a page that reaches them (and a namespace without the attribute's whole read). */
export const UNDATED_LIMIT = 5_000;
const FIRST_WINDOW_MS = 60_000;
const GROWTH = 4;
const NONE_MS = Date.parse(NEXT_EXPIRY_NONE);

/** A position in the queue: a turn's expiry (ISO; `NEXT_EXPIRY_NONE` for the undated) and its id. */
interface Position {
  expiry: string;
  turnId: string;
}

/** The opaque cursor of a position. */
function cursorOf(position: Position): string {
  return Buffer.from(JSON.stringify([position.expiry, position.turnId]), 'utf8').toString('base64url');
}

/** The position a cursor names, or undefined when it is not one `listParkedPage` made. */
export function parseParkedCursor(cursor: string): Position | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (!Array.isArray(value) || value.length !== 2) return undefined;
    const [expiry, turnId] = value as unknown[];
    if (typeof expiry !== 'string' || typeof turnId !== 'string' || turnId.length === 0) return undefined;
    const at = Date.parse(expiry);
    if (!Number.isFinite(at) || new Date(at).toISOString() !== expiry) return undefined;
    return { expiry, turnId };
  } catch {
    return undefined;
  }
}

/** A turn's place in the queue: its published expiry, else `NEXT_EXPIRY_NONE`. */
function positionOf(turn: ParkedTurn): Position {
  return { expiry: turn.nextExpiry ?? NEXT_EXPIRY_NONE, turnId: turn.id };
}

function compare(a: Position, b: Position): number {
  return a.expiry < b.expiry ? -1 : a.expiry > b.expiry ? 1 : a.turnId < b.turnId ? -1 : a.turnId > b.turnId ? 1 : 0;
}

/** A page of the parked calls `options` lists, soonest-expiring turn first: see the file's comment. */
export async function listParkedPage(reader: TurnReader, options: ParkedPageOptions = {}): Promise<ParkedPage> {
  const limit = options.limit ?? DEFAULT_PAGE_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_LIMIT) throw new RangeError(`limit must be an integer from 1 to ${MAX_PAGE_LIMIT}`);
  const after = options.after === undefined ? undefined : parseParkedCursor(options.after);
  if (options.after !== undefined && !after) throw new RangeError('after is not a cursor of this listing (pass the `next` of the page before)');
  const scope = parkedScope(reader, options);
  // A turn is kept when it sorts after the cursor and holds a call the caller may see.
  const kept = (turns: ParkedTurn[]) =>
    turns.map((turn) => ({ ...turn, calls: turn.calls.filter(scope.keep) })).filter((turn) => turn.calls.length > 0 && (!after || compare(positionOf(turn), after) > 0));
  const turns = await inScope(reader, scope, async (query) => {
    if (knownWithoutNextExpiry(reader.client)) return kept(await inMemory(reader, query));
    try {
      const dated = after && after.expiry >= NEXT_EXPIRY_NONE ? [] : await readDated(reader, query, { limit, from: after?.expiry, kept });
      if (dated.length > limit) return dated;
      return [...dated, ...kept(await readParkedTurns(reader, `(${query}) AND (TurnpikeNextExpiry >= "${NEXT_EXPIRY_NONE}" OR TurnpikeNextExpiry IS NULL)`, UNDATED_LIMIT))];
    } catch (error) {
      // A namespace without the attribute refuses the query: read the queue and order it here.
      if (!refusedNextExpiry(reader.client, error)) throw error;
      return kept(await inMemory(reader, query));
    }
  });
  const sorted = turns.sort((a, b) => compare(positionOf(a), positionOf(b)));
  const page = sorted.slice(0, limit);
  const last = page.at(-1);
  return { calls: page.flatMap((turn) => turn.calls), ...(sorted.length > limit && last ? { next: cursorOf(positionOf(last)) } : {}) };
}

/**
 * The dated turns from `from` on (inclusive: the cursor's expiry) that `kept` keeps, window by
 * window, until more than `limit` were kept or none is left: see the file's comment.
 */
async function readDated(reader: TurnReader, query: string, { limit, from, kept }: { limit: number; from: string | undefined; kept: (turns: ParkedTurn[]) => ParkedTurn[] }): Promise<ParkedTurn[]> {
  const dated = (range: string) => `(${query}) AND ${range}`;
  const lower = (bound: string | undefined, inclusive: boolean) => (bound === undefined ? '' : `TurnpikeNextExpiry ${inclusive ? '>=' : '>'} "${bound}" AND `);
  let left = (await reader.client.workflow.count(dated(`${lower(from, true)}TurnpikeNextExpiry < "${NEXT_EXPIRY_NONE}"`))).count;
  const read: ParkedTurn[] = [];
  // The most one window may hold and still be read: a few pages.
  const most = Math.max(4 * limit, 100);
  let bound = from;
  let inclusive = true;
  let span = FIRST_WINDOW_MS;
  const anchor = () => Math.max(bound === undefined ? Date.now() : Date.parse(bound), Date.now() - FIRST_WINDOW_MS);
  while (left > 0 && read.length <= limit) {
    const upperMs = Math.min(anchor() + span, NONE_MS - 1);
    const upper = new Date(upperMs).toISOString();
    const range = `${lower(bound, inclusive)}TurnpikeNextExpiry <= "${upper}"`;
    const { count } = await reader.client.workflow.count(dated(range));
    if (count > most && span > 1 && upperMs < NONE_MS - 1) {
      span = Math.max(1, Math.floor(span / GROWTH));
      continue;
    }
    if (count > 0) read.push(...kept(await readParkedTurns(reader, dated(range), Math.max(count * 2, most))));
    left -= count;
    if (upperMs >= NONE_MS - 1) break;
    bound = upper;
    inclusive = false;
    span *= GROWTH;
  }
  return read;
}

/** The queue where visibility has no expiry to read by: up to `UNDATED_LIMIT` turns, each placed by its own calls. */
async function inMemory(reader: TurnReader, query: string): Promise<ParkedTurn[]> {
  const turns = await readParkedTurns(reader, query, UNDATED_LIMIT);
  return turns.map((turn) => {
    const expiry = nextExpiry(turn.calls);
    return { ...turn, ...(expiry < NEXT_EXPIRY_NONE ? { nextExpiry: expiry } : {}) };
  });
}
