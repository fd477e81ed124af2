/**
 * Reading a workflow's event stream from an offset, by its query: each read is a query of the
 * workflow's current run (so it follows continue-as-new), polled every 100 ms while events come
 * and less often, up to every 500 ms, while none do. Every event is yielded once, in offset
 * order, so a reader that resumes after the offset of the last event it saw loses and repeats
 * nothing.
 *
 * Why queries and not the stream's long-poll updates: a query adds nothing to history and
 * spends none of the workflow's update budget (10 updates in flight, 2,000 a run), so no number
 * of readers, open or abandoned, can keep a decision from being admitted. And an update accepted
 * in a workflow task that a worker with an empty cache runs can be recorded after commands that,
 * on replay, it comes before (the SDK hands it to the workflow a step later live than on replay),
 * which fails the turn's replay; readers' polls were by far the most frequent updates.
 *
 * With `closedRuns`, a read of a workflow whose latest run has closed is served by it
 * (closed-runs.ts): each page of a closed run is read once per client, by one replay, instead of
 * a replay per reader and per 1,000 events.
 */
import { WorkflowNotFoundError, type Client, type QueryDefinition } from '@temporalio/client';
import type { StreamEventsPage, StreamEventsRequest } from '../workflows/types/turn-events.js';
import type { ClosedRuns } from './closed-runs.js';
import { isTransient } from './transient-errors.js';

export { isTransient };

export interface StreamReadOptions<E> {
  /** The first offset to read (default 0). */
  fromOffset?: number;
  /** Stops after yielding an event for which this is true (a turn's `turn-finished`). */
  isLast?: (event: E) => boolean;
  /** Stops reading (the iterator returns) when aborted. */
  signal?: AbortSignal;
  /** How long to wait for a workflow that does not exist yet (a conversation's next turn). Default 30 s. */
  waitForStartMs?: number;
  /** Stops before the event at this offset (the reader reads on from a shared feed there). */
  untilOffset?: number;
  /** Serves the reads of a closed run once per run (closed-runs.ts). */
  closedRuns?: ClosedRuns;
}

/** The wait after a read that returned events: a live stream is followed at this cadence. */
const ACTIVE_INTERVAL_MS = 100;
/** The longest wait between reads of a quiet stream (a parked turn). */
const IDLE_INTERVAL_MS = 500;
/** Quiet reads between two looks at whether the workflow still runs. */
const READS_BETWEEN_STATUS_CHECKS = 10;
/**
 * A query that failed for a reason that passes (the server's query buffer was full, a timeout) is
 * retried, waiting longer each time up to {@link MAX_RETRY_WAIT_MS}, until the failures have gone
 * on this long. Each failure already stands for about 6 s of the connection's own quick retries
 * (connection/query-retry.ts). A turn with a workflow task in flight almost all the time (a
 * signal every few hundred milliseconds, a loaded worker) answers one buffered query per task,
 * and two readers of it (two API processes, a reader and a dashboard's queries) can lose that
 * race for minutes; a task held by a worker that died stays in flight until its timeout. A reader
 * of a live turn waits that out rather than failing the stream; its caller's abort ends it at once.
 */
const TRANSIENT_PATIENCE_MS = 600_000;
const MAX_RETRY_WAIT_MS = 4_000;

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
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
  const { isLast = () => false, signal, closedRuns, untilOffset = Infinity } = options;
  let offset = Math.max(0, Math.floor(options.fromOffset ?? 0));
  if (offset >= untilOffset) return;
  const waitUntil = Date.now() + (options.waitForStartMs ?? 30_000);
  const handle = client.workflow.getHandle(workflowId);
  /** Set once the latest run turned out closed: the rest is read from `closedRuns`. */
  let closedRunId: string | undefined;
  // Not tied to `signal`: a query is short, and the client's abort support adds a listener to the
  // signal for every call that it never removes. An abort is seen when the query returns.
  const read = async (fromOffset: number): Promise<StreamEventsPage<E>> => {
    if (!closedRuns) return handle.query(query, { fromOffset });
    const answer = await closedRuns.latest(workflowId, query, { fromOffset });
    if (answer.open) return answer.value;
    closedRunId = answer.runId;
    return { events: [], nextOffset: fromOffset };
  };

  let interval = ACTIVE_INTERVAL_MS;
  let quietReads = 0;
  /** When the current run of transient failures began, if one is under way. */
  let failingSince: number | undefined;
  let retryWait = IDLE_INTERVAL_MS;
  /** Set once the workflow was seen ended: the next read is the last. */
  let lastRead = false;
  for (;;) {
    if (signal?.aborted || offset >= untilOffset) return;
    let page: StreamEventsPage<E>;
    try {
      page = await read(offset);
      failingSince = undefined;
      retryWait = IDLE_INTERVAL_MS;
    } catch (error) {
      if (signal?.aborted) return;
      // Not started yet (a conversation's next turn): wait for it, within reason.
      if (error instanceof WorkflowNotFoundError && Date.now() <= waitUntil) {
        await sleep(IDLE_INTERVAL_MS, signal);
        continue;
      }
      if (isTransient(error) && Date.now() - (failingSince ??= Date.now()) < TRANSIENT_PATIENCE_MS) {
        await sleep(retryWait, signal);
        retryWait = Math.min(MAX_RETRY_WAIT_MS, retryWait * 2);
        continue;
      }
      throw error;
    }
    if (closedRunId !== undefined) {
      for await (const record of closedRuns!.events(workflowId, closedRunId, query, offset, untilOffset)) {
        yield record;
        if (isLast(record.event) || signal?.aborted) return;
      }
      return;
    }
    if (closedRuns && page.base !== undefined && offset < page.base) {
      // The run handed over since this reader's last read, past the events it carries: read those from the runs before it.
      const base = page.base;
      for await (const record of closedRuns.before(workflowId, (await handle.describe()).runId, query, offset, Math.min(base, untilOffset))) {
        offset = record.offset + 1;
        yield record;
        if (isLast(record.event) || signal?.aborted) return;
      }
      offset = Math.max(offset, base);
    }
    for (const { offset: at, event } of page.events) {
      if (at < offset) continue;
      if (at >= untilOffset) return;
      offset = at + 1;
      yield { offset: at, event };
      if (isLast(event)) return;
      if (signal?.aborted) return;
    }
    if (lastRead || offset >= untilOffset) return;
    if (page.events.length > 0) {
      interval = ACTIVE_INTERVAL_MS;
      quietReads = 0;
      offset = Math.max(offset, page.nextOffset);
      await sleep(ACTIVE_INTERVAL_MS, signal);
      continue;
    }
    // Items of other topics only: step over them.
    offset = Math.max(offset, page.nextOffset);
    // Nothing new. A workflow that has ended publishes nothing more: after one last read (which
    // waits out failures that pass, as every read does: a closed run's query replays it on a
    // worker, which a loaded one may not answer in time), stop.
    if (++quietReads % READS_BETWEEN_STATUS_CHECKS === 0 && !(await stillRunning())) {
      lastRead = true;
      continue;
    }
    await sleep(interval, signal);
    interval = Math.min(IDLE_INTERVAL_MS, Math.round(interval * 1.5));
  }

  async function stillRunning(): Promise<boolean> {
    try {
      return (await handle.describe()).status.name === 'RUNNING';
    } catch (error) {
      if (isTransient(error)) return true;
      throw error;
    }
  }
}
