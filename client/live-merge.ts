/**
 * What one feed (stream-hub.ts) keeps of a turn's live pieces beside its durable events: the
 * pieces the channel brought, in arrival order and numbered, for every reader of the feed to
 * show at once (live-reader.ts); and for each durable event, where its delta units start within
 * its step-attempt, so a reader can tell which units a live piece already showed.
 *
 * Pieces are dropped once the durable stream has passed their step-attempt (its `step-finished`,
 * a later attempt's `step-retry`, or a later step-attempt's deltas), and past {@link MAX_PIECES}:
 * a reader that missed one reads those units from the durable stream.
 */
import { deltaUnits, type LiveDeltaPiece } from '../activities/live-deltas.js';
import type { TurnEvent } from '../workflows/types/turn-events.js';

/** Pieces kept at most per feed. */
const MAX_PIECES = 10_000;
/** A step that ended: later than any attempt of it. */
export const ENDED = Number.MAX_SAFE_INTEGER;

export interface StepAttempt {
  step: number;
  attempt: number;
}

export function compareAttempts(a: StepAttempt, b: StepAttempt): number {
  return a.step - b.step || a.attempt - b.attempt;
}

/** Where the durable stream is, after an event: the step-attempt it reached and its delta units so far. */
export interface DurablePlace extends StepAttempt {
  units: number;
}

/** `place` after the durable `event`; `start` is where the event's units begin in its step-attempt. */
export function advance(place: DurablePlace, event: TurnEvent): { place: DurablePlace; start: number } {
  const units = deltaUnits(event);
  if (units > 0 && 'attempt' in event) {
    const same = event.step === place.step && event.attempt === place.attempt;
    const start = same ? place.units : 0;
    return { place: { step: event.step, attempt: event.attempt, units: start + units }, start };
  }
  if (event.type === 'step-retry') return { place: { step: event.step, attempt: event.attempt, units: 0 }, start: 0 };
  if (event.type === 'step-finished') return { place: { step: event.step, attempt: ENDED, units: 0 }, start: 0 };
  return { place, start: 0 };
}

export class LivePieces {
  /** Pieces kept, the first numbered {@link firstSeq}. */
  readonly pieces: LiveDeltaPiece[] = [];
  firstSeq = 0;
  /** For each kept durable event (parallel to the feed's `events`), where its delta units start in its step-attempt. */
  readonly deltaStart: number[] = [];
  private durable: DurablePlace = { step: -1, attempt: 0, units: 0 };

  /** The number the next piece gets. */
  get endSeq(): number {
    return this.firstSeq + this.pieces.length;
  }

  /** A piece from the channel. */
  addPiece(piece: LiveDeltaPiece): void {
    this.pieces.push(piece);
    if (this.pieces.length > MAX_PIECES) this.drop(1);
  }

  /** A durable event, in offset order. */
  addDurable(event: TurnEvent): void {
    const { place, start } = advance(this.durable, event);
    this.durable = place;
    this.deltaStart.push(start);
    let passed = 0;
    while (passed < this.pieces.length && compareAttempts(this.pieces[passed]!.event, place) < 0) passed++;
    if (passed > 0) this.drop(passed);
  }

  /** The durable events `deltaStart` no longer needs (the feed dropped its oldest). */
  dropOldest(count: number): void {
    this.deltaStart.splice(0, count);
  }

  private drop(count: number): void {
    this.pieces.splice(0, count);
    this.firstSeq += count;
  }
}
