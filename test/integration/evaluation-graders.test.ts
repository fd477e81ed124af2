/**
 * Graders of an evaluation run on the dev server (docs/evaluations.md, "Graders"): functions
 * registered on the evaluation worker by name and model graders with a rubric (scripted models),
 * each evaluated turn graded, each grader totalled; a grader that throws, answers no verdict or is
 * not registered is an error grade and the run goes on; bad grader specs are refused before
 * anything starts. A run without graders records no patch marker; one with graders does.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerScript, scriptRequests } from '../../activities/providers/script.js';
import type { TurnpikeClient } from '../../client/turnpike-client.js';
import type { EvaluationReport, GraderInput } from '../../workflows/evaluation/evaluation-types.js';
import { GRADERS_PATCH, type ModelGraderSpec } from '../../workflows/evaluation/grader-types.js';
import { cliRunner } from '../support/cli-runner.js';
import { startEvaluationHarness, type EvaluationHarness } from '../support/evaluation-harness.js';
import { executions, testTools, use } from '../support/test-tools.js';

let harness: EvaluationHarness;
let client: Client;
let turnpike: TurnpikeClient;
let turnIds: string[];
/** What the function graders were given, by grader and evaluated turn. */
const given: Array<{ grader: string; input: GraderInput }> = [];

const graders = {
  /** 1 when the final text is the original's, else 0; its comment is the evaluated turn's status. */
  sameText: (input: GraderInput) => {
    given.push({ grader: 'sameText', input });
    return { score: input.original.text === input.evaluated.text ? 1 : 0, comment: input.evaluated.status };
  },
  /** Throws on the first recorded turn; 0.25 elsewhere (a fail: under 0.5, no `pass` of its own). */
  flaky: (input: GraderInput) => {
    if (input.turnId === turnIds[0]) throw new Error('flaky grader broke');
    return { score: 0.25 };
  },
  /** Passes any turn that completed, whatever its score. */
  completed: async (input: GraderInput) => ({ score: 0.1, pass: input.evaluated.status === 'completed' }),
};

const scripted = (text: string) => ({ provider: 'scripted' as const, model: registerScript([{ type: 'text', text }]) });

const start: EvaluationHarness['start'] = (text, extra) => harness.start(text, extra);
const finished: EvaluationHarness['finished'] = (evaluationId) => harness.finished(evaluationId);

/** Whether a workflow's history holds the graders' patch marker. */
async function hasGradersMarker(workflowId: string): Promise<boolean> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? []).some((event) => {
    const data = event.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0]?.data;
    return event.markerRecordedEventAttributes?.markerName === 'core_patch' && data != null && (JSON.parse(Buffer.from(data).toString('utf8')) as { id: string }).id === GRADERS_PATCH;
  });
}

beforeAll(async () => {
  harness = await startEvaluationHarness('eval-graders', { tools: testTools, evaluation: { graders } });
  ({ client, turnpike, turnIds } = harness);
  const handles = [await start(use('record_action', { action: 'g1' })), await start(use('record_action', { action: 'g2' }))];
  handles.push(
    await start('answer with {"refund":250,"reason":"late"}', {
      output: { schema: { type: 'object', properties: { refund: { type: 'number' }, reason: { type: 'string' } }, required: ['refund', 'reason'] } },
    }),
  );
  const results = await Promise.all(handles.map((handle) => handle.result()));
  expect(results.map((result) => result.status)).toEqual(['completed', 'completed', 'completed']);
}, 120_000);

afterAll(async () => {
  await harness?.stop();
});

