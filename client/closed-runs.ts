/**
 * Reading a turn (or conversation) whose run has closed, without a replay per read.
 *
 * Temporal answers a query of a closed run by giving a worker the run's whole history to replay
 * (the run is in no worker's cache any more): seconds for a long turn, every time. But a closed
 * run never changes, so what one replay answered holds for good. Every query of a closed run
 * through one `TurnpikeClient` is therefore sent once per run (by its `runId`, never the
 * workflow id alone: the id may be started again) and kept here, and concurrent readers wait for
 * the same answer instead of sending their own. Its event stream is read by pages bounded by size
 * (`maxBytes`, at most 1.5 MB, under Temporal's 2 MB payload limit), so one replay reads a whole
 * stream of a few thousand events; each page is kept, and a reader at any offset the kept pages
 * cover is served from memory.
 *
 * Whether the latest run is open is learnt without a replay: reads go out with
 * `queryRejectCondition: NOT_OPEN`, which an open run answers as usual and a closed one refuses
 * at once (no worker is involved); only then is the run described for its id. A turn that handed
 * over (continue-as-new) holds only the last events of the runs before it: offsets below a run's
 * `base` are read from the run before it (the `continuedExecutionRunId` of its first history
 * event), which is closed too.
 *
 * Memory is bounded: at most {@link MAX_KEPT_BYTES} of answers (as JSON), the least recently used
 * dropped first. Each API process keeps its own: a second process reads a closed run with one
 * replay of its own.
 */
import { QueryRejectedError, WorkflowClient, type Client, type QueryDefinition } from '@temporalio/client';
import type { StreamEventsPage, StreamEventsRequest } from '../workflows/types/turn-events.js';
import { isTransient } from './transient-errors.js';

/** The page size asked of a closed run: Temporal's payload limit is 2 MB, and the codec compresses it further. */
export const CLOSED_PAGE_BYTES = 1_500_000;
/** Answers of closed runs kept per client, as JSON characters. */
const MAX_KEPT_BYTES = 64 * 1024 * 1024;
/**
 * A query of a closed run that failed for a reason that passes is sent again this often at most,
 * after {@link RETRY_WAIT_MS}: on a loaded worker a long run's replay can outlast the server's
 * query timeout ("query timed out before a worker could process it").
 */
const MAX_ATTEMPTS = 5;
const RETRY_WAIT_MS = 500;

/** `read`, again after a failure a later attempt may not meet. */
async function retried<R>(read: () => Promise<R>): Promise<R> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await read();
    } catch (error) {
      if (attempt >= MAX_ATTEMPTS || !isTransient(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, RETRY_WAIT_MS));
    }
  }
}

type StreamQuery<E> = QueryDefinition<StreamEventsPage<E>, [StreamEventsRequest?]>;

interface Kept {
  value: Promise<unknown>;
  bytes: number;
}

/** What a query of a workflow's latest run found: an open run's answer, or the id of the closed run. */
export type LatestRunAnswer<R> = { open: true; value: R } | { open: false; runId: string };

export class ClosedRuns {
  private readonly rejecting: WorkflowClient;
  private readonly kept = new Map<string, Kept>();
  private keptBytes = 0;

  constructor(private readonly client: Client) {
    // The same connection, namespace, converter and interceptors as `client`: only the reject condition differs.
    this.rejecting = new WorkflowClient({
      connection: client.connection,
      namespace: client.options.namespace,
      dataConverter: client.options.dataConverter,
      interceptors: client.options.interceptors?.workflow,
      queryRejectCondition: 'NOT_OPEN',
    });
  }

  /** `query` of the latest run if it is open; else the closed run's id (no replay either way). */
  async latest<R, A extends unknown[]>(workflowId: string, query: QueryDefinition<R, A>, ...args: A): Promise<LatestRunAnswer<R>> {
    try {
      return { open: true, value: await this.rejecting.getHandle(workflowId).query(query, ...args) };
    } catch (error) {
      if (!(error instanceof QueryRejectedError)) throw error;
    }
    const handle = this.client.workflow.getHandle(workflowId);
    const { runId, status } = await handle.describe();
    // Started again since the refusal (a turn id may be reused): that run is open.
    if (status.name === 'RUNNING') return { open: true, value: await handle.query(query, ...args) };
    return { open: false, runId };
  }

  /** `query` of the workflow's latest run: as usual while it is open; once per run when it is closed. */
  async query<R, A extends unknown[]>(workflowId: string, query: QueryDefinition<R, A>, ...args: A): Promise<R> {
    const answer = await this.latest(workflowId, query, ...args);
    return answer.open ? answer.value : this.ofRun(workflowId, answer.runId, query, ...args);
  }

