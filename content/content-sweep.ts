/**
 * The retention sweep: deletes stored content that no workflow still needs.
 *
 * An object is deleted only when both hold:
 * - it was stored (or stored again: `put` refreshes `storedAt`) before `now - retention`, and
 * - no workflow that is running, or that closed after `now - retention`, refers to it: in its
 *   history, read raw and decoded through the codecs (payload-references.ts), or, for a running
 *   one, in what Temporal holds outside history (pending activities' heartbeat details); and no
 *   schedule does (its action holds the input of every workflow it will start).
 * Every workflow type in the namespace is read, the application's own as well as turnpike's:
 * keeping an object too long costs storage, deleting one too early breaks a workflow.
 *
 * So a closed workflow's content outlives it by at least `retention`; reading an older one's
 * history shows references to content that may be gone. Retention should be longer than the
 * longest time anyone reads a closed turn's result or history.
 *
 * Steps: list the store and keep the candidates (stored before the cutoff); with none, stop. Scan
 * the histories of running and recently closed workflows; then those started since the sweep
 * began, so a workflow the first listing missed is read too. List the store again and delete a
 * candidate only if nothing refers to it and its `storedAt` has not changed.
 *
 * The race left: a workflow that starts referring to an old object *without storing it again*
 * after its history was read (a new turn given a message that carries an old `ref`) and before
 * the delete. The second scan and the second listing narrow that window to the moments between
 * them and the delete; whoever writes a reference into a new workflow's input should store the
 * content again (which refreshes it) rather than copy a reference older than the retention. A
 * turn a running conversation starts is safe: the conversation refers to the same content.
 *
 * A sweep that meets a payload it cannot read to the end (see payload-references.ts) scans on,
 * reports it as `unreadable`, and deletes nothing: that payload may refer to any object. So does
 * one that meets a history Temporal does not give (other than one deleted meanwhile): it reads
 * every other history, names that workflow in `unreadableWorkflows`, and deletes nothing, since
 * what that history refers to is unknown. `skipWorkflows` leaves such a workflow unread on
 * purpose: its content is then not kept for it. Pages too large for the client's connection are
 * asked again smaller (history-pages.ts).
 */
import type { Client } from '@temporalio/client';
import { msToNumber, type Duration, type PayloadCodec } from '@temporalio/common';
import { turnpikeCodecs } from './data-converter.js';
import type { ContentStore, StoredObject } from './content-store.js';
import { receiveLimitOf, TEMPORAL_RECEIVE_LIMIT_BYTES } from '../connection/temporal-connection.js';
import { readHistoryPages } from './history-pages.js';
import { ReferenceScanner } from './payload-references.js';

export interface SweepOptions {
  /** A client of the namespace whose workflows refer to the store's content. */
  client: Client;
  store: ContentStore;
  /** How long content is kept after it was stored and after the last workflow referring to it closed: ms, or `'7d'`. */
  retention: Duration;
  /**
   * The data converter's codec chain, in the order given to `payloadCodecs` (turnpike's
   * compression, the application's codecs, the claim check). Default: compression and the claim
   * check on `store`. A namespace whose payloads go through a codec of its own (encryption) must
   * pass it, or the sweep finds those payloads unreadable and deletes nothing.
   */
  codecs?: readonly PayloadCodec[];
  /**
   * Workflow ids whose histories are not read (every run of each): for a workflow the sweep
   * names in `unreadableWorkflows` that is known to refer to no content worth keeping. Content
   * only such a workflow refers to is deleted like any other; deleting what it needs breaks it.
   */
  skipWorkflows?: readonly string[];
  /** Report what would be deleted, delete nothing. */
  dryRun?: boolean;
  now?: Date;
  log?: (line: string) => void;
}

export interface SweepReport {
  /** Workflow runs whose history was read. */
  workflowsScanned: number;
  /** Objects in the store at the start. */
  objects: number;
  kept: {
    /** Stored (or stored again) after the cutoff. */
    recent: number;
    /** Older, but referred to by a running or recently closed workflow. */
    referenced: number;
    /** Older and unreferenced as far as the sweep could read, but kept because some payload was unreadable. */
    unverified: number;
  };
  /** Objects deleted (with `dryRun`: that would have been). */
  deleted: number;
  bytesDeleted: number;
  deletedKeys: string[];
  dryRun: boolean;
  /** Payloads that may hold references the sweep could not read; any one means nothing was deleted. */
  unreadable: number;
  /** Runs whose history (or description) Temporal did not give, and why; any one means nothing was deleted. */
  unreadableWorkflows: UnreadableWorkflow[];
  /** Runs not read because `skipWorkflows` names their workflow. */
  workflowsSkipped: number;
  /** Payloads a codec marked undecodable: broken content that refers to nothing. */
  undecodable: number;
  /** Temporary files of interrupted writes removed (not in a dry run). */
  partialsRemoved: number;
  /** Objects stored before this were candidates. */
  cutoff: string;
  /** Schedules whose actions were read: the input of the workflows they will start. */
  schedulesScanned: number;
}