describe('graders of an evaluation run', () => {
  it('grades each turn with registered functions and a model with a rubric: exact grades and totals, a throwing grader an error', async () => {
    const effects = executions.length;
    const judge: ModelGraderSpec = { name: 'judge', rubric: 'Score 1 when the evaluated turn did what the original did.', model: scripted('{"score":0.8,"reason":"Same action, same answer."}'), passScore: 0.9 };
    const { evaluationId } = await turnpike.evaluate({ turnIds, change: { system: 'Be brief.' }, graders: ['sameText', 'flaky', judge, 'completed'], concurrency: 3 });
    const report = await finished(evaluationId);
    expect(report.totals).toMatchObject({ turns: 3, errors: 0, textChanged: 0, replayed: 2 });
    const byTurn = new Map(report.rows.map((row) => [row.turnId, row.grades]));
    expect(byTurn.get(turnIds[0])).toEqual([
      { grader: 'sameText', score: 1, pass: true, comment: 'completed' },
      { grader: 'flaky', error: 'the grader threw: flaky grader broke' },
      { grader: 'judge', score: 0.8, pass: false, comment: 'Same action, same answer.', tokens: expect.any(Number) },
      { grader: 'completed', score: 0.1, pass: true },
    ]);
    for (const turnId of turnIds.slice(1)) expect(byTurn.get(turnId)?.map((grade) => [grade.grader, grade.score, grade.pass])).toEqual([['sameText', 1, true], ['flaky', 0.25, false], ['judge', 0.8, false], ['completed', 0.1, true]]);
    const judgeTokens = report.rows.reduce((sum, row) => sum + (row.grades?.[2].tokens ?? 0), 0);
    expect(judgeTokens).toBeGreaterThan(0);
    expect(report.totals.graders).toEqual({
      sameText: { graded: 3, meanScore: 1, passes: 3, fails: 0, errors: 0, tokens: 0 },
      flaky: { graded: 2, meanScore: 0.25, passes: 0, fails: 2, errors: 1, tokens: 0 },
      judge: { graded: 3, meanScore: 0.8, passes: 0, fails: 3, errors: 0, tokens: judgeTokens },
      completed: { graded: 3, meanScore: 0.1, passes: 3, fails: 0, errors: 0, tokens: 0 },
    });
    // The function graders were given both results and the row; the typed turn's output among them.
    const typed = given.find((entry) => entry.input.turnId === turnIds[2])!.input;
    expect(typed.original.output).toEqual({ refund: 250, reason: 'late' });
    expect(typed.evaluated.output).toEqual({ refund: 250, reason: 'late' });
    expect(typed.row).toMatchObject({ turnId: turnIds[2], textChanged: false, output: { valid: true, changedFields: [] } });
    expect(typed.request).toBe('answer with {"refund":250,"reason":"late"}');
    // The model grader was asked with the request and both turns.
    const [asked] = scriptRequests(judge.model.model).flat();
    expect(asked.role).toBe('user');
    const prompt = String(asked.content);
    expect(prompt).toMatch(/^## The request\n/);
    expect(prompt).toContain('## The original turn\nStatus: completed');
    expect(prompt).toContain('## The evaluated turn\nStatus: completed');
    expect(executions.length).toBe(effects);
    expect(await hasGradersMarker(evaluationId)).toBe(true);
  });

  it('reports an unregistered grader and a model that answers no verdict as errors of every turn, and goes on', async () => {
    const model = registerScript([[{ type: 'tool-call', toolName: 'record_action', input: { action: 'g1' } }], { type: 'text', text: 'changed' }]);
    const { evaluationId } = await turnpike.evaluate({
      turnIds: turnIds.slice(0, 2),
      change: { model: { provider: 'scripted', model } },
      graders: ['sameText', 'nope', { name: 'prose', rubric: 'Any.', model: scripted('Looks fine to me.') }, { name: 'wide', rubric: 'Any.', model: scripted('{"score":1.5,"reason":"too good"}') }],
    });
    const report = await finished(evaluationId);
    expect(report.status).toBe('completed');
    expect(report.totals).toMatchObject({ turns: 2, errors: 0, textChanged: 2 });
    for (const row of report.rows) {
      expect(row.grades).toEqual([
        { grader: 'sameText', score: 0, pass: false, comment: 'completed' },
        { grader: 'nope', error: 'no grader named "nope" is registered on the evaluation worker (registered: sameText, flaky, completed)' },
        { grader: 'prose', error: 'the model answered no verdict: not JSON: "Looks fine to me."', tokens: expect.any(Number) },
        { grader: 'wide', error: 'the model answered no verdict: score 1.5 is not a number from 0 to 1', tokens: expect.any(Number) },
      ]);
    }
    expect(report.totals.graders).toMatchObject({
      sameText: { graded: 2, meanScore: 0, passes: 0, fails: 2, errors: 0 },
      nope: { graded: 0, passes: 0, fails: 0, errors: 2, tokens: 0 },
      prose: { graded: 0, errors: 2 },
      wide: { graded: 0, errors: 2 },
    });
    expect(report.totals.graders!.nope.meanScore).toBeUndefined();
  });

  it('sends the commands it sent before when given no graders: no grades, no marker', async () => {
    const { evaluationId } = await turnpike.evaluate({ turnIds: turnIds.slice(0, 1), change: {}, graders: [] });
    const report = await finished(evaluationId);
    expect(report.rows[0].grades).toBeUndefined();
    expect(report.totals.graders).toBeUndefined();
    expect(await hasGradersMarker(evaluationId)).toBe(false);
    const history = await client.workflow.getHandle(evaluationId).fetchHistory();
    const activities = (history.events ?? []).flatMap((event) => (event.activityTaskScheduledEventAttributes ? [event.activityTaskScheduledEventAttributes.activityType?.name] : []));
    expect(activities).toEqual(['prepareEvaluationTurn', 'compareEvaluationTurn']);
  });

  it('refuses bad grader specs before anything starts', async () => {
    const model = { provider: 'scripted' as const, model: 'demo' };
    const refused: Array<[unknown, RegExp]> = [
      ['sameText', /graders must be an array/],
      [['same text'], /graders\[0\]: a grader's name must match/],
      [['sameText', 'sameText'], /graders\[1\]: the grader name "sameText" is used twice/],
      [['a', 'b', 'c', 'd', 'e'], /at most 4 graders per evaluation, not 5/],
      [[{ name: 'j', rubric: ' ', model }], /graders\[0\]\.rubric must be a non-empty string/],
      [[{ name: 'j', rubric: 'r' }], /graders\[0\]\.model must be \{ provider, model \}/],
      [[{ name: 'j', rubric: 'r', model: { provider: 'nope', model: 'x' } }], /graders\[0\]\.model\.provider must be one of/],
      [[{ name: 'j', rubric: 'r', model, passScore: 2 }], /graders\[0\]\.passScore must be a number from 0 to 1/],
      [[{ name: 'j', rubric: 'r', model, temperature: 0 }], /graders\[0\]: unknown field temperature/],
      [[42], /graders\[0\] must be a grader's name or/],
    ];
    for (const [graders, message] of refused) {
      const evaluationId = `eval-refused-${randomUUID()}`;
      await expect(turnpike.evaluate({ turnIds, change: {}, graders: graders as never, evaluationId })).rejects.toThrow(message);
      await expect(client.workflow.getHandle(evaluationId).describe()).rejects.toThrow(/not found/i);
    }
  });

  it('shows the grades in the CLI table and JSON', async () => {
    const { cli, cliJson } = cliRunner(() => turnpike);
    const report = await cliJson<EvaluationReport>('eval', '--turns', turnIds.slice(0, 2).join(','), '--graders', 'sameText,flaky', '--interval', '200');
    expect(report.totals.graders).toEqual({
      sameText: { graded: 2, meanScore: 1, passes: 2, fails: 0, errors: 0, tokens: 0 },
      flaky: { graded: 1, meanScore: 0.25, passes: 0, fails: 1, errors: 1, tokens: 0 },
    });
    const table = await cli('eval-report', report.evaluationId);
    expect(table.code, table.stderr).toBe(0);
    const lines = table.stdout.split('\n');
    expect(lines[1]).toMatch(/tokens\s+sameText\s+flaky$/);
    expect(lines.find((line) => line.startsWith(turnIds[0]))).toMatch(/1\.00 pass\s+error$/);
    expect(lines.find((line) => line.startsWith(turnIds[1]))).toMatch(/1\.00 pass\s+0\.25 fail$/);
    expect(lines).toContain('grader sameText: mean 1.00, 2 passed, 0 failed, 0 errors');
    expect(lines).toContain('grader flaky: mean 0.25, 0 passed, 1 failed, 1 errors');
    const refused = await cli('eval', '--turns', turnIds[0], '--rubric', 'Any.');
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/--rubric and --rubric-model go together/);
  });
});
