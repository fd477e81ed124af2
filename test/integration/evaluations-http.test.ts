/**
 * Evaluations over the HTTP API (docs/evaluations.md, "Over the HTTP API"), on the dev server with
 * the evaluation worker: a caller evaluates the turns it may read and reads the report; a listed
 * turn it may not read refuses the whole request with nothing started; a query takes only the
 * turns it may read; another caller cannot read its report (an admin can); bad bodies are 400s.
 * The dashboard's page of a run (`/?evaluation=<id>`) shows its report in Chromium.
 */
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import type { FastifyInstance } from 'fastify';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { registerScript } from '../../activities/providers/script.js';
import { parseTokenMap } from '../../api/auth.js';
import { buildApi } from '../../api/server.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { turnpikeGrpcRetryInterceptor } from '../../connection/query-retry.js';
import { turnpikeDataConverter } from '../../content/data-converter.js';
import { createWorker } from '../../worker/create-worker.js';
import type { EvaluationReport } from '../../workflows/evaluation/evaluation-types.js';
import { executions, testTools, use } from '../support/test-tools.js';

try {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
} catch {
  // Already installed in this process.
}

const taskQueue = `test-eval-http-${randomUUID()}`;
const TOKENS = { alice: 'alice-token', bob: 'bob-token', ops: 'ops-token' } as const;
type Who = keyof typeof TOKENS;
let connection: Connection;
let native: NativeConnection;
let client: Client;
let worker: Worker;
let running: Promise<void>;
let api: FastifyInstance;
let base: string;
const aliceTurns: string[] = [];
const bobTurns: string[] = [];
/** A turn of a conversation alice started: she reads it as the conversation's starter, not the turn's. */
let aliceConversationTurn: string;

/** What the routes answer: a start, a report, a listing or an error. */
interface Answer {
  evaluationId: string;
  turns: number;
  status: string;
  evaluations: Array<{ evaluationId: string; startedBy: string }>;
  error: { type: string; message: string };
}

async function call(who: Who, method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; body: Answer }> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKENS[who]}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: response.status, body: (await response.json()) as Answer };
}

/** Starts a turn through the API as `who`, recording `record_action` with `action`, and waits for it to end. */
async function recordedTurn(who: Who, action: string): Promise<string> {
  const turnId = `turn-${randomUUID()}`;
  const started = await call(who, 'POST', '/api/turns', { turnId, input: { model: { provider: 'scripted', model: 'demo' }, messages: [{ role: 'user', content: use('record_action', { action }) }] } });
  expect(started.status).toBe(201);
  return turnId;
}

/** The report, read through the API as `who` until the run is done. */
async function finished(who: Who, evaluationId: string): Promise<EvaluationReport> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const read = await call(who, 'GET', `/api/evaluations/${evaluationId}`);
    expect(read.status).toBe(200);
    if (read.body.status !== 'running') return read.body as unknown as EvaluationReport;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`evaluation ${evaluationId} did not finish`);
}

/** Evaluation runs started since `since` on this file's evaluation queue, from visibility (after it has caught up). */
async function evaluationsSince(since: Date): Promise<string[]> {
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const ids: string[] = [];
  for await (const execution of client.workflow.list({ query: `WorkflowType = "turnpikeEvaluation" AND TaskQueue = "${taskQueue}-eval" AND StartTime > "${since.toISOString()}"` })) ids.push(execution.workflowId);
  return ids;
}

