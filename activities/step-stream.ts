/**
 * Publishes a model step's deltas to the calling turn's event stream while the provider
 * streams (`@temporalio/workflow-streams`: batched signals, deduplicated across the client's
 * retries).
 *
 * The bound on history: the first delta of an attempt goes out once the step has run for
 * {@link STEP_STREAM_FIRST_FLUSH_MS} (at once, for a model whose first token takes longer than
 * that, as real models' do); after it, at most one signal per
 * {@link STEP_STREAM_FLUSH_INTERVAL_MS}, carrying the deltas of that interval merged into one
 * event per stretch of text (see `coalesceDeltas`). A step that streams for `d` ms adds at most
 * `2 + d / 200` signals to the turn's history, whatever the number of tokens; each signal usually
 * takes a workflow task with it. A step that finishes before its first flush is due signals
 * nothing: `close` hands its events back, and the turn publishes them with the step's result.
 *
 * Streaming is best effort and never changes the step's result: a publish that fails is logged
 * and dropped, and the activity returns the provider's complete message either way.
 */
import { Context, log } from '@temporalio/activity';
import { WorkflowStreamClient, type TopicHandle } from '@temporalio/workflow-streams/client';
import type { ModelStreamDelta, ModelStreamListener } from './providers/stream-delta.js';
import { coalesceDeltas } from './coalesce-deltas.js';
import { TURN_EVENTS_TOPIC, type DeltaOrigin, type TurnEvent } from '../workflows/turn-events.js';

/** How often, at most, a streaming model step signals its turn (after the first delta). */
export const STEP_STREAM_FLUSH_INTERVAL_MS = 200;

/**
 * How long into a step its first delta may wait. Below it, a delta is not worth a signal and a
 * workflow task: the step may end first (the scripted model, cached or tiny answers), and then
 * its events travel with its result instead.
 */
export const STEP_STREAM_FIRST_FLUSH_MS = 100;

export class StepStream {
  /** Created at the first flush (see `open`). */
  private client?: WorkflowStreamClient;
  private topic?: TopicHandle<TurnEvent>;
  private pending: TurnEvent[] = [];
  private timer?: NodeJS.Timeout;
  private sentFirst = false;
  private readonly startedAt = Date.now();
  private flushing: Promise<void> = Promise.resolve();

  /** Opens the stream of the workflow that scheduled the current activity (none for a standalone activity). */
  static open(step: number): StepStream | undefined {
    const context = Context.current();
    const workflowId = context.info.workflowExecution?.workflowId;
    if (workflowId === undefined) return undefined;
    // turnpike's own activity context, not the library's `fromWithinActivity`: the library pins
    // its own @temporalio/activity, which an application's install may keep as a second copy.
    // Created at the first flush: most steps of a fast model end before one is due, and send nothing.
    const connect = () =>
      WorkflowStreamClient.create(context.client, workflowId, {
        // This class decides when to flush (after merging); the library's timer only has to be
        // short, because it is still pending for that long after the stream is closed.
        batchInterval: `${STEP_STREAM_FLUSH_INTERVAL_MS} milliseconds`,
        maxRetryDuration: '30 seconds',
      });
    return new StepStream(connect, { step, attempt: context.info.attempt });
  }

  private constructor(
    private readonly connect: () => WorkflowStreamClient,
    private readonly origin: DeltaOrigin,
  ) {
    if (origin.attempt > 1) {
      // Subscribers drop what earlier attempts of this step streamed before they show this one's.
      this.pending.push({ type: 'step-retry', ...origin });
      this.flush();
    }
  }

  /** Give this to the provider as `onDelta`. */
  readonly listener: ModelStreamListener = (delta: ModelStreamDelta) => {
    this.pending.push({ ...delta, ...this.origin } as TurnEvent);
    if (this.sentFirst) {
      this.timer ??= setTimeout(() => this.flush(), STEP_STREAM_FLUSH_INTERVAL_MS);
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
    // Stops the library's background flusher, which would otherwise keep the process alive.
    await this.client?.[Symbol.asyncDispose]().catch((error: unknown) => {
      log.warn('Could not close the stream publisher; the step result is unaffected', { error: String(error) });
    });
    return unsent;
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.length === 0) return;
    this.sentFirst = true;
    const client = (this.client ??= this.connect());
    const topic = (this.topic ??= client.topic<TurnEvent>(TURN_EVENTS_TOPIC));
    for (const event of coalesceDeltas(this.pending.splice(0))) topic.publish(event);
    this.flushing = this.flushing
      .then(() => client.flush())
      .catch((error: unknown) => {
        log.warn('Could not publish streamed deltas; the step result is unaffected', { error: String(error) });
      });
  }
}
