/**
 * A turn's events with those of the child turns its agent tool calls started, nested: when the
 * turn's stream says `agent-started`, the reader also follows that child's stream (and, the same
 * way, its children's), and yields the child's events marked with the child's `turnId`, the
 * calling tool call (`parentToolCallId`) and the agent tool names from the turn read down
 * (`path`). The turn's own history never holds its children's deltas: the nesting happens here,
 * on the reading side. One reader per running child; each ends at the child's `turn-finished`,
 * and the whole read ends once the turn and every child it followed have finished.
 *
 * Each record carries the cursor to resume after it (nested-cursor.ts). A reader resumed with
 * `after` reads the turn's own stream after the cursor's offset and each child the cursor lists
 * after the child's offset: the `agent-started` events of those children are read again by
 * query, one event each, to learn their turn ids. Children the cursor has passed are not read.
 *
 * With `live: true` the turn's stream and each child's are read live (client/live-reader.ts; a
 * child's deltas come on the live channel under its own turn id): a record shown ahead of its
 * stream's durable offset keeps `live`, and the cursor carries, for the turn and each open child,
 * what was shown ahead, so a reader resumed after it re-reads and trims those deltas. A stream
 * resumed with live entries is read live whatever `live` says: only a live read trims them.
 */
import type { LiveAhead, TurnEventRecord } from '../workflows/types/turn-events.js';
import { encodeNestedCursor, NestedCursorError, parseNestedCursor, type NestedCursor, type OpenChild } from './nested-cursor.js';

/** A turn event, and where it comes from when a child turn published it. */
export interface NestedTurnEventRecord extends TurnEventRecord {
  /** The child turn that published the event (absent for the turn's own events; `offset` is then in the child's stream). */
  turnId?: string;
  /** The agent tool call, in the turn above, whose child published the event. */
  parentToolCallId?: string;
  /** The agent tool names from the turn read down to the child that published the event. */
  path?: string[];
  /**
   * Pass as `after` to resume after this event (the SSE `id`): the plain offset for a turn's own
   * event while no child is open, else `"<offset>~<child>[:<offset>]…"`, each part followed by
   * `_<step>-<attempt>-<units>…` for what a live read showed ahead (nested-cursor.ts).
   * Absent only past the cursor's limits (32 open children, 8 deep, 16 live entries a part, 512 characters).
   */
  cursor?: string;
}

/** A child turn to follow: its id, where it was started, and its place in the tree. */
interface Child {
  /** The offsets of the `agent-started` events from the turn down to the child. */
  key: number[];
  turnId: string;
  parentToolCallId: string;
  path: string[];
}

/** A cursor read back: where the turn's own stream resumes, and each open child with where its stream does. */
export interface NestedTurnResume {
  cursor: NestedCursor;
  children: Array<{ child: Child; fromOffset: number; liveAhead?: LiveAhead[] }>;
}

type ReadTurn = (turnId: string, options: { fromOffset?: number; signal?: AbortSignal; live?: boolean; liveAhead?: LiveAhead[] }) => AsyncGenerator<TurnEventRecord, void, undefined>;
/** The event at `offset` of a turn's stream by one query, or undefined when it has none there. */
export type TurnEventAt = (turnId: string, offset: number) => Promise<TurnEventRecord | undefined>;

/**
 * Reads `after` back: parses it and finds each open child's `agent-started`. Throws
 * `NestedCursorError` when the cursor is malformed or names an offset that started no child.
 */
export async function resolveNestedCursor(eventAt: TurnEventAt, turnId: string, after: string): Promise<NestedTurnResume> {
  const cursor = parseNestedCursor(after);
  const found = new Map<string, Promise<Child>>();
  const childAt = (key: number[]): Promise<Child> => {
    const name = key.join('.');
    let child = found.get(name);
    if (!child) {
      child = (async () => {
        const above = key.length > 1 ? await childAt(key.slice(0, -1)) : undefined;
        const streamId = above?.turnId ?? turnId;
        const record = await eventAt(streamId, key.at(-1)!);
        if (!record || record.offset !== key.at(-1) || record.event.type !== 'agent-started') {
          throw new NestedCursorError(`Invalid nested stream cursor "${after}": offset ${key.at(-1)} of turn ${streamId} started no child turn`);
        }
        const { event } = record;
        return { key, turnId: event.turnId, parentToolCallId: event.toolCallId, path: [...(above?.path ?? []), event.toolName] };
      })();
      found.set(name, child);
    }
    return child;
  };
  const children = await Promise.all(cursor.open.map(async (open) => ({ child: await childAt(open.path), fromOffset: open.offset !== undefined ? open.offset + 1 : 0, ...(open.live ? { liveAhead: open.live } : {}) })));
  return { cursor, children };
}

