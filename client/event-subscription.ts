/**
 * Reading a workflow's event stream from an offset: long polls (`@temporalio/workflow-streams`,
 * which follows continue-as-new) while the workflow runs, then the stream's query for whatever
 * the polls did not deliver before it ended. Every event is yielded once, in offset order, so
 * a reader that resumes after the offset of the last event it saw loses and repeats nothing.
 */
import { WorkflowNotFoundError, type Client, type QueryDefinition } from '@temporalio/client';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import { TURN_EVENTS_TOPIC, type StreamEventsPage, type StreamEventsRequest } from '../workflows/turn-events.js';

export interface StreamReadOptions<E> {
  /** The first offset to read (default 0). */
  fromOffset?: number;
  /** Stops after yielding an event for which this is true (a turn's `turn-finished`). */
  isLast?: (event: E) => boolean;
  /** Stops reading (the iterator returns) when aborted. */
  signal?: AbortSignal;
  /** How long to wait for a workflow that does not exist yet (a conversation's next turn). Default 30 s. */
  waitForStartMs?: number;
}

const NOT_STARTED_RETRY_MS = 200;

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

export async function* readEventStream<E>(
  client: Client,
  workflowId: string,
  query: QueryDefinition<StreamEventsPage<E>, [StreamEventsRequest?]>,
  options: StreamReadOptions<E> = {},
): AsyncGenerator<{ offset: number; event: E }, void, undefined> {
  const { isLast = () => false, signal } = options;
  let offset = Math.max(0, Math.floor(options.fromOffset ?? 0));
  const waitUntil = Date.now() + (options.waitForStartMs ?? 30_000);
  const handle = client.workflow.getHandle(workflowId);

  for (;;) {
    if (signal?.aborted) return;
    // Long polls while the workflow runs.
    const stream = WorkflowStreamClient.create(client, workflowId);
    const polls = stream.subscribe<E>(TURN_EVENTS_TOPIC, offset, { resultType: true, pollCooldown: 0 });
    const aborted = () => void polls.return(undefined);
    signal?.addEventListener('abort', aborted, { once: true });
    try {
      for await (const item of polls) {
        if (item.offset < offset) continue;
        offset = item.offset + 1;
        yield { offset: item.offset, event: item.data };
        if (isLast(item.data)) return;
        if (signal?.aborted) return;
      }
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError)) throw error;
      // Not started yet: wait for it, within reason.
      if (Date.now() > waitUntil) throw error;
      await sleep(NOT_STARTED_RETRY_MS, signal);
      continue;
    } finally {
      signal?.removeEventListener('abort', aborted);
    }
    if (signal?.aborted) return;
    // The polls ended: the workflow has ended (or closed its stream). The query still reads it.
    for (;;) {
      let page: StreamEventsPage<E>;
      try {
        page = await handle.query(query, { fromOffset: offset });
      } catch (error) {
        if (error instanceof WorkflowNotFoundError && Date.now() <= waitUntil) break;
        throw error;
      }
      for (const { offset: at, event } of page.events) {
        if (at < offset) continue;
        offset = at + 1;
        yield { offset: at, event };
        if (isLast(event)) return;
      }
      if (page.events.length === 0) return;
    }
    await sleep(NOT_STARTED_RETRY_MS, signal);
  }
}
