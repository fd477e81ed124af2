/**
 * Evaluation runs on the dev server (docs/evaluations.md): ten turns recorded with the demo model
 * (plain calls, two approved and one denied approval, a typed answer, a client tool, a safe tool),
 * then evaluated twice on the evaluation worker: with a change the demo model ignores (every call
 * answered from its record, every decision from its record) and with a script that proposes other
 * calls (counts exactly what the script implies). No tool's effect happens in either, but the
 * safe tool's, for calls it has no record of.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { registerScript } from '../../activities/providers/script.js';
import { defineTool } from '../../activities/tools.js';
import type { TurnpikeClient } from '../../client/turnpike-client.js';
import { approveToolCallUpdate, submitToolResultUpdate } from '../../workflows/messages/definitions.js';
import type { EvaluationReport } from '../../workflows/evaluation/evaluation-types.js';
import { noteStarted } from '../support/history-recorder.js';
import { startEvaluationHarness, type EvaluationHarness } from '../support/evaluation-harness.js';
import { waitForPending } from '../support/turnpike-harness.js';
import { cliRunner } from '../support/cli-runner.js';
import type { turnpikeEvaluation } from '../../workflows/registered-workflows.js';
import { executions, testTools, use } from '../support/test-tools.js';

/** A read-only tool, marked safe to run in evaluation: its runs are counted. */
const stockReads: string[] = [];
const readStock = defineTool({
  name: 'read_stock',
  description: 'Reads the stock of a SKU.',
  inputSchema: z.object({ sku: z.string() }),
  async execute({ sku }) {
    stockReads.push(sku);
    return { sku, inStock: 3 };
  },
});

let harness: EvaluationHarness;
let client: Client;
let turnpike: TurnpikeClient;
let taskQueue: string;
let turnIds: string[];
let typedTurnId: string;

const start: EvaluationHarness['start'] = (text, extra) => harness.start(text, extra);
const finished: EvaluationHarness['finished'] = (evaluationId) => harness.finished(evaluationId);

async function decide(text: string, approved: boolean) {
  const handle = await start(text);
  const [pending] = await waitForPending(handle, 1);
  await handle.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: pending.approvalId!, approved, approver: 'alice', reason: approved ? 'fine' : 'no' }] });
  return handle;
}

/** Temporal's priority on a workflow's start, from its history (what its tasks are dispatched with). */
async function startedPriority(workflowId: string) {
  const { events } = await client.workflow.getHandle(workflowId).fetchHistory();
  const priority = events?.[0]?.workflowExecutionStartedEventAttributes?.priority;
  return { priorityKey: priority?.priorityKey ?? 0, fairnessKey: priority?.fairnessKey ?? '' };
}

beforeAll(async () => {
  harness = await startEvaluationHarness('eval', { tools: [...testTools, readStock], evaluation: { safeTools: ['read_stock'] } });
  ({ client, turnpike, taskQueue, turnIds } = harness);

  const handles = await Promise.all([1, 2, 3, 4].map((n) => start(use('record_action', { action: `a${n}` }))));
  handles.push(await decide(use('guarded_action', { target: 'abc1', count: 1 }), true));
  handles.push(await decide(use('guarded_action', { target: 'abc2', count: 1 }), true));
  handles.push(await decide(use('guarded_action', { target: 'den', count: 2 }), false));
  const typed = await start('answer with {"refund":250,"reason":"late"}', {
    output: { schema: { type: 'object', properties: { refund: { type: 'number' }, reason: { type: 'string' } }, required: ['refund', 'reason'] } },
  });
  typedTurnId = typed.workflowId;
  handles.push(typed);
  const colour = await start(use('pick_colour', { options: ['red', 'green'] }));
  const [clientCall] = await waitForPending(colour, 1);
  await colour.executeUpdate(submitToolResultUpdate, { args: [{ toolCallId: clientCall.toolCallId, output: { colour: 'red' } }] });
  handles.push(colour);
  handles.push(await start(use('read_stock', { sku: 's1' })));
  const results = await Promise.all(handles.map((handle) => handle.result()));
  expect(results.map((result) => result.status)).toEqual(Array(10).fill('completed'));
}, 120_000);

