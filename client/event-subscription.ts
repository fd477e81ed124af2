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
const POLL_COOLDOWN = '50 milliseconds';

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

const ABORTED = Symbol('aborted');

/** `promise`, or ABORTED as soon as `signal` aborts (the promise's later failure is ignored). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T | typeof ABORTED> {
  if (!signal) return promise;
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.resolve(ABORTED);
  }
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      promise.catch(() => undefined);
      resolve(ABORTED);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
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
    // A short cooldown: it only spaces out polls that came back with nothing more ready (and the
    // retries while a workflow drains its polls for continue-as-new), adding at most that much latency.
    const polls = stream.subscribe<E>(TURN_EVENTS_TOPIC, offset, { resultType: true, pollCooldown: POLL_COOLDOWN });
    let pollError: unknown;
    const iterator = polls[Symbol.asyncIterator]();
    try {
      for (;;) {
        // A reader that goes away (a closed SSE connection) must not wait for the next event of
        // a turn parked for days: the wait is raced against the signal, and the long poll's RPC
        // is made under it, so it is cancelled too.
        const next = await untilAborted(signal ? client.withAbortSignal(signal, () => iterator.next()) : iterator.next(), signal);
        if (next === ABORTED || next.done) break;
        const item = next.value;
        if (item.offset < offset) continue;
        offset = item.offset + 1;
        yield { offset: item.offset, event: item.data };
        if (isLast(item.data)) return;
        if (signal?.aborted) return;
      }
    } catch (error) {
      // The workflow ended between two polls, or does not exist (yet): the query below tells.
      pollError = error;
    } finally {
      void iterator.return?.(undefined).catch(() => undefined);
    }
    if (signal?.aborted) return;
    // The polls ended: the workflow has ended (or closed its stream). The query still reads it.
    for (;;) {
      let page: StreamEventsPage<E>;
      try {
        page = await handle.query(query, { fromOffset: offset });
      } catch (error) {
        // Not started yet (a conversation's next turn): wait for it, within reason.
        if (error instanceof WorkflowNotFoundError && Date.now() <= waitUntil) break;
        throw pollError ?? error;
      }
      for (const { offset: at, event } of page.events) {
        if (at < offset) continue;
        offset = at + 1;
        yield { offset: at, event };
        if (isLast(event)) return;
      }
      if (page.events.length > 0) continue;
      // Nothing more: the end, unless the workflow still runs (a poll failed on the way), in
      // which case the polls take over again.
      if ((await handle.describe()).status.name !== 'RUNNING') return;
      break;
    }
    await sleep(NOT_STARTED_RETRY_MS, signal);
  }
}
