/**
 * Publishes a model step's deltas to the calling turn's event stream while the provider
 * streams (stream-publisher.ts: batched signals, deduplicated across retries).
 *
 * The bound on history: the first delta of an attempt goes out once the step has run for
 * {@link STEP_STREAM_FIRST_FLUSH_MS} (at once, for a model whose first token takes longer than
 * that, as real models' do); after it, at most one signal per flush interval, carrying the deltas
 * of that interval merged into one event per stretch of text (see `coalesceDeltas`). The
 * interval follows how many publish signals the run has taken ({@link flushIntervalMs}): 200 ms
 * while a run is young, slower as it streams on, so half an hour of streaming takes under 2,000
 * of the 10,000 signals Temporal allows a run, whatever the number of tokens or readers (readers
 * read by query). Each signal usually takes a workflow task with it. A step that finishes before
 * its first flush is due signals nothing: `close` hands its events back, and the turn publishes
 * them with the step's result.
 *
 * Streaming is best effort and never changes the step's result: a publish that fails is logged
 * and dropped, and the activity returns the provider's complete message either way.
 */
import { Context, log } from '@temporalio/activity';
import type { ModelStreamDelta, ModelStreamListener } from './providers/stream-delta.js';
import { coalesceDeltas } from './coalesce-deltas.js';
import { StreamPublisher } from './stream-publisher.js';
import { deltaUnits, type LiveDeltaChannel, type LiveDeltaEvent } from './live-deltas.js';
import { TURN_EVENTS_TOPIC, type DeltaOrigin, type TurnEvent } from '../workflows/types/turn-events.js';

/** The pace of a run's stream: signals so far → the wait before the next. */
const PACE: ReadonlyArray<readonly [below: number, intervalMs: number]> = [
  [300, 200],
  [600, 500],
  [1_200, 1_000],
  [2_400, 2_000],
];
const SLOWEST_INTERVAL_MS = 5_000;

/** How long a run that has taken `signals` publish signals waits between two of a streaming step's. */
export function flushIntervalMs(signals: number): number {
  return PACE.find(([below]) => signals < below)?.[1] ?? SLOWEST_INTERVAL_MS;
}

/**
 * How long into a step its first delta may wait. Below it, a delta is not worth a signal and a
 * workflow task: the step may end first (the scripted model, cached or tiny answers), and then
 * its events travel with its result instead.
 */
export const STEP_STREAM_FIRST_FLUSH_MS = 100;

export class StepStream {
  /** Created at the first flush (see `open`). */
  private publisher?: StreamPublisher;
  private pending: TurnEvent[] = [];
  private timer?: NodeJS.Timeout;
  private sentFirst = false;
  private readonly startedAt = Date.now();
  private flushing: Promise<void> = Promise.resolve();

  /** Opens the stream of the workflow that scheduled the current activity (none for a standalone activity). */
  static open(stream: { step: number; signalsBefore?: number }, live?: LiveDeltaChannel): StepStream | undefined {
    const context = Context.current();
    const workflowId = context.info.workflowExecution?.workflowId;
    if (workflowId === undefined) return undefined;
    const connect = () => new StreamPublisher(context.client, workflowId, TURN_EVENTS_TOPIC);
    const publishLive = live ? (piece: Parameters<LiveDeltaChannel['publish']>[1]) => live.publish(workflowId, piece) : undefined;
    return new StepStream(connect, { step: stream.step, attempt: context.info.attempt }, stream.signalsBefore ?? 0, publishLive);
  }

  /** Units of this attempt's deltas pushed to the live channel so far (live-deltas.ts). */
  private liveUnits = 0;

  private constructor(
    private readonly connect: () => StreamPublisher,
    private readonly origin: DeltaOrigin,
    private readonly signalsBefore: number,
    private readonly publishLive?: (piece: Parameters<LiveDeltaChannel['publish']>[1]) => void,
  ) {
    if (origin.attempt > 1) {
      // Subscribers drop what earlier attempts of this step streamed before they show this one's.
      this.pending.push({ type: 'step-retry', ...origin });
      this.flush();
    }
  }

  /** Give this to the provider as `onDelta`. */
  readonly listener: ModelStreamListener = (delta: ModelStreamDelta) => {
    const event = { ...delta, ...this.origin } as LiveDeltaEvent;
    this.pending.push(event);
    if (this.publishLive) {
      // As the provider streams it: the durable stream below is batched.
      try {
        this.publishLive({ event, start: this.liveUnits });
      } catch (error) {
        log.warn('Could not push a delta to the live channel; readers read it from the stream', { error: String(error) });
      }
      this.liveUnits += deltaUnits(event);
    }
    if (this.sentFirst) {
      this.timer ??= setTimeout(() => this.flush(), flushIntervalMs(this.signalsBefore + (this.publisher?.signals ?? 0)));
      return;
    }
    const wait = STEP_STREAM_FIRST_FLUSH_MS - (Date.now() - this.startedAt);
    if (wait <= 0) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), wait);
  };

  /**
   * Ends the stream. When something was sent, sends the rest and waits until every delta is in
   * the workflow's history, returning nothing; when nothing was, returns the step's events for
   * its result instead (see {@link STEP_STREAM_FIRST_FLUSH_MS}).
   */
  async close(): Promise<TurnEvent[]> {
    let unsent: TurnEvent[] = [];
    if (this.sentFirst) this.flush();
    else {
      clearTimeout(this.timer);
      this.timer = undefined;
      unsent = coalesceDeltas(this.pending.splice(0));
    }
    await this.flushing;
    return unsent;
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.length === 0) return;
    this.sentFirst = true;
    const publisher = (this.publisher ??= this.connect());
    this.flushing = publisher.send(coalesceDeltas(this.pending.splice(0))).catch((error: unknown) => {
      log.warn('Could not publish streamed deltas; the step result is unaffected', { error: String(error) });
    });
  }
}
