/**
 * A workflow's event stream: an append-only log of events, each at an offset, that readers read
 * by query (`turnEvents`, `conversationEvents`: no history, no update budget) and that a model
 * activity appends to by signal while the provider streams.
 *
 * The wire protocol is that of `@temporalio/workflow-streams` 1.23.0, which turnpike used
 * before: the publish signal `__temporal_workflow_stream_publish` (`{ items, publisher_id,
 * sequence }`, a batch deduplicated by its publisher's sequence), the long-poll update
 * `__temporal_workflow_stream_poll`, the offset query `__temporal_workflow_stream_offset`, and the
 * same continue-as-new state. So every history recorded with it replays, and that library's
 * clients still work. turnpike keeps its own implementation because the library pins one exact
 * Temporal SDK (a second copy in every app) and lets any number of polls wait for good.
 *
 * The poll update is kept for those clients, and held to what leaves a turn decidable
 * (Temporal admits 10 updates in flight per workflow, 2,000 per run):
 * - at most {@link MAX_POLLS_IN_FLIGHT} wait at once; the next is refused (`TooManyPolls`), so
 *   decisions always find a free slot;
 * - a poll waits at most {@link POLL_WAIT}, then answers with no items, so an abandoned poll
 *   ends (`patched(BOUNDED_POLL_PATCH)`: polls recorded before it waited until an event).
 * Every message is checked before it is used (`stream-guard.ts`).
 */
import * as wf from '@temporalio/workflow';
import { ApplicationFailure } from '@temporalio/common';
import { decodeArgument, rawSignal, rawUpdate } from '../messages/raw-messages.js';
import { rejection } from '../messages/rejection.js';
import { OFFSET_QUERY, POLL_UPDATE, PUBLISH_SIGNAL, pollProblem, publishProblem, type PollInput, type PollResult, type PublishInput } from './stream-guard.js';
import { decodePayloadWire, encodePayloadWire, type WorkflowStreamState } from './stream-wire.js';
import { TURN_EVENTS_TOPIC, type StreamEventsPage, type StreamEventsRequest } from '../types/turn-events.js';

/** Long polls that may wait at once: Temporal admits 10 updates in flight, the rest are for decisions. */
export const MAX_POLLS_IN_FLIGHT = 4;
/** The patch of the bounded wait: the 0.1.0 poll waited with no timer (docs/versioning.md). */
export const BOUNDED_POLL_PATCH = '0.2.0-bounded-stream-poll';
/** The longest a poll waits for an event before it answers with none. */
export const POLL_WAIT = '30 seconds';
/** A publisher's sequence is remembered this long past its last batch (its retries end well before). */
const PUBLISHER_TTL_MS = 15 * 60 * 1000;
const MAX_PAGE = 1_000;
/** A page bounded by size (`maxBytes`) holds at most this many events and payload bytes: Temporal's payload limit is 2 MB. */
const MAX_SIZED_PAGE = 100_000;
const MAX_PAGE_BYTES = 1_500_000;
/** What a record adds to a page beside its event's payload (`{"offset":…,"event":…}`). */
const RECORD_OVERHEAD_BYTES = 32;
/** A poll answer carries about this much at most (always at least one item). */
const MAX_POLL_RESPONSE_CHARS = 1_000_000;

export type { WorkflowStreamState };

export class EventStream<E> {
  /** Items from `base`, as they travel: topic and base64 payload. */
  private log: Array<{ topic: string; data: string }>;
  private base: number;
  private readonly sequences: Record<string, number>;
  private readonly lastSeen: Record<string, number>;
  private draining = false;
  private polls = 0;
  /** Publish signals this run received, valid or not (a carried stream starts again from 0: Temporal's signal budget is per run). */
  publishes = 0;

  constructor(query: wf.QueryDefinition<StreamEventsPage<E>, [StreamEventsRequest?]>, prior?: WorkflowStreamState) {
    this.log = (prior?.log ?? []).map(({ topic, data }) => ({ topic, data }));
    this.base = prior?.base_offset ?? 0;
    this.sequences = { ...prior?.publisher_sequences };
    this.lastSeen = { ...prior?.publisher_last_seen };
    wf.setHandler(rawSignal(PUBLISH_SIGNAL), (raw) => this.onPublish(raw));
    wf.setHandler(rawUpdate<PollResult>(POLL_UPDATE), (raw) => this.onPoll(decodeArgument(raw) as { value: PollInput }), {
      validator: (raw) => this.validatePoll(raw),
    });
    wf.setHandler(wf.defineQuery<number>(OFFSET_QUERY), () => this.end);
    wf.setHandler(query, (request?: StreamEventsRequest) => this.page(request));
  }

  private get end(): number {
    return this.base + this.log.length;
  }

  publish(event: E): void {
    this.log.push({ topic: TURN_EVENTS_TOPIC, data: encodePayloadWire(wf.defaultPayloadConverter.toPayload(event)) });
  }

  /** Ends the long polls and refuses new ones, so the workflow can wait for its handlers and end (or continue-as-new). */
  close(): void {
    this.draining = true;
  }

  /** Takes new polls again: the workflow closed its stream for a continue-as-new that it then did not make. */
  reopen(): void {
    this.draining = false;
  }

