/**
 * `/api/chat` reads a turn live (client/live-reader.ts): a step's deltas come as the model writes
 * them, and may come before the previous step's last durable events. A `useChat` message places a
 * tool call's input in the UI step open when it arrives (`tool-input-available` finds its part in
 * the current step only), so this holds a new step's live deltas back while the step before it
 * has not shown its `step-finished` and its tool calls; everything else passes at once, in the
 * order read. Results may still come after the next step's text: they find their part anywhere.
 *
 * A hold ends at the first durable event that proves the step settled: its `step-finished` with
 * every `tool-call` it counts, any durable event of a later step, or `turn-finished`. When the
 * previous step settled before the new step's first token (the usual case: a model's first token
 * takes longer than the durable stream's next read), nothing is held. Records are told apart by
 * offset: a durable record's is higher than any before it; a live delta repeats the last one's.
 *
 * A chat continued after an approval reads from after the request, part-way through a step. It is
 * first given the records before its offset (`showedBefore`: what the message's earlier responses
 * showed), so the step it joins counts as streamed, with its `step-finished` and the calls read
 * before; a later step's deltas then wait for that step's remaining `tool-call`s as above, and
 * its offsets tell the first live piece (which repeats the last of them) from a durable record.
 */
import { LIVE_DELTA_TYPES } from '../activities/live-deltas.js';
import type { TurnEvent } from '../workflows/types/turn-events.js';

export class LiveStepOrder {
  private lastOffset = -1;
  /** The step whose events pass freely; undefined until an event names one. */
  private step?: number;
  /** Whether `step`'s deltas were read here; the tool calls its `step-finished` counts, and those read. */
  private streamed = false;
  private toolCalls?: number;
  private callsSeen = 0;
  private readonly held: TurnEvent[] = [];

  /**
   * A record before this response's offset, which an earlier response of the same message showed
   * (a chat continued after an approval): it leaves the state it would have left here, and
   * nothing to map. So the step the response joins holds a later step's deltas as it would.
   */
  showedBefore(record: { offset: number; event: TurnEvent }): void {
    this.push(record);
  }

  /** The events to map now, in order, for this record read. */
  push(record: { offset: number; event: TurnEvent }): TurnEvent[] {
    const { event } = record;
    const durable = record.offset > this.lastOffset;
    if (durable) this.lastOffset = record.offset;
    const step = 'step' in event && typeof event.step === 'number' ? event.step : undefined;
    if (!durable && step !== undefined && LIVE_DELTA_TYPES.has(event.type)) {
      if (this.held.length > 0 || (this.step !== undefined && step > this.step && !this.settled())) {
        this.held.push(event);
        return [];
      }
      this.enter(step);
      this.streamed = true;
      return [event];
    }
    const out: TurnEvent[] = [];
    // A durable event of a later step, or the turn's end: what was held comes before it.
    if (event.type === 'turn-finished' || (step !== undefined && this.step !== undefined && step > this.step)) out.push(...this.release(true));
    if (step !== undefined) this.enter(step);
    if (LIVE_DELTA_TYPES.has(event.type) || event.type === 'step-retry') this.streamed = true;
    if (event.type === 'step-finished' && event.step === this.step) this.toolCalls = event.toolCalls;
    if (event.type === 'tool-call' && event.step === this.step) this.callsSeen++;
    out.push(event, ...this.release(false));
    return out;
  }

  /** Held deltas that may pass now (all of them with `all`), each entering its step. */
  private release(all: boolean): TurnEvent[] {
    const out: TurnEvent[] = [];
    while (this.held.length > 0) {
      const next = this.held[0] as TurnEvent & { step: number };
      if (!all && this.step !== undefined && next.step > this.step && !this.settled()) break;
      this.held.shift();
      this.enter(next.step);
      this.streamed = true;
      out.push(next);
    }
    return out;
  }

  /** `step` settled for the UI: its end and every call it counts read, or (joined after its end) none of its deltas read here. */
  private settled(): boolean {
    return this.toolCalls !== undefined ? this.callsSeen >= this.toolCalls : !this.streamed;
  }

  private enter(step: number): void {
    if (this.step !== undefined && step <= this.step) return;
    this.step = step;
    this.streamed = false;
    this.toolCalls = undefined;
    this.callsSeen = 0;
  }
}