export interface NestedReadOptions {
  /** Where the turn's own stream starts (default 0); children started before it are not followed. */
  fromOffset?: number;
  /** Resume after this cursor (a record's `cursor`, or one resolved with `resolveNestedCursor`); overrides `fromOffset`. */
  after?: string | NestedTurnResume;
  /** Read the turn's and each child's stream live, when the client has a live channel (`TurnpikeClient.turnEvents`). */
  live?: boolean;
  signal?: AbortSignal;
}

export async function* readNestedTurnEvents(read: ReadTurn, eventAt: TurnEventAt, turnId: string, options: NestedReadOptions = {}): AsyncGenerator<NestedTurnEventRecord, void, undefined> {
  const resume = typeof options.after === 'string' ? await resolveNestedCursor(eventAt, turnId, options.after) : options.after;
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const queue: Array<{ record: NestedTurnEventRecord; key: number[] }> = [];
  let wake: (() => void) | undefined;
  let open = 0;
  let failure: unknown;
  const notify = () => {
    wake?.();
    wake = undefined;
  };
  // The stream with `key` (the turn's own: []), from `fromOffset`; each `agent-started` it reads starts a child's.
  const follow = (key: number[], id: string, fromOffset: number | undefined, from?: Omit<Child, 'key' | 'turnId'>, liveAhead?: LiveAhead[]) => {
    open++;
    const live = options.live === true || liveAhead !== undefined ? { live: true, ...(liveAhead ? { liveAhead } : {}) } : {};
    void (async () => {
      try {
        for await (const record of read(id, { ...(fromOffset !== undefined ? { fromOffset } : {}), ...live, signal: stop.signal })) {
          queue.push({ record: from ? { ...record, turnId: id, ...from } : record, key });
          notify();
          const { event } = record;
          if (event.type === 'agent-started') {
            follow([...key, record.offset], event.turnId, 0, { parentToolCallId: event.toolCallId, path: [...(from?.path ?? []), event.toolName] });
          }
        }
      } catch (error) {
        failure ??= error;
      } finally {
        open--;
        notify();
      }
    })();
  };
  // What the consumer has been given: the cursor of the record it was given last.
  // A stream's part: its last durable offset given (a live record's is the one before it) and what was shown ahead of it.
  const position: { offset: number; live?: LiveAhead[] } = resume ? { offset: resume.cursor.offset, ...(resume.cursor.live ? { live: resume.cursor.live } : {}) } : { offset: (options.fromOffset ?? 0) - 1 };
  const openChildren = new Map<string, OpenChild>((resume?.cursor.open ?? []).map((child) => [child.path.join('.'), { ...child }]));
  const advance = (record: NestedTurnEventRecord, key: number[]): string | undefined => {
    const part: { offset?: number; live?: LiveAhead[] } | undefined = key.length === 0 ? position : openChildren.get(key.join('.'));
    if (part) {
      // A child's live record before its first durable event says -1: the child's part then has no offset yet.
      if (record.offset >= 0 || key.length === 0) part.offset = record.offset;
      if (record.live && record.live.length > 0) part.live = record.live;
      else delete part.live;
    }
    if (key.length > 0 && record.event.type === 'turn-finished') openChildren.delete(key.join('.'));
    if (record.event.type === 'agent-started') openChildren.set([...key, record.offset].join('.'), { path: [...key, record.offset] });
    return encodeNestedCursor({ ...position, open: [...openChildren.values()] });
  };

  follow([], turnId, resume ? resume.cursor.offset + 1 : options.fromOffset, undefined, resume?.cursor.live);
  for (const { child, fromOffset, liveAhead } of resume?.children ?? []) {
    follow(child.key, child.turnId, fromOffset, { parentToolCallId: child.parentToolCallId, path: child.path }, liveAhead);
  }
  try {
    while (true) {
      while (queue.length > 0) {
        const { record, key } = queue.shift()!;
        const cursor = advance(record, key);
        yield cursor !== undefined ? { ...record, cursor } : record;
      }
      if (failure !== undefined) throw failure;
      if (open === 0 || stop.signal.aborted) return;
      await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    stop.abort();
  }
}
