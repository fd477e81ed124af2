/**
 * A workflow's event stream: `@temporalio/workflow-streams` (an append-only log; activities
 * publish to it by batched, deduplicated signals; subscribers long-poll it by update and follow
 * continue-as-new) plus a query that reads the log without adding history — the way to read
 * the last events of a workflow that has already ended, when a long poll no longer can.
 */
import * as wf from '@temporalio/workflow';
import { WorkflowStream, decodePayloadWire, type WorkflowStreamState } from '@temporalio/workflow-streams/workflow';
import { guardStream } from './stream-guard.js';
import { TURN_EVENTS_TOPIC, type StreamEventsPage, type StreamEventsRequest } from './turn-events.js';

const MAX_PAGE = 1_000;

export type { WorkflowStreamState };

export class EventStream<E> {
  private readonly stream: WorkflowStream;

  constructor(query: wf.QueryDefinition<StreamEventsPage<E>, [StreamEventsRequest?]>, prior?: WorkflowStreamState) {
    this.stream = new WorkflowStream(prior);
    // Its publish signal and poll update take only what they can handle (stream-guard.ts).
    guardStream(this.stream);
    wf.setHandler(query, (request?: StreamEventsRequest) => this.page(request));
  }

  publish(event: E): void {
    this.stream.topic<E>(TURN_EVENTS_TOPIC).publish(event);
  }

  /**
   * Ends the long polls, so the workflow can wait for its handlers and end (or continue-as-new);
   * a subscriber reads what it missed through the query.
   */
  close(): void {
    this.stream.detachPollers();
  }

  /** The stream's state for continue-as-new, taken after `close()`: the last `keep` events. */
  state(keep: number): WorkflowStreamState {
    const { base_offset: base, log } = this.stream.getState();
    const end = base + log.length;
    if (end - keep > base) this.stream.truncate(end - keep);
    return this.stream.getState();
  }

  private page(request: StreamEventsRequest = {}): StreamEventsPage<E> {
    const { log, base_offset: base } = this.stream.getState();
    const from = Math.max(base, Math.floor(Number(request?.fromOffset ?? 0)) || 0);
    const limit = Math.min(MAX_PAGE, Math.max(1, Math.floor(Number(request?.limit ?? MAX_PAGE)) || MAX_PAGE));
    const events: StreamEventsPage<E>['events'] = [];
    let index = from - base;
    for (; index < log.length && events.length < limit; index++) {
      const item = log[index]!;
      if (item.topic !== TURN_EVENTS_TOPIC) continue;
      events.push({ offset: base + index, event: wf.defaultPayloadConverter.fromPayload<E>(decodePayloadWire(item.data)) });
    }
    return { events, nextOffset: base + Math.max(index, from - base) };
  }
}
