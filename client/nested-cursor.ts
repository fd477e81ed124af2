/**
 * Where a nested reader of a turn's events stands (nested-turn-events.ts): how far it read the
 * turn's own stream, and how far it read each child turn it follows and has not yet seen finish.
 * A reader that resumes after a cursor reads every later event of the turn and of each child
 * exactly once, in each stream's order.
 *
 * A child is named by the offsets of the `agent-started` events from the turn down to it: `5` is
 * the child whose `agent-started` is at offset 5 of the turn's stream, `5.3` the child that child
 * started at offset 3 of its own stream. The format:
 *
 *   "<own>"                          every child started up to offset <own> has finished for the reader
 *   "<own>~<child>[:<offset>]~…"     and these children are open: read up to <offset> (none yet without it)
 *
 * e.g. `12~5:7~5.3:2~9`. A child started at an offset the cursor has passed (the turn's, or an
 * open child's) and not listed has finished for the reader. So the id of a turn's own event is its
 * plain offset while no child is open, as in a turn's plain stream.
 *
 * A reader that reads live (client/live-reader.ts) may have shown a stream's deltas ahead of its
 * durable offset: that stream's part then ends with one `_<step>-<attempt>-<units>` per
 * step-attempt shown ahead (its `LiveAhead`), e.g. `12_2-1-143~5:7_1-1-40`; the turn's own offset
 * is `-1` before its first durable event (`-1_0-1-5`), a child's is left out as before. Resuming
 * reads that stream from after its offset with the entries as `liveAhead`, so nothing shown is
 * repeated. A cursor without `_` means what it always did.
 */
import type { LiveAhead } from '../workflows/types/turn-events.js';

/** Children a cursor lists at most, and how deep one may nest. */
export const MAX_CURSOR_CHILDREN = 32;
export const MAX_CURSOR_DEPTH = 8;
/** The longest cursor, in characters. */
export const MAX_CURSOR_CHARS = 512;
/** Step-attempts shown ahead that one stream's part lists at most. */
export const MAX_CURSOR_LIVE_ENTRIES = 16;

/** A child turn the reader follows and has not yet seen finish. */
export interface OpenChild {
  /** The offsets of the `agent-started` events from the turn down to the child. */
  path: number[];
  /** The child's last event read; absent when none was. */
  offset?: number;
  /** What the reader showed live of the child beyond `offset` (absent when nothing). */
  live?: LiveAhead[];
}

export interface NestedCursor {
  /** The turn's own last event read (`-1` before the first, with `live` only). */
  offset: number;
  /** What the reader showed live of the turn's own stream beyond `offset` (absent when nothing). */
  live?: LiveAhead[];
  open: OpenChild[];
}

/** A cursor that is malformed, over the limits, or names no child of the turn. */
export class NestedCursorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NestedCursorError';
  }
}

const NUMBER = '\\d{1,15}';
const LIVE = `((?:_${NUMBER}-${NUMBER}-${NUMBER})*)`;
const CHILD = new RegExp(`^(${NUMBER}(?:\\.${NUMBER})*)(?::(${NUMBER}))?${LIVE}$`);
const OWN = new RegExp(`^(-1|${NUMBER})${LIVE}$`);

const liveText = (live: readonly LiveAhead[] | undefined) => (live ?? []).map(({ step, attempt, units }) => `_${step}-${attempt}-${units}`).join('');

/** The cursor as text, or undefined when it is over the limits (more children, deeper, more live entries, longer). */
export function encodeNestedCursor(cursor: NestedCursor): string | undefined {
  if (cursor.open.length > MAX_CURSOR_CHILDREN || cursor.open.some((child) => child.path.length > MAX_CURSOR_DEPTH)) return undefined;
  if ([cursor, ...cursor.open].some(({ live }) => live !== undefined && live.length > MAX_CURSOR_LIVE_ENTRIES)) return undefined;
  const own = `${cursor.offset}${liveText(cursor.live)}`;
  const text = [own, ...cursor.open.map((child) => `${child.path.join('.')}${child.offset !== undefined ? `:${child.offset}` : ''}${liveText(child.live)}`)].join('~');
  return text.length > MAX_CURSOR_CHARS ? undefined : text;
}