  /** `query` of closed run `runId`, sent once and kept. */
  ofRun<R, A extends unknown[]>(workflowId: string, runId: string, query: QueryDefinition<R, A>, ...args: A): Promise<R> {
    return this.once(`${runId}\u0000${query.name}\u0000${JSON.stringify(args)}`, () =>
      retried(() => this.client.workflow.getHandle(workflowId, runId).query(query, ...args)),
    );
  }

  /**
   * The events of closed run `runId` from `fromOffset`, in offset order, to the end of its stream
   * (or to `untilOffset`), the runs before it included for offsets it no longer holds.
   */
  async *events<E>(workflowId: string, runId: string, query: StreamQuery<E>, fromOffset: number, untilOffset = Infinity): AsyncGenerator<{ offset: number; event: E }, void, undefined> {
    let offset = fromOffset;
    for (;;) {
      const page = await this.page(workflowId, runId, query, offset);
      const base = page.base ?? 0;
      if (offset < base) {
        // Handed over: the offsets below `base` are in the run before this one.
        yield* this.before(workflowId, runId, query, offset, Math.min(base, untilOffset));
        if (base >= untilOffset) return;
        offset = base;
        continue;
      }
      for (const record of page.events) {
        if (record.offset < offset) continue;
        if (record.offset >= untilOffset) return;
        yield record;
      }
      const end = page.end ?? (page.events.length === 0 ? page.nextOffset : Infinity);
      if (page.nextOffset >= Math.min(end, untilOffset) || page.nextOffset <= offset) return;
      offset = page.nextOffset;
    }
  }

  /**
   * The events from `fromOffset` up to `base`, which run `runId` (open or closed) no longer holds:
   * read from the runs before it, which are closed.
   */
  async *before<E>(workflowId: string, runId: string, query: StreamQuery<E>, fromOffset: number, base: number): AsyncGenerator<{ offset: number; event: E }, void, undefined> {
    const previous = await this.previousRun(workflowId, runId);
    if (previous) yield* this.events(workflowId, previous, query, fromOffset, base);
  }

  /** A page of the closed run's stream from `offset`: kept pages are looked up by the offset they start at, and one starting before it that reaches past it. */
  private async page<E>(workflowId: string, runId: string, query: StreamQuery<E>, offset: number): Promise<StreamEventsPage<E>> {
    const prefix = `${runId}\u0000${query.name}\u0000page\u0000`;
    for (const [key, kept] of this.kept) {
      if (!key.startsWith(prefix)) continue;
      const from = Number(key.slice(prefix.length));
      if (from > offset) continue;
      const page = (await kept.value) as StreamEventsPage<E>;
      if (page.nextOffset > offset || (from === offset && page.events.length === 0)) return this.touched(key, page);
    }
    return this.once(prefix + offset, () =>
      retried(() => this.client.workflow.getHandle(workflowId, runId).query(query, { fromOffset: offset, maxBytes: CLOSED_PAGE_BYTES })),
    );
  }

  /** The run a hand-over continued into `runId`, from its first history event; undefined for a first run. */
  private previousRun(workflowId: string, runId: string): Promise<string | undefined> {
    return this.once(`${runId}\u0000previous`, async () => {
      const { history } = await retried(() =>
        this.client.workflowService.getWorkflowExecutionHistory({ namespace: this.client.options.namespace, execution: { workflowId, runId }, maximumPageSize: 1 }),
      );
      return history?.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
    });
  }

  /** The kept answer for `key`, or `read`'s, kept once it succeeds (a failure is not kept). */
  private once<R>(key: string, read: () => Promise<R>): Promise<R> {
    const found = this.kept.get(key);
    if (found) return this.touched(key, found.value) as Promise<R>;
    const value = read();
    const kept: Kept = { value, bytes: 0 };
    this.kept.set(key, kept);
    value.then(
      (answer) => {
        if (this.kept.get(key) !== kept) return;
        kept.bytes = key.length + (JSON.stringify(answer)?.length ?? 0);
        this.keptBytes += kept.bytes;
        this.trim();
      },
      () => {
        if (this.kept.get(key) === kept) this.kept.delete(key);
      },
    );
    return value;
  }

  /** Marks `key` as used now (the map keeps insertion order: the least recently used first). */
  private touched<T>(key: string, value: T): T {
    const kept = this.kept.get(key);
    if (kept) {
      this.kept.delete(key);
      this.kept.set(key, kept);
    }
    return value;
  }

  private trim(): void {
    for (const [key, kept] of this.kept) {
      if (this.keptBytes <= MAX_KEPT_BYTES) return;
      if (kept.bytes === 0) continue; // still being read
      this.kept.delete(key);
      this.keptBytes -= kept.bytes;
    }
  }
}