  /** The stream's state for continue-as-new, taken after `close()`: its offsets, and its last `keep` events. */
  state(keep: number): WorkflowStreamState {
    const kept = this.log.slice(-keep);
    const now = Date.now();
    const live = Object.keys(this.sequences).filter((id) => now - (this.lastSeen[id] ?? 0) * 1000 < PUBLISHER_TTL_MS);
    return {
      log: kept.map(({ topic, data }) => ({ topic, data, offset: 0 })),
      base_offset: this.end - kept.length,
      publisher_sequences: Object.fromEntries(live.map((id) => [id, this.sequences[id]!])),
      publisher_last_seen: Object.fromEntries(live.map((id) => [id, this.lastSeen[id]!])),
    };
  }

  /**
   * The events from `fromOffset`: at most `limit` (1,000), or, with `maxBytes`, while their
   * payloads fit in it (a closed run's reader takes as much as one replay can give). Answers
   * nothing but reads: a query adds no history, so its shape may change without a patch.
   */
  private page(request: StreamEventsRequest = {}): StreamEventsPage<E> {
    const from = Math.max(this.base, Math.floor(Number(request?.fromOffset ?? 0)) || 0);
    const sized = request?.maxBytes !== undefined;
    const maxCount = sized ? MAX_SIZED_PAGE : MAX_PAGE;
    const limit = Math.min(maxCount, Math.max(1, Math.floor(Number(request?.limit ?? maxCount)) || maxCount));
    const maxBytes = sized ? Math.min(MAX_PAGE_BYTES, Math.max(1, Math.floor(Number(request.maxBytes)) || MAX_PAGE_BYTES)) : Infinity;
    const events: StreamEventsPage<E>['events'] = [];
    let bytes = 0;
    let index = from - this.base;
    for (; index < this.log.length && events.length < limit; index++) {
      const item = this.log[index]!;
      if (item.topic !== TURN_EVENTS_TOPIC) continue;
      // The payload's bytes, from its base64 length: an upper bound of the event's JSON.
      const size = Math.ceil((item.data.length * 3) / 4) + RECORD_OVERHEAD_BYTES;
      if (events.length > 0 && bytes + size > maxBytes) break;
      bytes += size;
      events.push({ offset: this.base + index, event: wf.defaultPayloadConverter.fromPayload<E>(decodePayloadWire(item.data)) });
    }
    return { events, nextOffset: this.base + Math.max(index, from - this.base), base: this.base, end: this.end };
  }

  /** A batch from a publisher: logged and dropped whole when invalid, skipped when its sequence was seen. */
  private onPublish(raw: unknown): void {
    this.publishes++;
    const decoded = decodeArgument(raw);
    const problem = decoded.ok ? publishProblem(decoded.value) : `it could not be decoded: ${decoded.reason}`;
    if (problem) {
      wf.log.warn('Ignored an invalid stream publish signal', { error: problem });
      return;
    }
    const input = (decoded as { value: PublishInput }).value;
    if (input.publisher_id) {
      if (input.sequence <= (this.sequences[input.publisher_id] ?? 0)) return;
      this.sequences[input.publisher_id] = input.sequence;
      this.lastSeen[input.publisher_id] = Date.now() / 1000;
    }
    for (const { topic, data } of input.items) this.log.push({ topic, data });
  }

  private validatePoll(raw: unknown): void {
    if (this.draining) {
      // The library's own refusal, which its subscribers retry on the successor run.
      throw ApplicationFailure.create({ message: 'Workflow is draining for continue-as-new', type: 'StreamDraining', nonRetryable: true });
    }
    if (this.polls >= MAX_POLLS_IN_FLIGHT) {
      throw ApplicationFailure.create({
        message: `${MAX_POLLS_IN_FLIGHT} polls of this stream are waiting already; read it by its query instead (it costs no update)`,
        type: 'TooManyPolls',
        nonRetryable: true,
      });
    }
    const decoded = decodeArgument(raw);
    if (!decoded.ok) throw rejection('UndecodablePayload', `${POLL_UPDATE} could not be decoded: ${decoded.reason}`);
    const problem = pollProblem(decoded.value);
    if (problem) throw rejection('InvalidRequest', `Invalid ${POLL_UPDATE}: ${problem}`);
  }

  /** The items after `from_offset` once there are any (or the stream drains, or the wait ends). */
  private async onPoll({ value: input }: { value: PollInput }): Promise<PollResult> {
    const truncated = () =>
      ApplicationFailure.create({
        message: `Requested offset ${input.from_offset} has been truncated. Current base offset is ${this.base}.`,
        type: 'TruncatedOffset',
        nonRetryable: true,
      });
    if (input.from_offset !== 0 && input.from_offset < this.base) throw truncated();
    const ready = () => this.draining || (input.from_offset !== 0 && input.from_offset < this.base) || this.log.length > Math.max(input.from_offset - this.base, 0);
    this.polls++;
    try {
      if (wf.patched(BOUNDED_POLL_PATCH)) await wf.condition(ready, POLL_WAIT);
      else await wf.condition(ready);
    } finally {
      this.polls--;
    }
    let index = input.from_offset - this.base;
    if (index < 0) {
      if (input.from_offset !== 0) throw truncated();
      index = 0;
    }
    const topics = input.topics.length > 0 ? new Set(input.topics) : undefined;
    const items: PollResult['items'] = [];
    let size = 0;
    for (; index < this.log.length; index++) {
      const { topic, data } = this.log[index]!;
      if (topics && !topics.has(topic)) continue;
      if (size + data.length + topic.length > MAX_POLL_RESPONSE_CHARS && items.length > 0) {
        return { items, next_offset: this.base + index, more_ready: true };
      }
      size += data.length + topic.length;
      items.push({ topic, data, offset: this.base + index });
    }
    return { items, next_offset: Math.max(this.end, input.from_offset), more_ready: false };
  }
}
