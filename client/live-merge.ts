/**
 * What one feed (stream-hub.ts) knows of a turn's live pieces beside its durable events: the
 * pieces beyond what the durable stream holds yet (the tail), and for each durable event how many
 * delta units came before it. A reader's place is its durable offset plus the delta units it was
 * shown beyond it; durable delta events that cover units already shown are trimmed, so no text is
 * shown twice, and a reader never sees a piece out of order with the durable events before it.
 *
 * A piece joins the tail only where it continues what came before: the same step-attempt at the
 * next unit, or the first unit of a step's first attempt once a durable read begun after the piece
 * arrived is in (so the previous step's `step-finished`, its tool calls and results come first),
 * or of a later attempt once the durable stream holds its `step-retry`. Anything else waits in
 * `pending` until the durable stream catches up, or is dropped when the durable stream has it.
 */
import { deltaUnits, withoutFirstUnits, type LiveDeltaEvent, type LiveDeltaPiece } from '../activities/live-deltas.js';
import type { TurnEvent } from '../workflows/types/turn-events.js';

/** A piece beyond the durable stream, at its place among all delta units of the stream. */
export interface TailPiece {
  event: LiveDeltaEvent;
  /** Delta units of the whole stream before this piece. */
  unitsBefore: number;
}

interface StepAttempt {
  step: number;
  attempt: number;
  /** Units of this step-attempt so far. */
  units: number;
}

/** Pieces kept waiting at most (a reader joined mid-step: the durable stream brings them soon). */
const MAX_PENDING = 10_000;
/** A step that ended: older than any attempt of it. */
const ENDED = Number.MAX_SAFE_INTEGER;

function compare(a: { step: number; attempt: number }, b: { step: number; attempt: number }): number {
  return a.step - b.step || a.attempt - b.attempt;
}

export class LiveMerge {
  /** Delta units before each kept durable event (parallel to the feed's `events`). */
  readonly unitsBefore: number[] = [];
  /** Delta units of every durable event read. */
  durableUnits = 0;
  /** The offset after the last durable event read. */
  readThrough = 0;
  readonly tail: TailPiece[] = [];
  private durable: StepAttempt = { step: -1, attempt: 0, units: 0 };
  private head: StepAttempt = { step: -1, attempt: 0, units: 0 };
  private pending: Array<{ piece: LiveDeltaPiece; at: number }> = [];
  private lastReadStartedAt = -Infinity;

  /** The delta units of the stream so far, durable and live. */
  get headUnits(): number {
    const last = this.tail.at(-1);
    return last ? last.unitsBefore + deltaUnits(last.event) : this.durableUnits;
  }

  /** A durable event, in offset order. */
  addDurable(offset: number, event: TurnEvent): void {
    this.unitsBefore.push(this.durableUnits);
    this.readThrough = offset + 1;
    const units = deltaUnits(event);
    if (units > 0 && 'attempt' in event) {
      if (event.step === this.durable.step && event.attempt === this.durable.attempt) this.durable.units += units;
      else this.durable = { step: event.step, attempt: event.attempt, units };
      this.durableUnits += units;
    } else if (event.type === 'step-retry') {
      this.durable = { step: event.step, attempt: event.attempt, units: 0 };
    } else if (event.type === 'step-finished') {
      this.durable = { step: event.step, attempt: ENDED, units: 0 };
    } else return;
    while (this.tail.length > 0 && this.tail[0]!.unitsBefore + deltaUnits(this.tail[0]!.event) <= this.durableUnits) this.tail.shift();
    // The durable stream went past the tail's step-attempt: what it did not bring was never durable.
    if (this.tail.length > 0 && compare(this.head, this.durable) < 0) this.tail.length = 0;
    if (this.tail.length === 0) this.head = { ...this.durable };
  }

  /** The durable events `unitsBefore` no longer needs (the feed dropped its oldest). */
  dropOldest(count: number): void {
    this.unitsBefore.splice(0, count);
  }

  /** A piece from the channel; true when it waits for a durable read (the feed should read now). */
  addPiece(piece: LiveDeltaPiece, now: number): boolean {
    this.pending.push({ piece, at: now });
    if (this.pending.length > MAX_PENDING) this.pending.shift();
    return this.drain();
  }

  /** A durable read begun at `startedAt` is in; true when pieces still wait for one. */
  readDone(startedAt: number): boolean {
    this.lastReadStartedAt = startedAt;
    return this.drain();
  }

  /** Moves what continues the stream from `pending` to the tail; true when a piece waits for a read. */
  private drain(): boolean {
    while (this.pending.length > 0) {
      const { piece, at } = this.pending[0]!;
      const { event, start } = piece;
      const order = compare(event, this.head);
      if (order < 0) {
        this.pending.shift();
        continue;
      }
      if (order > 0) {
        // A new step (or attempt) begins: only once the durable stream shows what came before it.
        if (start !== 0 || event.attempt > 1) return false;
        if (this.lastReadStartedAt <= at) return true;
        this.head = { step: event.step, attempt: event.attempt, units: 0 };
      }
      const end = start + deltaUnits(event);
      if (end <= this.head.units) {
        this.pending.shift();
        continue;
      }
      if (start > this.head.units) return false;
      const shown = withoutFirstUnits(event, this.head.units - start)!;
      this.tail.push({ event: shown, unitsBefore: this.headUnits });
      this.head.units = end;
      this.pending.shift();
    }
    return false;
  }
}