/** Parses a cursor and checks it holds together; throws `NestedCursorError` on anything else. */
export function parseNestedCursor(text: string): NestedCursor {
  const invalid = (why: string) => new NestedCursorError(`Invalid nested stream cursor "${text.length > 80 ? `${text.slice(0, 80)}…` : text}": ${why}`);
  if (text.length > MAX_CURSOR_CHARS) throw invalid(`longer than ${MAX_CURSOR_CHARS} characters`);
  const [own, ...children] = text.split('~');
  const ownMatch = OWN.exec(own);
  if (!ownMatch) throw invalid('expected "<offset>" or "<offset>~<child>[:<offset>]…"');
  if (ownMatch[1] === '-1' && ownMatch[2] === '') throw invalid('expected "<offset>" or "<offset>~<child>[:<offset>]…"; -1 only before live entries');
  if (children.length > MAX_CURSOR_CHILDREN) throw invalid(`more than ${MAX_CURSOR_CHILDREN} children`);
  const open = children.map((child): OpenChild => {
    const match = CHILD.exec(child);
    if (!match) throw invalid(`"${child.slice(0, 40)}" is not "<offset>[.<offset>…][:<offset>][_<step>-<attempt>-<units>…]"`);
    const path = match[1].split('.').map(Number);
    if (path.length > MAX_CURSOR_DEPTH) throw invalid(`a child ${path.length} deep, deeper than ${MAX_CURSOR_DEPTH}`);
    return { path, ...(match[2] !== undefined ? { offset: Number(match[2]) } : {}), ...parseLive(match[3], invalid) };
  });
  const cursor: NestedCursor = { offset: Number(ownMatch[1]), ...parseLive(ownMatch[2], invalid), open };
  const byKey = new Map(open.map((child) => [child.path.join('.'), child]));
  if (byKey.size < open.length) throw invalid('a child is listed twice');
  for (const child of open) {
    const { above, offset } = nearestOpenAbove(cursor, byKey, child.path);
    // The child was started at an offset of the stream above it that the reader has read.
    if (offset === undefined || child.path[above] > offset) throw invalid(`child ${child.path.join('.')} was started after where the cursor stands`);
  }
  return cursor;
}

/** A part's live entries (`_<step>-<attempt>-<units>…`) as `{ live }`, or `{}` when it has none. */
function parseLive(text: string, invalid: (why: string) => NestedCursorError): { live?: LiveAhead[] } {
  if (text === '') return {};
  const entries = text.slice(1).split('_');
  if (entries.length > MAX_CURSOR_LIVE_ENTRIES) throw invalid(`more than ${MAX_CURSOR_LIVE_ENTRIES} live entries in one part`);
  const seen = new Set<string>();
  const live = entries.map((entry): LiveAhead => {
    const [step, attempt, units] = entry.split('-').map(Number) as [number, number, number];
    if (attempt < 1 || units < 1) throw invalid(`live entry "${entry}" has an attempt or units below 1`);
    if (seen.has(`${step}-${attempt}`)) throw invalid(`step ${step} attempt ${attempt} is listed twice in one part`);
    seen.add(`${step}-${attempt}`);
    return { step, attempt, units };
  });
  return { live };
}

/** The depth of the stream that started `path`'s child, as the nearest open stream above it says, and how far that one was read. */
function nearestOpenAbove(cursor: NestedCursor, byKey: Map<string, OpenChild>, path: number[]): { above: number; offset: number | undefined } {
  for (let depth = path.length - 1; depth > 0; depth--) {
    const parent = byKey.get(path.slice(0, depth).join('.'));
    if (parent) return { above: depth, offset: parent.offset };
  }
  return { above: 0, offset: cursor.offset };
}
