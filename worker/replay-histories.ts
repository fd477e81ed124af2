/**
 * Replay before deploy: fetch the histories of the turns a cluster runs (or holds parked) and
 * replay them against the workflow code about to be deployed, the application's own workflows
 * file included, so a change that would break them fails before the deploy instead of after it.
 *
 *   const report = await replayHistories({ client, query: 'WorkflowType="agentTurn" AND ExecutionStatus="Running"', workflowsPath });
 *   if (report.failures.length > 0) process.exit(1);
 *
 * `save` keeps the fetched histories as a replay set (`<n>-<workflow id>.json`, proto3 JSON as the
 * Web UI downloads it, and `workflow-ids.tsv`), which `from` replays offline, e.g. in a test.
 */
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { bundleWorkflowCode, Worker, type ReplayWorkerOptions } from '@temporalio/worker';
import { bundleWorkflows } from './create-worker.js';
import { historyFromJSON, historyToJSON } from './history-json.js';
import { TurnpikePlugin } from './plugin.js';
import { quietBundlerLogger } from './quiet-bundler-logger.js';

/** The file of a saved set that names each history's workflow id (a history does not name it). */
export const REPLAY_WORKFLOW_IDS_FILE = 'workflow-ids.tsv';

export interface ReplayHistoriesOptions {
  /** Fetch from this cluster: a client with turnpike's data converter (`TurnpikeClient.client`). */
  client?: Client;
  /** A visibility query, e.g. `WorkflowType="agentTurn" AND ExecutionStatus="Running"`. */
  query?: string;
  /** Only workflows started within this many milliseconds. */
  sinceMs?: number;
  /** At most this many histories (default 1,000). */
  limit?: number;
  /** Or replay a saved set (a folder `save` wrote) instead of fetching. */
  from?: string;
  /** Save the fetched histories here as a replay set. */
  save?: string;
  /**
   * Your workflows module, as your worker bundles it (it re-exports `agentTurn` and
   * `agentConversation`); default turnpike's own. Or a prebuilt `workflowBundle`.
   */
  workflowsPath?: string;
  workflowBundle?: ReplayWorkerOptions['workflowBundle'];
  /** The data converter the workers use (turnpike's codecs): history payloads are decoded with it. */
  dataConverter?: DataConverter;
  /** Called for each history as it is checked. */
  onResult?: (result: ReplayedHistory) => void;
}

export interface ReplayedHistory {
  workflowId: string;
  runId?: string;
  ok: boolean;
  /** The first event that did not match, when the failure names one. */
  eventId?: number;
  /** Why it did not replay. */
  reason?: string;
}

export interface ReplayReport {
  checked: ReplayedHistory[];
  /** The histories that did not replay, in the order they were checked. */
  failures: ReplayedHistory[];
}

interface FetchedHistory {
  workflowId: string;
  runId?: string;
  history: unknown;
}

async function* fetchHistories(client: Client, options: ReplayHistoriesOptions, saved: FetchedHistory[] | undefined): AsyncGenerator<FetchedHistory> {
  const since = options.sinceMs !== undefined ? ` AND StartTime >= "${new Date(Date.now() - options.sinceMs).toISOString()}"` : '';
  const query = options.query ? `(${options.query})${since}` : since.replace(/^ AND /, '');
  const limit = options.limit ?? 1000;
  let count = 0;
  for await (const execution of client.workflow.list(query ? { query } : {})) {
    if (count++ >= limit) break;
    const history = await client.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory();
    const fetched = { workflowId: execution.workflowId, runId: execution.runId, history };
    saved?.push(fetched);
    yield fetched;
  }
}

function* savedHistories(folder: string): Generator<FetchedHistory> {
  const ids = new Map<string, string>();
  try {
    for (const line of readFileSync(path.join(folder, REPLAY_WORKFLOW_IDS_FILE), 'utf8').split('\n').filter(Boolean)) {
      const [file, id] = line.split('\t') as [string, string];
      ids.set(file, id);
    }
  } catch {
    // A set without ids replays under its file names.
  }
  for (const file of readdirSync(folder).filter((name) => name.endsWith('.json')).sort()) {
    yield { workflowId: ids.get(file) ?? file.replace(/\.json$/, ''), history: readSavedHistory(path.join(folder, file)) };
  }
}

