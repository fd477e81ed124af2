/**
 * Records workflow histories for the replay tests. With RECORD_HISTORIES=<set> (see
 * scripts/record-histories.sh), every turn an integration test starts is saved under
 * test/replay/histories/<set>/ when the test file ends, and `snapshotParked` saves the history of a
 * turn while it is parked. Without it, nothing is written.
 */
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { WorkflowHandle } from '@temporalio/client';
import { expect, inject } from 'vitest';

/**
 * One folder per recorded set. Sets are append-only: each stands for histories that may still
 * be running somewhere, so today's code must replay every one of them.
 */
export const HISTORIES_DIRECTORY = fileURLToPath(new URL('../replay/histories/', import.meta.url));
/** Each set's `<history file>\t<workflow id>` lines (sets recorded before it replay under their file names). */
export const WORKFLOW_IDS_FILE = 'workflow-ids.tsv';
/** `RECORD_HISTORIES=<set name>` records into that set (`npm run record-histories -- <name>`). */
export const recording = Boolean(process.env.RECORD_HISTORIES);
const setDirectory = path.join(HISTORIES_DIRECTORY, process.env.RECORD_HISTORIES ?? 'unnamed');

const started: Array<{ name: string; handle: WorkflowHandle }> = [];
const snapshotted = new Set<string>();

function slug(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 90);
}

let label: string | undefined;

/** Names the turns started from a `beforeAll`, where vitest's current test name is stale. */
export function recordAs(name: string | undefined): void {
  label = name;
}

function currentName(): string {
  const state = expect.getState();
  if (label) return `${path.basename(state.testPath ?? 'unknown', '.test.ts')}--${slug(label)}`;
  const file = path.basename(state.testPath ?? 'unknown', '.test.ts');
  return `${file}--${slug(state.currentTestName ?? 'setup')}`;
}

async function save(name: string, handle: WorkflowHandle, runId?: string): Promise<void> {
  mkdirSync(setDirectory, { recursive: true });
  // The CLI writes the proto3 JSON that Worker.runReplayHistory reads (and that operators
  // download from the Web UI), without the SDK's protobuf classes.
  const { stdout } = await promisify(execFile)(
    inject('temporalCli'),
    ['workflow', 'show', '--workflow-id', handle.workflowId, ...(runId ? ['--run-id', runId] : []), '--address', inject('temporalAddress'), '-o', 'json'],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  writeFileSync(path.join(setDirectory, `${name}.json`), stdout);
  // A history does not name its workflow, and a turn's commands may (an agent tool's child turn is
  // `<turn id>/<toolCallId>`): the replay runs each history under the id it was recorded with.
  appendFileSync(path.join(setDirectory, WORKFLOW_IDS_FILE), `${name}.json\t${handle.workflowId}\n`);
}

/**
 * Saves every run of a workflow that continued as new, oldest first (`--run-1`, `--run-2`, ...):
 * the runs that handed over record what the last one does not.
 */
export async function saveRuns(handle: WorkflowHandle, runIds: readonly string[]): Promise<void> {
  if (!recording) return;
  for (const [index, runId] of runIds.entries()) await save(`${currentName()}--run-${index + 1}`, handle, runId);
}

export function noteStarted(handle: WorkflowHandle): void {
  if (recording && !started.some((entry) => entry.handle.workflowId === handle.workflowId)) started.push({ name: currentName(), handle });
}

/** Saves the history of a parked turn: what a worker replays when a decision arrives. */
export async function snapshotParked(handle: WorkflowHandle): Promise<void> {
  const name = `${currentName()}--parked`;
  if (!recording || snapshotted.has(name)) return;
  snapshotted.add(name);
  await save(name, handle);
}

/** Saves every started turn's history; call before the worker stops. */
export async function saveStarted(): Promise<void> {
  const seen = new Map<string, number>();
  for (const { name, handle } of started.splice(0)) {
    const count = (seen.get(name) ?? 0) + 1;
    seen.set(name, count);
    await save(count === 1 ? name : `${name}--${count}`, handle);
  }
}
