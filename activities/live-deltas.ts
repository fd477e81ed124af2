/**
 * The live channel: a model step's deltas pushed, piece by piece as the provider streams them,
 * to the processes that read the turn, beside the durable stream (docs/streaming.md, "The live
 * channel"). Best effort: a piece that does not arrive is read from the durable stream instead,
 * which stays the source of truth for offsets, resuming and history bounds.
 *
 * A piece carries its identity, so a reader can tell which durable events it covers: the step,
 * the attempt, and `start`, how many units of that step-attempt's deltas came before it (a unit
 * is a character of `text` or `inputTextDelta`; a `tool-input-start` is one unit). The durable
 * stream merges neighbouring deltas (coalesce-deltas.ts) but keeps every unit in order, so the
 * units of a step-attempt's durable delta events are the units of its live pieces.
 */
import type { TurnEvent } from '../workflows/types/turn-events.js';

/** A delta event of a model step: what the live channel carries. */
export type LiveDeltaEvent = Extract<TurnEvent, { type: 'text-delta' | 'reasoning-delta' | 'tool-input-start' | 'tool-input-delta' }>;

/** The event types a live piece carries: the deltas of a streaming step. */
export const LIVE_DELTA_TYPES: ReadonlySet<string> = new Set<LiveDeltaEvent['type']>(['text-delta', 'reasoning-delta', 'tool-input-start', 'tool-input-delta']);

export interface LiveDeltaPiece {
  event: LiveDeltaEvent;
  /** Units of the same step and attempt before this piece. */
  start: number;
}

/** Carries live delta pieces from model activities to stream readers, by workflow id. */
export interface LiveDeltaChannel {
  /** Sends one piece; never throws (a piece lost is read from the durable stream). */
  publish(workflowId: string, piece: LiveDeltaPiece): void;
  /** Calls `listener` with each piece published for `workflowId` from now on; returns the unsubscribe. */
  subscribe(workflowId: string, listener: (piece: LiveDeltaPiece) => void): () => void;
}

/** A channel inside one process: for an HTTP API or client that shares its process with the worker. */
export class InProcessLiveDeltas implements LiveDeltaChannel {
  private readonly listeners = new Map<string, Set<(piece: LiveDeltaPiece) => void>>();

  publish(workflowId: string, piece: LiveDeltaPiece): void {
    for (const listener of this.listeners.get(workflowId) ?? []) {
      try {
        listener(piece);
      } catch {
        // A reader's failure is the reader's; the model step goes on.
      }
    }
  }

  subscribe(workflowId: string, listener: (piece: LiveDeltaPiece) => void): () => void {
    let set = this.listeners.get(workflowId);
    if (!set) this.listeners.set(workflowId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(workflowId) === set) this.listeners.delete(workflowId);
    };
  }

  /** Workflows with a subscriber now (for tests). */
  get size(): number {
    return this.listeners.size;
  }
}

/** The process-wide in-process channel: give it to the worker and to the client of one process. */
export const inProcessLiveDeltas: LiveDeltaChannel = new InProcessLiveDeltas();

/** The units of a delta event (0 for any other event). */
export function deltaUnits(event: { type: string }): number {
  switch (event.type) {
    case 'text-delta':
    case 'reasoning-delta':
      return (event as unknown as { text: string }).text.length;
    case 'tool-input-delta':
      return (event as unknown as { inputTextDelta: string }).inputTextDelta.length;
    case 'tool-input-start':
      return 1;
    default:
      return 0;
  }
}

/** `event` without its first `units` units (undefined when nothing is left). */
export function withoutFirstUnits<E extends { type: string }>(event: E, units: number): E | undefined {
  if (units <= 0) return event;
  const total = deltaUnits(event);
  if (units >= total) return undefined;
  if (event.type === 'tool-input-delta') {
    return { ...event, inputTextDelta: (event as unknown as { inputTextDelta: string }).inputTextDelta.slice(units) };
  }
  return { ...event, text: (event as unknown as { text: string }).text.slice(units) };
}
