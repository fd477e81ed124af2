/**
 * Replay: every recorded history (test/replay/histories/<set>/, from `npm run
 * record-histories -- <set>`) must replay against today's workflow code. A change that would break turns already running
 * or parked — reordered commands, a new activity before an old one — fails here.
 */
import { cpSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { describe, expect, inject, it } from 'vitest';
import { turnpikeDataConverter } from '../../content/data-converter.js';
import { AGENT_TOOLS_PATCH, CHILD_TOOL_CALLS_PATCH } from '../../workflows/agents/agent-tool-call.js';
import { BUDGETS_PATCH } from '../../workflows/turn/budget-gate.js';
import { BOUNDED_POLL_PATCH } from '../../workflows/stream/event-stream.js';
import { HANDOFFS_PATCH } from '../../workflows/agents/handoff-tools.js';
import { ANTHROPIC_CONSTRAINTS_PATCH, TYPED_OUTPUT_PATCH } from '../../workflows/agents/typed-output.js';
import { HISTORY_LIMIT_FLOOR_PATCH, TURN_HAND_OVER_PATCH } from '../../workflows/turn/turn-hand-over.js';
import { MCP_APPROVAL_PATCH } from '../../workflows/turn/provider-approval.js';
import { BRANCHES_PATCH } from '../../workflows/conversation/conversation-branches.js';
import { TENANT_BUDGETS_PATCH } from '../../workflows/turn/tenant-budget-gate.js';
import { GRADERS_PATCH } from '../../workflows/evaluation/grader-types.js';
import { APPROVERS_PATCH } from '../../workflows/context/approver-values.js';
import { REMOTE_CANCEL_PATCH } from '../../workflows/turn/cancel-running-calls.js';
import { HISTORIES_DIRECTORY, WORKFLOW_IDS_FILE } from '../support/history-recorder.js';

const PRE_RELEASE_HISTORY = fileURLToPath(new URL('../replay/pre-release/update-after-local-activity.json.gz', import.meta.url));

try {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
} catch {
  // Already installed in this process.
}

const files = readdirSync(HISTORIES_DIRECTORY, { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.json'))
  .sort();

/** The workflow ids a set's histories were recorded under, by file; a set without them replays under file names. */
function workflowIdsOf(set: string): Map<string, string> {
  let lines: string[];
  try {
    lines = readFileSync(path.join(HISTORIES_DIRECTORY, set, WORKFLOW_IDS_FILE), 'utf8').split('\n').filter(Boolean);
  } catch {
    return new Map();
  }
  return new Map(lines.map((line) => line.split('\t') as [string, string]).map(([file, id]) => [path.join(set, file), id]));
}

function loadHistory(file: string): unknown {
  return JSON.parse(readFileSync(path.join(HISTORIES_DIRECTORY, file), 'utf8'));
}

describe('replay of recorded histories', () => {
  it('has recorded histories of the main scenarios, parked ones and conversations included', () => {
    expect(files.length).toBeGreaterThanOrEqual(100);
    expect(files.some((file) => file.includes('conversation--'))).toBe(true);
    expect(files.some((file) => file.includes('--parked'))).toBe(true);
    expect(files.some((file) => file.includes('does-not-finish-ends-the-turn-as-max-tokens'))).toBe(true);
  });

  it('records no patch marker and no TemporalChangeVersion in any turn or conversation of the baseline', () => {
    const baseline = files.filter((file) => file.startsWith(`0.1.0${path.sep}`));
    expect(baseline.length).toBeGreaterThanOrEqual(100);
    const patched = baseline.filter((file) => {
      const text = readFileSync(path.join(HISTORIES_DIRECTORY, file), 'utf8');
      return text.includes('core_patch') || text.includes('TemporalChangeVersion');
    });
    expect(patched).toEqual([]);
  });

  it('records, after the baseline, only the patches docs/versioning.md lists', () => {
    const recorded = new Set<string>();
    for (const file of files.filter((name) => !name.startsWith(`0.1.0${path.sep}`))) {
      const { events } = loadHistory(file) as { events: Array<{ markerRecordedEventAttributes?: { markerName?: string; details?: Record<string, { payloads: Array<{ data: string }> }> } }> };
      for (const marker of events.map((event) => event.markerRecordedEventAttributes).filter((attributes) => attributes?.markerName === 'core_patch')) {
        recorded.add((JSON.parse(Buffer.from(marker!.details!['patch-data']!.payloads[0]!.data, 'base64').toString('utf8')) as { id: string }).id);
      }
    }
    expect([...recorded].sort()).toEqual([BOUNDED_POLL_PATCH, TURN_HAND_OVER_PATCH, TYPED_OUTPUT_PATCH, BUDGETS_PATCH, AGENT_TOOLS_PATCH, HANDOFFS_PATCH, CHILD_TOOL_CALLS_PATCH, ANTHROPIC_CONSTRAINTS_PATCH, MCP_APPROVAL_PATCH, BRANCHES_PATCH, '0.4.0-approval-quorum', '0.4.0-approval-escalation', '0.4.0-approval-delegation', '0.4.0-slack-messages', HISTORY_LIMIT_FLOOR_PATCH, TENANT_BUDGETS_PATCH, GRADERS_PATCH, APPROVERS_PATCH, REMOTE_CANCEL_PATCH].sort());
    const versioning = readFileSync(fileURLToPath(new URL('../../docs/versioning.md', import.meta.url)), 'utf8');
    for (const patch of recorded) expect(versioning).toContain(`| \`${patch}\` |`);
  });

  it('records no local activity: their results can reach the code a workflow task later than their marker (docs/versioning.md)', () => {
    const withMarkers = files.filter((file) => readFileSync(path.join(HISTORIES_DIRECTORY, file), 'utf8').includes('core_local_activity'));
    expect(withMarkers).toEqual([]);
  });

  it('refuses a pre-release history with a nondeterminism error instead of running it on other commands', async () => {
    // Recorded by pre-release code, with local activities: a reader's poll accepted in the task
    // after a local activity's marker (Core answered a query while the result was pending).
    const history = JSON.parse(gunzipSync(readFileSync(PRE_RELEASE_HISTORY)).toString('utf8'));
    await expect(
      Worker.runReplayHistory({ workflowBundle: { codePath: inject('workflowBundlePath') }, dataConverter: turnpikeDataConverter }, history, 'pre-release'),
    ).rejects.toThrow(/TMPRL1100|[Nn]ondeterminism/);
  });

  // One replay worker per set, not per history: every replay worker loads the bundle and its
  // source map again, and a thousand of them in one process exhaust the source-map library's
  // WebAssembly memory (it then traps with "unreachable" while formatting a workflow's error,
  // and the replay fails for a reason that has nothing to do with determinism).
  const sets = [...new Set(files.map((file) => file.split(/[\\/]/)[0]))];
  it.each(sets)('replays every history of %s', async (set) => {
    const inSet = files.filter((file) => file.split(/[\\/]/)[0] === set);
    const workflowIds = workflowIdsOf(set);
    async function* histories() {
      for (const file of inSet) yield { workflowId: workflowIds.get(file) ?? file, history: loadHistory(file) };
    }
    const failures: string[] = [];
    let replayed = 0;
    for await (const result of Worker.runReplayHistories({ workflowBundle: { codePath: inject('workflowBundlePath') }, dataConverter: turnpikeDataConverter }, histories())) {
      replayed++;
      if (result.error) failures.push(`${result.workflowId}: ${result.error instanceof Error ? result.error.message : String(result.error)}`);
    }
    expect(failures).toEqual([]);
    expect(replayed).toBe(inSet.length);
  });

  it('replays a turn whose upserts carry no TurnpikeApprovers, or other values, as a worker from before the attribute recorded it', async () => {
    // TurnpikeApprovers rides on upserts turns made before it existed (docs/versioning.md, 0.5.0-approvers-attribute):
    // replay must compare an upsert's place, not its content.
    const carrying = files.filter((file) => file.startsWith(`0.5.0-approvers-attribute${path.sep}approvers-attribute--`) && !file.includes('--parked') && !file.includes('escalation'));
    expect(carrying.length).toBeGreaterThan(0);
    for (const file of carrying) {
      const original = JSON.stringify(loadHistory(file));
      expect(original).toContain('TurnpikeApprovers');
      type Upsert = { upsertWorkflowSearchAttributesEventAttributes?: { searchAttributes?: { indexedFields?: Record<string, { data?: string }> } } };
      const rewrite = (change: (fields: Record<string, { data?: string }>) => void) => {
        const history = JSON.parse(original) as { events: Upsert[] };
        for (const event of history.events) {
          const fields = event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields;
          if (fields?.TurnpikeApprovers) change(fields);
        }
        return history;
      };
      const without = rewrite((fields) => delete fields.TurnpikeApprovers);
      const other = rewrite((fields) => (fields.TurnpikeApprovers!.data = Buffer.from('["user:someone-else"]').toString('base64')));
      const options = { workflowBundle: { codePath: inject('workflowBundlePath') }, dataConverter: turnpikeDataConverter };
      await Worker.runReplayHistory(options, without, `${file}-without`);
      await Worker.runReplayHistory(options, other, `${file}-other`);
    }
  });

  it('replays a turn whose upserts carry no TurnpikeNextExpiry, or another instant, as a worker from before the attribute recorded it', async () => {
    // TurnpikeNextExpiry rides on the upserts turns made before it existed (docs/versioning.md, 0.5.0-next-expiry-attribute).
    const carrying = files.filter((file) => file.startsWith(`0.5.0-next-expiry-attribute${path.sep}expiry-pages--`) && readFileSync(path.join(HISTORIES_DIRECTORY, file), 'utf8').includes('TurnpikeNextExpiry'));
    expect(carrying.length).toBeGreaterThan(0);
    const options = { workflowBundle: { codePath: inject('workflowBundlePath') }, dataConverter: turnpikeDataConverter };
    for (const file of carrying) {
      const original = JSON.stringify(loadHistory(file));
      type Upsert = { upsertWorkflowSearchAttributesEventAttributes?: { searchAttributes?: { indexedFields?: Record<string, { data?: string }> } } };
      const rewrite = (change: (fields: Record<string, { data?: string }>) => void) => {
        const history = JSON.parse(original) as { events: Upsert[] };
        for (const event of history.events) {
          const fields = event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields;
          if (fields?.TurnpikeNextExpiry) change(fields);
        }
        return history;
      };
      await Worker.runReplayHistory(options, rewrite((fields) => delete fields.TurnpikeNextExpiry), `${file}-without`);
      await Worker.runReplayHistory(options, rewrite((fields) => (fields.TurnpikeNextExpiry!.data = Buffer.from('"2000-01-01T00:00:00Z"').toString('base64'))), `${file}-other`);
    }
  });

  it('fails on a deliberately non-deterministic change to the workflow', async () => {
    // A copy of workflows/ where the turn starts with a timer it did not have when recorded.
    const root = fileURLToPath(new URL('../../', import.meta.url));
    const copy = path.join(root, '.turnpike', `nondeterministic-${process.pid}`);
    rmSync(copy, { recursive: true, force: true });
    mkdirSync(copy, { recursive: true });
    cpSync(path.join(root, 'workflows'), path.join(copy, 'workflows'), { recursive: true });
    const turnFile = path.join(copy, 'workflows', 'turn', 'agent-turn.ts');
    const source = readFileSync(turnFile, 'utf8');
    const changed = source.replace('validateInput(turn.input);', "validateInput(turn.input);\n  await wf.sleep('1s');");
    expect(changed).not.toBe(source);
    writeFileSync(turnFile, changed);
    try {
      const { code } = await bundleWorkflowCode({ workflowsPath: path.join(copy, 'workflows', 'index.ts'), logger: new DefaultLogger('ERROR') });
      const parked = files.find((file) => file.includes('--parked'))!;
      await expect(Worker.runReplayHistory({ workflowBundle: { code } }, loadHistory(parked), parked)).rejects.toThrow(/[Nn]ondeterminism/);
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });
});
