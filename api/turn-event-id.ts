/**
 * The SSE `id:` of a turn's events route (event-stream-routes.ts) and the `Last-Event-ID` it
 * resumes from (docs/http-api.md).
 *
 * - A record without `live` (every record of a durable read): `<offset>`, as always.
 * - A record carrying `live` (read live: what the reader was shown beyond the durable stream,
 *   client/live-reader.ts): `<offset>.<step>-<attempt>-<units>[.<step>-<attempt>-<units>…]`,
 *   one entry per step-attempt shown ahead, e.g. `17.2-1-143`. Its offset is the last durable
 *   event's before it, `-1` before the first (`-1.1-1-12`).
 *
 * Resuming after `<offset>` reads from `offset + 1`; after a live id, from `offset + 1` with the
 * entries as `liveAhead`, so the durable deltas already shown are trimmed and nothing is lost or
 * repeated. An id is at most {@link MAX_TURN_EVENT_ID_CHARS} characters with at most
 * {@link MAX_LIVE_AHEAD_ENTRIES} entries, each number at most 15 digits; a record whose id would
 * be longer gets none (a reconnect resumes from the last id sent; in practice a record carries
 * one or two entries: the step-attempts the live pieces ran ahead of the durable stream).
 */
import type { LiveAhead } from '../workflows/types/turn-events.js';

/** The longest id written or read: half the events route's `lastEventId` limit (512). */
export const MAX_TURN_EVENT_ID_CHARS = 256;
/** Step-attempts shown ahead one id carries at most. */
export const MAX_LIVE_AHEAD_ENTRIES = 16;

const NUMBER = /^\d{1,15}$/;
const ENTRY = /^(\d{1,15})-(\d{1,15})-(\d{1,15})$/;

/** A `Last-Event-ID` this route did not write; its message says why (the route answers 400 with it). */
export class TurnEventIdError extends Error {
  constructor(id: string, why: string) {
    super(`Last-Event-ID "${id.length > 40 ? `${id.slice(0, 40)}…` : id}" is not an id of this turn's stream: ${why}`);
    this.name = 'TurnEventIdError';
  }
}

/** Where a read resumes after an id. */
export interface TurnEventResume {
  fromOffset: number;
  liveAhead?: LiveAhead[];
}

/** The SSE id of a turn event record (undefined when it would pass the bounds above). */
export function formatTurnEventId(record: { offset: number; live?: readonly LiveAhead[] }): string | undefined {
  if (record.live === undefined || record.live.length === 0) return String(record.offset);
  if (record.live.length > MAX_LIVE_AHEAD_ENTRIES) return undefined;
  const id = [String(record.offset), ...record.live.map(({ step, attempt, units }) => `${step}-${attempt}-${units}`)].join('.');
  return id.length <= MAX_TURN_EVENT_ID_CHARS && parses(id) ? id : undefined;
}

/** Parses an id {@link formatTurnEventId} wrote; throws {@link TurnEventIdError} for anything else. */
export function parseTurnEventId(id: string): TurnEventResume {
  if (id.length > MAX_TURN_EVENT_ID_CHARS) throw new TurnEventIdError(id, `longer than ${MAX_TURN_EVENT_ID_CHARS} characters`);
  if (NUMBER.test(id)) return { fromOffset: Number(id) + 1 };
  const [offset, ...entries] = id.split('.');
  if (offset !== '-1' && !NUMBER.test(offset!)) throw new TurnEventIdError(id, 'it starts with no offset');
  if (entries.length === 0) throw new TurnEventIdError(id, 'an offset is 0 or more');
  if (entries.length > MAX_LIVE_AHEAD_ENTRIES) throw new TurnEventIdError(id, `more than ${MAX_LIVE_AHEAD_ENTRIES} live entries`);
  const liveAhead: LiveAhead[] = [];
  const seen = new Set<string>();
  for (const entry of entries) {
    const match = ENTRY.exec(entry);
    if (!match) throw new TurnEventIdError(id, `live entry "${entry.slice(0, 40)}" is not <step>-<attempt>-<units>`);
    const [step, attempt, units] = [Number(match[1]), Number(match[2]), Number(match[3])];
    if (attempt < 1 || units < 1) throw new TurnEventIdError(id, `live entry "${entry}" has an attempt or units below 1`);
    if (seen.has(`${step}-${attempt}`)) throw new TurnEventIdError(id, `step ${step} attempt ${attempt} appears twice`);
    seen.add(`${step}-${attempt}`);
    liveAhead.push({ step, attempt, units });
  }
  return { fromOffset: Number(offset) + 1, liveAhead };
}

function parses(id: string): boolean {
  try {
    parseTurnEventId(id);
    return true;
  } catch {
    return false;
  }
}