/** One file of a saved set as a history; a file that is not one fails naming it and saying why. */
export function readSavedHistory(file: string): unknown {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ReplaySetError(file, `it is not JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  try {
    return historyFromJSON(json);
  } catch (error) {
    throw new ReplaySetError(file, error instanceof Error ? error.message : String(error));
  }
}

/** A file of a saved replay set that is not a history: the message names the file and what is wrong. */
export class ReplaySetError extends Error {
  constructor(
    /** The file, as the set's folder was given. */
    readonly file: string,
    /** What is wrong with it: not JSON (and where), or not a history (and why). */
    readonly problem: string,
  ) {
    super(`${file} is not a history to replay: ${problem}`);
    this.name = 'ReplaySetError';
  }
}

/** A file name for a workflow id (ids may hold `/`, as a child turn's do). */
/** Numbered, so a saved set replays in the order it was fetched. */
function fileNameFor(workflowId: string, index: number): string {
  return `${String(index + 1).padStart(4, '0')}-${workflowId.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 180)}.json`;
}

function saveSet(folder: string, histories: FetchedHistory[]): void {
  mkdirSync(folder, { recursive: true });
  const ids: string[] = [];
  for (const [index, { workflowId, history }] of histories.entries()) {
    const file = fileNameFor(workflowId, index);
    writeFileSync(path.join(folder, file), historyToJSON(history as Parameters<typeof historyToJSON>[0]));
    ids.push(`${file}\t${workflowId}\n`);
  }
  writeFileSync(path.join(folder, REPLAY_WORKFLOW_IDS_FILE), ids.join(''));
}

/** The first event a replay failure names (Core says `HistoryEvent(id: 5, ...)`, `EventId=5` or `event 5`). */
export function failedEventId(message: string): number | undefined {
  const match = /HistoryEvent\(id:\s*(\d+)/.exec(message) ?? /event(?:[ _]?id)?\s*[=:]?\s*(\d+)/i.exec(message);
  return match ? Number(match[1]) : undefined;
}

/** Core's own words from a replay failure (`[TMPRL1100] Nondeterminism error: ...`), without the wrapping. */
export function replayFailureReason(message: string): string {
  return /message: "((?:[^"\\]|\\.)*)"/.exec(message)?.[1] ?? message;
}

/**
 * Replays histories against the workflow code of this build: fetched from a cluster by `query`,
 * or a saved set (`from`). Never throws for a history that does not replay: it is in `failures`.
 */
export async function replayHistories(options: ReplayHistoriesOptions): Promise<ReplayReport> {
  if (!options.from && !options.client) throw new TypeError('replayHistories: give a client (and a query) to fetch from, or `from`, a saved set');
  const workflowBundle =
    options.workflowBundle ??
    (options.workflowsPath
      ? await bundleWorkflowCode({ workflowsPath: path.resolve(options.workflowsPath), plugins: [new TurnpikePlugin()], logger: quietBundlerLogger })
      : await bundleWorkflows());
  const saved = options.save ? [] : undefined;
  const histories = options.from ? savedHistories(options.from) : fetchHistories(options.client!, options, saved);
  const checked: ReplayedHistory[] = [];
  const runIds = new Map<string, string | undefined>();
  async function* named() {
    for await (const { workflowId, runId, history } of histories) {
      runIds.set(workflowId, runId);
      yield { workflowId, history };
    }
  }
  try {
    for await (const result of Worker.runReplayHistories(
      { workflowBundle, ...(options.dataConverter ? { dataConverter: options.dataConverter } : options.client ? { dataConverter: options.client.options.dataConverter } : {}) },
      named(),
    )) {
      const runId = runIds.get(result.workflowId);
      const reason = result.error ? replayFailureReason(result.error instanceof Error ? result.error.message : String(result.error)) : undefined;
      const eventId = reason !== undefined ? failedEventId(reason) : undefined;
      const replayed: ReplayedHistory = { workflowId: result.workflowId, ...(runId ? { runId } : {}), ok: !result.error, ...(eventId !== undefined ? { eventId } : {}), ...(reason !== undefined ? { reason } : {}) };
      checked.push(replayed);
      options.onResult?.(replayed);
    }
  } finally {
    if (options.save && saved) saveSet(options.save, saved);
  }
  return { checked, failures: checked.filter((result) => !result.ok) };
}