beforeAll(async () => {
  connection = await Connection.connect({ address: inject('temporalAddress'), interceptors: [turnpikeGrpcRetryInterceptor()] });
  client = new Client({ connection, namespace: inject('temporalNamespace'), dataConverter: turnpikeDataConverter });
  native = await NativeConnection.connect({ address: inject('temporalAddress') });
  worker = await createWorker({
    tools: testTools,
    taskQueue,
    connection: native,
    namespace: inject('temporalNamespace'),
    workflowBundle: { codePath: inject('workflowBundlePath') },
    evaluation: {},
  });
  running = worker.run();
  api = await buildApi({
    client: new TurnpikeClient({ client, taskQueue }),
    tokens: parseTokenMap(Object.entries(TOKENS).map(([who, token]) => `${token}:${who}`).join(',')),
    access: { admins: ['ops'], adminGroups: [] },
  });
  base = await api.listen({ host: '127.0.0.1', port: 0 });
  aliceTurns.push(...(await Promise.all(['a1', 'a2', 'a3'].map((action) => recordedTurn('alice', action)))));
  bobTurns.push(...(await Promise.all(['b1', 'b2'].map((action) => recordedTurn('bob', action)))));
  const conversationId = `conv-${randomUUID()}`;
  const sent = await call('alice', 'POST', `/api/conversations/${conversationId}/messages`, { text: use('record_action', { action: 'c1' }), model: { provider: 'scripted', model: 'demo' } });
  expect(sent.status).toBe(202);
  aliceConversationTurn = `${conversationId}/turn-1`;
  for (let attempt = 0; attempt < 120; attempt++) {
    if ((await client.workflow.getHandle(aliceConversationTurn).describe().then((turn) => turn.status.name, () => 'absent')) === 'COMPLETED') break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  expect((await client.workflow.getHandle(aliceConversationTurn).result()).status).toBe('completed');
  const results = await Promise.all([...aliceTurns, ...bobTurns].map((turnId) => client.workflow.getHandle(turnId).result()));
  expect(results.map((result) => result.status)).toEqual(Array(5).fill('completed'));
}, 120_000);

afterAll(async () => {
  await api?.close();
  if (worker?.getState() === 'RUNNING') worker.shutdown();
  await running;
  await native?.close();
  await connection?.close();
});

describe('evaluations over the HTTP API', () => {
  let aliceEvaluation: string;

  it('evaluates the turns a caller lists and reads, with the counts its change implies and no effect', async () => {
    const effects = executions.length;
    // The changed model proposes record_action a1 in every turn: the same call as turn 1's, another input in turns 2 and 3.
    const model = registerScript([[{ type: 'tool-call', toolName: 'record_action', input: { action: 'a1' } }], { type: 'text', text: 'changed' }]);
    // A model grader with a rubric (docs/evaluations.md, "Graders"), answering one verdict for every turn.
    const judge = registerScript([{ type: 'text', text: '{"score":0.5,"reason":"Another action."}' }]);
    const since = new Date();
    const started = await call('alice', 'POST', '/api/evaluations', {
      turnIds: aliceTurns,
      change: { model: { provider: 'scripted', model } },
      concurrency: 3,
      graders: [{ name: 'judge', rubric: 'Score 1 for the same action.', model: { provider: 'scripted', model: judge }, passScore: 0.9 }],
    });
    expect(started.status).toBe(201);
    expect(started.body).toMatchObject({ turns: 3 });
    aliceEvaluation = started.body.evaluationId;
    const report = await finished('alice', aliceEvaluation);
    expect(report.status).toBe('completed');
    expect(report.rows.map((row) => row.turnId).sort()).toEqual([...aliceTurns].sort());
    expect(report.totals).toMatchObject({
      turns: 3,
      errors: 0,
      textChanged: 3,
      toolCalls: { same: 1, differentInput: 2, new: 0, missing: 0 },
      replayed: 1,
      notRun: 2,
      ranSafe: 0,
      wouldAsk: 0,
      graders: { judge: { graded: 3, meanScore: 0.5, passes: 0, fails: 3, errors: 0 } },
    });
    for (const row of report.rows) expect(row.grades).toEqual([{ grader: 'judge', score: 0.5, pass: false, comment: 'Another action.', tokens: expect.any(Number) }]);
    expect(executions.length).toBe(effects);
    // The listing the refusals below rely on sees a run that was started.
    expect(await evaluationsSince(since)).toEqual([aliceEvaluation]);
    // Who started it is kept in the run's memo.
    expect((await client.workflow.getHandle(aliceEvaluation).describe()).memo).toMatchObject({ turnpikeStartedBy: 'alice' });
  });

  it('refuses a list with a turn the caller may not read as it refuses an unknown turn, and starts nothing', async () => {
    const since = new Date();
    const refused = await call('alice', 'POST', '/api/evaluations', { turnIds: [aliceTurns[0], aliceConversationTurn, bobTurns[0]], change: { system: 'x' } });
    expect(refused.status).toBe(404);
    expect(refused.body).toEqual({ error: { type: 'NotFound', message: `No turn ${JSON.stringify(bobTurns[0])} was found` } });
    const unknown = await call('alice', 'POST', '/api/evaluations', { turnIds: ['turn-that-never-was'], change: { system: 'x' } });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: { type: 'NotFound', message: 'No turn "turn-that-never-was" was found' } });
    expect(await evaluationsSince(since)).toEqual([]);
    // Bob may not list alice's conversation's turn either.
    const conversationTurn = await call('bob', 'POST', '/api/evaluations', { turnIds: [aliceConversationTurn], change: {} });
    expect(conversationTurn.body.error).toEqual({ type: 'NotFound', message: `No turn ${JSON.stringify(aliceConversationTurn)} was found` });
  });

  it('takes from a query only the turns the caller may read; an admin takes them all', async () => {
    const query = `TaskQueue = "${taskQueue}"`;
    const byAlice = await call('alice', 'POST', '/api/evaluations', { query, change: { system: 'Be brief.' } });
    const byBob = await call('bob', 'POST', '/api/evaluations', { query, change: { system: 'Be brief.' } });
    const byOps = await call('ops', 'POST', '/api/evaluations', { query, change: { system: 'Be brief.' } });
    expect([byAlice.status, byBob.status, byOps.status]).toEqual([201, 201, 201]);
    // Alice's: her three turns and her conversation's; bob's two; all six for the admin.
    expect([byAlice.body.turns, byBob.body.turns, byOps.body.turns]).toEqual([4, 2, 6]);
    const [aliceReport, bobReport, opsReport] = await Promise.all([finished('alice', byAlice.body.evaluationId), finished('bob', byBob.body.evaluationId), finished('ops', byOps.body.evaluationId)]);
    expect(aliceReport.rows.map((row) => row.turnId).sort()).toEqual([...aliceTurns, aliceConversationTurn].sort());
    expect(bobReport.rows.map((row) => row.turnId).sort()).toEqual([...bobTurns].sort());
    expect(opsReport.rows.map((row) => row.turnId).sort()).toEqual([...aliceTurns, aliceConversationTurn, ...bobTurns].sort());
    // The demo model ignores the system prompt: every call answered from its record.
    expect(aliceReport.totals).toMatchObject({ turns: 4, errors: 0, replayed: 4, notRun: 0, toolCalls: { same: 4, differentInput: 0, new: 0, missing: 0 } });
    // A query naming no turn the caller may read starts nothing.
    const none = await call('bob', 'POST', '/api/evaluations', { query: `TaskQueue = "${taskQueue}" AND WorkflowId = "${aliceTurns[0]}"`, change: {} });
    expect(none.status).toBe(400);
    expect(none.body.error.message).toMatch(/no turns to evaluate/);
  });

  it('shows a report only to the caller who started it and to an admin', async () => {
    const asBob = await call('bob', 'GET', `/api/evaluations/${aliceEvaluation}`);
    const unknown = await call('bob', 'GET', '/api/evaluations/eval-that-never-was');
    expect([asBob.status, unknown.status]).toEqual([404, 404]);
    expect(asBob.body).toEqual({ error: { type: 'NotFound', message: `Evaluation ${aliceEvaluation} not found` } });
    expect(unknown.body).toEqual({ error: { type: 'NotFound', message: 'Evaluation eval-that-never-was not found' } });
    const asOps = await call('ops', 'GET', `/api/evaluations/${aliceEvaluation}`);
    expect(asOps.status).toBe(200);
    expect(asOps.body).toMatchObject({ evaluationId: aliceEvaluation, status: 'completed', totals: { turns: 3 } });
    // A turn is not an evaluation, even to the one who started it.
    const turn = await call('alice', 'GET', `/api/evaluations/${aliceTurns[0]}`);
    expect(turn.status).toBe(404);

    const listed = async (who: Who) => (await call(who, 'GET', '/api/evaluations')).body.evaluations;
    const [ofAlice, ofBob, ofOps] = await Promise.all([listed('alice'), listed('bob'), listed('ops')]);
    expect(ofAlice.map((run) => run.evaluationId)).toContain(aliceEvaluation);
    expect(ofAlice.every((run) => run.startedBy === 'alice')).toBe(true);
    expect(ofBob.map((run) => run.evaluationId)).not.toContain(aliceEvaluation);
    expect(ofBob.length).toBeGreaterThan(0);
    expect(ofBob.every((run) => run.startedBy === 'bob')).toBe(true);
    const opsIds = ofOps.map((run) => run.evaluationId);
    expect([...ofAlice, ...ofBob].every((run) => opsIds.includes(run.evaluationId))).toBe(true);
    expect(ofOps.some((run) => run.startedBy === 'ops')).toBe(true);
  });

  it('keeps who started a run across continue-as-new: its starter still reads the report, others do not', async () => {
    const evaluationId = `eval-continued-${randomUUID()}`;
    // As the API starts one (memo at start), with one turn per run so that it continues as new twice.
    const handle = await client.workflow.start('turnpikeEvaluation', {
      taskQueue: `${taskQueue}-eval`,
      workflowId: evaluationId,
      memo: { turnpikeStartedBy: 'alice' },
      args: [{ evaluationId, turnIds: aliceTurns, change: {}, turnsPerRun: 1 }],
    });
    await handle.result();
    const runs = new Set<string>();
    for await (const execution of client.workflow.list({ query: `WorkflowId = "${evaluationId}"` })) runs.add(execution.runId);
    expect(runs.size).toBe(3);
    expect((await handle.describe()).memo).toMatchObject({ turnpikeStartedBy: 'alice' });
    const asAlice = await call('alice', 'GET', `/api/evaluations/${evaluationId}`);
    expect(asAlice.status).toBe(200);
    expect(asAlice.body).toMatchObject({ status: 'completed', totals: { turns: 3, errors: 0 } });
    expect((await call('bob', 'GET', `/api/evaluations/${evaluationId}`)).status).toBe(404);
  });

  it('refuses bad bodies with a 400 naming the problem, and starts nothing', async () => {
    const since = new Date();
    const cases: Array<[unknown, RegExp]> = [
      [{ turnIds: aliceTurns, change: {}, taskQueue: 'prod' }, /taskQueue/],
      [{ turnIds: aliceTurns, change: { model: { provider: 'nope', model: 'x' } } }, /provider/],
      [{ turnIds: aliceTurns, change: { temperature: 2 } }, /temperature/],
      [{ turnIds: [], change: {} }, /at least one turn/],
      [{ turnIds: Array.from({ length: 1_001 }, (_, index) => `turn-${index}`), change: {} }, /at most 1000 turns/],
      [{ turnIds: aliceTurns, query: 'TaskQueue = "x"', change: {} }, /exactly one of turnIds and query/],
      [{ change: {} }, /exactly one of turnIds and query/],
      [{ turnIds: aliceTurns }, /change/],
      [{ turnIds: aliceTurns, change: {}, concurrency: 0 }, /concurrency/],
      [{ query: 'AND AND', change: {} }, /not a valid visibility query/],
      [{ turnIds: aliceTurns, change: {}, graders: ['bad name'] }, /grader's name must match/],
      [{ turnIds: aliceTurns, change: {}, graders: ['a', 'a'] }, /graders\[1\]: the grader name "a" is used twice/],
      [{ turnIds: aliceTurns, change: {}, graders: ['a', 'b', 'c', 'd', 'e'] }, /at most 4 graders/],
      [{ turnIds: aliceTurns, change: {}, graders: [{ name: 'j', rubric: 'r' }] }, /graders\[0\]\.model must be \{ provider, model \}/],
      [{ turnIds: aliceTurns, change: {}, graders: [{ name: 'j', rubric: ' ', model: { provider: 'scripted', model: 'demo' } }] }, /graders\[0\]\.rubric must be a non-empty string/],
      [{ turnIds: aliceTurns, change: {}, graders: [{ name: 'j', rubric: 'r', model: { provider: 'scripted', model: 'demo' }, passScore: 1.5 }] }, /graders\[0\]\.passScore must be a number from 0 to 1/],
      [{ turnIds: aliceTurns, change: {}, graders: 'judge' }, /graders/],
      [{ turnIds: aliceTurns, change: {}, graders: [{ name: 'j', rubric: 'r', model: { provider: 'scripted', model: 'demo' }, temperature: 0 }] }, /unknown field temperature/],
    ];
    for (const [body, message] of cases) {
      const refused = await call('alice', 'POST', '/api/evaluations', body);
      expect({ body, status: refused.status, type: refused.body.error?.type }).toEqual({ body, status: 400, type: 'InvalidRequest' });
      expect(refused.body.error.message).toMatch(message);
    }
    expect(await evaluationsSince(since)).toEqual([]);
  });

  it("shows a run's report on the dashboard to its starter, and to another caller only that there is none", async () => {
    const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--no-first-run'] });
    try {
      const open = async (token: string) => {
        const page = await browser.newPage();
        await page.goto(`${base}/?evaluation=${encodeURIComponent(aliceEvaluation)}&interval=0`);
        await page.fill('#token', token);
        await page.click('#login-form button[type=submit]');
        return page;
      };
      const page = await open(TOKENS.alice);
      await page.locator('#evaluation-report:not([hidden])').waitFor();
      expect(await page.locator('#evaluation-id').textContent()).toBe(aliceEvaluation);
      expect(await page.locator('#evaluation-totals').textContent()).toMatch(/^completed: 3 of 3 turns evaluated, 0 errors; final text changed in 3, .*tool calls 1 same · 2 other input · 0 new · 0 missing; 1 replayed, 2 not run, 0 ran safe/);
      const rows = page.locator('#evaluation-rows tr');
      expect(await rows.count()).toBe(3);
      expect((await page.locator('#evaluation-rows tr a').allTextContents()).sort()).toEqual([...aliceTurns].sort());
      expect(await rows.first().locator('td').nth(2).textContent()).toBe('changed');
      expect(await rows.first().locator('td').nth(9).textContent()).toBe('judge 0.50 fail');
      expect(await page.locator('#evaluation-totals').textContent()).toMatch(/ Graders: judge mean 0\.50 \(0 passed, 3 failed, 0 errors\)\.$/);
      const other = await open(TOKENS.bob);
      await other.locator('#evaluation-missing:not([hidden])').waitFor();
      expect(await other.locator('#evaluation-missing').textContent()).toBe('No such evaluation was found.');
      expect(await other.locator('#evaluation-report').isHidden()).toBe(true);
    } finally {
      await browser.close();
    }
  });
});