export interface UnreadableWorkflow {
  workflowId: string;
  runId: string;
  /** What Temporal or the connection answered. */
  error: string;
}

/** How many histories are read at once. */
const SCAN_CONCURRENCY = 8;
/** How far back the second scan looks for workflows started while the sweep ran, against clock skew. */
const STARTED_MARGIN_MS = 60_000;
const NOT_FOUND = 5;

/** The visibility query for workflows whose references keep content: running, or closed after `cutoff`. */
export function keepingWorkflowsQuery(cutoff: Date): string {
  return `ExecutionStatus="Running" OR CloseTime > "${cutoff.toISOString()}"`;
}

/** The visibility query for workflows started at or after `since`. */
export function startedSinceQuery(since: Date): string {
  return `StartTime >= "${since.toISOString()}"`;
}

export async function sweepContent(options: SweepOptions): Promise<SweepReport> {
  const { client, store, dryRun = false } = options;
  const log = options.log ?? (() => undefined);
  const started = Date.now();
  const now = options.now ?? new Date(started);
  const retention = msToNumber(options.retention);
  if (!(retention > 0)) throw new TypeError(`sweepContent: retention must be above 0 (got ${String(options.retention)})`);
  const cutoff = new Date(now.getTime() - retention);
  const report: SweepReport = {
    workflowsScanned: 0,
    objects: 0,
    kept: { recent: 0, referenced: 0, unverified: 0 },
    deleted: 0,
    bytesDeleted: 0,
    deletedKeys: [],
    dryRun,
    unreadable: 0,
    unreadableWorkflows: [],
    workflowsSkipped: 0,
    undecodable: 0,
    partialsRemoved: 0,
    cutoff: cutoff.toISOString(),
    schedulesScanned: 0,
  };

  const candidates = new Map<string, StoredObject>();
  for await (const object of store.list()) {
    report.objects += 1;
    if (object.storedAt < cutoff) candidates.set(object.key, object);
    else report.kept.recent += 1;
  }
  if (!dryRun && store.removeStalePartials) report.partialsRemoved = await store.removeStalePartials(cutoff);
  log(`${report.objects} objects in ${store.description}, ${candidates.size} stored before ${report.cutoff}`);
  if (candidates.size === 0) return report;

  const receiveLimit = receiveLimitOf(client.connection);
  if (receiveLimit !== undefined && receiveLimit < TEMPORAL_RECEIVE_LIMIT_BYTES) {
    log(`the client's connection takes answers of up to ${receiveLimit} bytes: a larger history page is asked again smaller, after the SDK's retries (open it with connectTemporal)`);
  }
  const scanner = new ReferenceScanner(options.codecs ?? turnpikeCodecs([], { contentStore: store }), log);
  const referenced = new Set<string>();
  const scanned = new Set<string>();
  const skip = new Set(options.skipWorkflows ?? []);
  const scan = async (query: string) => {
    const runs = (await listRuns(client, query)).filter(({ workflowId, runId }) => !scanned.has(`${workflowId}/${runId}`));
    for (const { workflowId, runId } of runs) scanned.add(`${workflowId}/${runId}`);
    await forEachAtMost(SCAN_CONCURRENCY, runs, async (run) => {
      if (skip.has(run.workflowId)) {
        report.workflowsSkipped += 1;
        log(`workflow ${run.workflowId} (run ${run.runId}): skipped`);
        return;
      }
      const outcome = await scanRun(client, scanner, run, referenced);
      if (outcome === 'read') report.workflowsScanned += 1;
      else if (outcome !== 'gone') {
        report.unreadableWorkflows.push({ workflowId: run.workflowId, runId: run.runId, error: outcome.error });
        log(`workflow ${run.workflowId} (run ${run.runId}): its history could not be read: ${outcome.error}`);
      }
    });
  };
  await scan(keepingWorkflowsQuery(cutoff));
  report.schedulesScanned = await scanSchedules(client, scanner, referenced);
  await scan(startedSinceQuery(new Date(started - STARTED_MARGIN_MS)));
  report.unreadable = scanner.unreadable;
  report.undecodable = scanner.undecodable;

  const unverified = report.unreadable > 0 || report.unreadableWorkflows.length > 0;

  // Listed again: an object stored again while the histories were read is recent now.
  const current = new Map<string, StoredObject>();
  for await (const object of store.list()) if (candidates.has(object.key)) current.set(object.key, object);
  for (const [key, candidate] of candidates) {
    const latest = current.get(key);
    if (!latest) continue; // Gone already (another sweep).
    if (latest.storedAt.getTime() !== candidate.storedAt.getTime()) report.kept.recent += 1;
    else if (referenced.has(key)) report.kept.referenced += 1;
    else if (unverified) report.kept.unverified += 1;
    else {
      if (!dryRun) await store.delete(key);
      report.deleted += 1;
      report.bytesDeleted += latest.bytes;
      report.deletedKeys.push(key);
    }
  }
  if (report.unreadable > 0) log(`${report.unreadable} payloads could not be read to the end: nothing deleted`);
  if (report.unreadableWorkflows.length > 0) log(`${report.unreadableWorkflows.length} histories could not be read: nothing deleted`);
  log(`${dryRun ? 'would delete' : 'deleted'} ${report.deleted} objects (${report.bytesDeleted} bytes)`);
  return report;
}