afterAll(async () => {
  await harness?.stop();
});

describe('evaluating recorded turns', () => {
  it('answers every call from its record and every approval from its decision when the change proposes the same calls', async () => {
    const effects = executions.length;
    const reads = stockReads.length;
    const { evaluationId, turns } = await turnpike.evaluate({ turnIds, change: { system: 'Be brief.' }, concurrency: 3 });
    expect(turns).toBe(10);
    const report = await finished(evaluationId);
    // Batch priority by default, the run's and (inherited) its turns': an evaluation never goes before production turns.
    expect(await startedPriority(evaluationId)).toEqual({ priorityKey: 5, fairnessKey: '' });
    expect(await startedPriority(report.rows[0]!.evaluationTurnId)).toEqual({ priorityKey: 5, fairnessKey: '' });
    expect(report.status).toBe('completed');
    expect(report.rows).toHaveLength(10);
    expect(report.totals).toMatchObject({
      turns: 10,
      errors: 0,
      textChanged: 0,
      outputInvalid: 0,
      toolCalls: { same: 9, differentInput: 0, new: 0, missing: 0 },
      // Four record_action, two approved guarded_action, the client's pick_colour, read_stock.
      replayed: 8,
      ranSafe: 0,
      notRun: 0,
      wouldAsk: 0,
      denials: 1,
      original: { approvalsAsked: 3, denials: 1 },
    });
    const typed = report.rows.find((row) => row.turnId === typedTurnId)!;
    expect(typed.output).toEqual({ valid: true, changedFields: [] });
    // Nothing ran: not the tools with effects, not even the safe one (its call had a record).
    expect(executions.length).toBe(effects);
    expect(stockReads.length).toBe(reads);
  });

  it('counts what a script proposing other calls implies: not run, would ask, ran safe, new and missing', async () => {
    const effects = executions.length;
    const reads = stockReads.length;
    const model = registerScript([
      [
        { type: 'tool-call', toolName: 'record_action', input: { action: 'a1' } },
        { type: 'tool-call', toolName: 'guarded_action', input: { target: 'abc1', count: 1 } },
        { type: 'tool-call', toolName: 'read_stock', input: { sku: 's2' } },
      ],
      { type: 'text', text: 'changed' },
    ]);
    const untyped = turnIds.filter((id) => id !== typedTurnId);
    const { evaluationId } = await turnpike.evaluate({ turnIds: untyped, change: { model: { provider: 'scripted', model } }, concurrency: 4 });
    const report = await finished(evaluationId);
    expect(report.totals).toMatchObject({
      turns: 9,
      errors: 0,
      textChanged: 9,
      // record_action a1: the same in turn 1, another input in turns 2–4, new in the other five;
      // guarded_action abc1: the same in turn 5, another input in turns 6–7, new in six;
      // read_stock s2: another input in the read_stock turn, new in eight. pick_colour: missing.
      toolCalls: { same: 2, differentInput: 6, new: 19, missing: 1 },
      // Turn 1's record_action and turn 5's approved guarded_action, from their records.
      replayed: 2,
      ranSafe: 9,
      notRun: 8,
      wouldAsk: 8,
      denials: 0,
    });
    expect(executions.length).toBe(effects);
    expect(stockReads.slice(reads)).toEqual(Array(9).fill('s2'));
    // The unmatched unsafe call's result says so.
    const row = report.rows.find((candidate) => candidate.turnId === turnIds[1])!;
    const evaluated = await turnpike.turnResult(row.evaluationTurnId);
    const recordCall = evaluated.toolCalls.find((call) => call.toolName === 'record_action')!;
    expect(recordCall).toMatchObject({ isError: true });
    expect(String(recordCall.output)).toMatch(/^not run in evaluation: "record_action" has no recorded result/);
    const guarded = evaluated.toolCalls.find((call) => call.toolName === 'guarded_action')!;
    expect(guarded).toMatchObject({ outcome: 'denied', approval: { reason: 'evaluation: would ask a person' } });
  });

  it('forks each turn after step k: the calls of steps 1..k are carried, none compared or run again', async () => {
    const effects = executions.length;
    // The two approved guarded_action turns and the denied one: step 1 the call, step 2 the answer.
    const guarded = turnIds.slice(4, 7);
    const { evaluationId } = await turnpike.evaluate({ turnIds: guarded, change: { system: 'Again.' }, fromStep: 1, tenant: 'eval-acme' });
    const report = await finished(evaluationId);
    // For a tenant: the run and, inherited, each evaluation turn run at batch priority with the tenant's fairness key.
    expect(await startedPriority(evaluationId)).toEqual({ priorityKey: 5, fairnessKey: 'eval-acme' });
    for (const row of report.rows) expect(await startedPriority(row.evaluationTurnId)).toEqual({ priorityKey: 5, fairnessKey: 'eval-acme' });
    expect(report.totals).toMatchObject({ turns: 3, errors: 0, textChanged: 0, toolCalls: { same: 0, differentInput: 0, new: 0, missing: 0 }, replayed: 0, wouldAsk: 0, denials: 0, original: { approvalsAsked: 0 } });
    for (const row of report.rows) expect((await turnpike.turnResult(row.evaluationTurnId)).steps).toBe(1);
    expect(executions.length).toBe(effects);
  });

  it('continues as new past its turns per run, each turn evaluated once', async () => {
    const evaluationId = `eval-can-${randomUUID()}`;
    const handle = await client.workflow.start<typeof turnpikeEvaluation>('turnpikeEvaluation', {
      taskQueue: `${taskQueue}-eval`,
      workflowId: evaluationId,
      args: [{ evaluationId, turnIds: turnIds.slice(0, 5), change: {}, concurrency: 2, turnsPerRun: 2 }],
    });
    noteStarted(handle);
    const report = await handle.result();
    expect(report.rows.map((row) => row.evaluationTurnId).sort()).toEqual([0, 1, 2, 3, 4].map((index) => `${evaluationId}/${index}`));
    expect(report.totals).toMatchObject({ turns: 5, errors: 0, replayed: 5, textChanged: 0 });
    // Three runs: 2 + 2 + 1 turns.
    const runs = new Set<string>();
    for await (const execution of client.workflow.list({ query: `WorkflowId = "${evaluationId}"` })) runs.add(execution.runId);
    expect(runs.size).toBe(3);
  });

  it('runs from the CLI and prints the report as a table or as JSON', async () => {
    const { cli, cliJson } = cliRunner(() => turnpike);
    const report = await cliJson<EvaluationReport>('eval', '--turns', turnIds.slice(0, 2).join(','), '--system', 'CLI', '--interval', '200');
    expect(report.totals).toMatchObject({ turns: 2, replayed: 2, textChanged: 0 });
    const table = await cli('eval-report', report.evaluationId);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toContain(`Evaluation ${report.evaluationId}`);
    expect(table.stdout).toMatch(/total \(2\/2\)\s+completed\s+0 changed/);
    const missing = await cli('eval-report', 'eval-nothing-here');
    expect(missing.code).not.toBe(0);
  });

  it('refuses a bad request before starting anything', async () => {
    await expect(turnpike.evaluate({ turnIds: [], change: {} })).rejects.toThrow(/no turns to evaluate/);
    await expect(turnpike.evaluate({ turnIds, query: 'x', change: {} })).rejects.toThrow(/exactly one of query and turnIds/);
    await expect(turnpike.evaluate({ turnIds, change: {}, evaluationId: 'a/b' })).rejects.toThrow(/without "\/"/);
    await expect(turnpike.evaluationReport(`eval-missing-${randomUUID()}`)).rejects.toThrow(/not found/);
  });
});
