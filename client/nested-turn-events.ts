/**
 * A turn's events with those of the child turns its agent tool calls started, nested: when the
 * turn's stream says `agent-started`, the reader also follows that child's stream (and, the same
 * way, its children's), and yields the child's events marked with the child's `turnId`, the
 * calling tool call (`parentToolCallId`) and the agent tool names from the turn read down
 * (`path`). The turn's own history never holds its children's deltas: the nesting happens here,
 * on the reading side. One reader per running child; each ends at the child's `turn-finished`,
 * and the whole read ends once the turn and every child it followed have finished.
 */
import type { TurnEventRecord } from '../workflows/turn-events.js';

/** A turn event, and where it comes from when a child turn published it. */
export interface NestedTurnEventRecord extends TurnEventRecord {
  /** The child turn that published the event (absent for the turn's own events; `offset` is then in the child's stream). */
  turnId?: string;
  /** The agent tool call, in the turn above, whose child published the event. */
  parentToolCallId?: string;
  /** The agent tool names from the turn read down to the child that published the event. */
  path?: string[];
}

type ReadTurn = (turnId: string, options: { fromOffset?: number; signal?: AbortSignal }) => AsyncGenerator<TurnEventRecord, void, undefined>;

export async function* readNestedTurnEvents(read: ReadTurn, turnId: string, options: { fromOffset?: number; signal?: AbortSignal } = {}): AsyncGenerator<NestedTurnEventRecord, void, undefined> {
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const queue: NestedTurnEventRecord[] = [];
  let wake: (() => void) | undefined;
  let open = 0;
  let failure: unknown;
  const notify = () => {
    wake?.();
    wake = undefined;
  };
  const follow = (id: string, fromOffset: number | undefined, from?: { parentToolCallId: string; path: string[] }) => {
    open++;
    void (async () => {
      try {
        for await (const record of read(id, { ...(fromOffset !== undefined ? { fromOffset } : {}), signal: stop.signal })) {
          queue.push(from ? { ...record, turnId: id, ...from } : record);
          notify();
          const { event } = record;
          if (event.type === 'agent-started') follow(event.turnId, 0, { parentToolCallId: event.toolCallId, path: [...(from?.path ?? []), event.toolName] });
        }
      } catch (error) {
        failure ??= error;
      } finally {
        open--;
        notify();
      }
    })();
  };
  follow(turnId, options.fromOffset);
  try {
    while (true) {
      while (queue.length > 0) yield queue.shift()!;
      if (failure !== undefined) throw failure;
      if (open === 0 || stop.signal.aborted) return;
      await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    stop.abort();
  }
}