interface Run {
  workflowId: string;
  runId: string;
  running: boolean;
}

/** The runs a visibility query lists, read raw: a memo is not decoded (it may refer to content that is gone). */
async function listRuns(client: Client, query: string): Promise<Run[]> {
  const runs: Run[] = [];
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await client.workflowService.listWorkflowExecutions({ namespace: client.options.namespace, query, pageSize: 1_000, nextPageToken });
    for (const execution of page.executions ?? []) {
      const { workflowId, runId } = execution.execution ?? {};
      if (!workflowId || !runId) continue;
      runs.push({ workflowId, runId, running: !execution.closeTime });
    }
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken);
  return runs;
}

/** Adds the keys one run refers to: `gone` when it no longer exists, or what Temporal answered when it did not give its history. */
async function scanRun(client: Client, scanner: ReferenceScanner, run: Run, into: Set<string>): Promise<'read' | 'gone' | { error: string }> {
  const where = `workflow ${run.workflowId} (run ${run.runId})`;
  const namespace = client.options.namespace;
  const execution = { workflowId: run.workflowId, runId: run.runId };
  try {
    // Page by page, so one long history is never held whole.
    await readHistoryPages(client, execution, (history) => scanner.scan(history, into, where));
    // Heartbeat details of running activities and the like are kept outside history.
    if (run.running) await scanner.scan(await client.workflowService.describeWorkflowExecution({ namespace, execution }), into, where);
    return 'read';
  } catch (error) {
    if ((error as { code?: unknown }).code === NOT_FOUND) return 'gone';
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

/** Adds the keys every schedule refers to (its action holds the input of each workflow it starts) and gives how many schedules were read. */
async function scanSchedules(client: Client, scanner: ReferenceScanner, into: Set<string>): Promise<number> {
  const namespace = client.options.namespace;
  let count = 0;
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await client.workflowService.listSchedules({ namespace, maximumPageSize: 1_000, nextPageToken });
    for (const entry of page.schedules ?? []) {
      if (!entry.scheduleId) continue;
      try {
        const described = await client.workflowService.describeSchedule({ namespace, scheduleId: entry.scheduleId });
        await scanner.scan(described, into, `schedule ${entry.scheduleId}`);
        count += 1;
      } catch (error) {
        if ((error as { code?: unknown }).code !== NOT_FOUND) throw new Error(`schedule ${entry.scheduleId} could not be read; nothing deleted`, { cause: error });
      }
    }
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken);
  return count;
}

async function forEachAtMost<Item>(limit: number, items: readonly Item[], work: (item: Item) => Promise<void>): Promise<void> {
  let next = 0;
  let failed = false;
  const lane = async () => {
    while (!failed && next < items.length) {
      const item = items[next++] as Item;
      await work(item).catch((error: unknown) => {
        failed = true;
        throw error;
      });
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}
