/**
 * An evaluation run of 50 recorded turns whose worker process is killed (SIGKILL) mid-run
 * (docs/evaluations.md). The turns are recorded with the demo model on a worker process that
 * also runs the evaluation worker: plain calls, approvals granted and denied by a person, a
 * client tool answered by the client, typed answers, handoffs to another agent and turns that
 * hand over to new runs of themselves. They are then evaluated with another model (the fake
 * OpenAI server), whose script differs from the originals' in ways chosen per turn, so every count
 * of the report is known in advance. Once some but not all turns are evaluated, the worker
 * process is killed and a new one started: the run completes with each turn evaluated exactly
 * once, the counts are exactly what the change implies, and no tool's effect happened (every run
 * of a tool appends a line to a file the test counts).
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseScriptedRequests } from '../../activities/providers/scripted.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { turnpikeDataConverter } from '../../content/data-converter.js';
import { startDevServer, type DevServer } from '../../scripts/dev-server.js';
import { approveToolCallUpdate, submitToolResultUpdate, turnStateQuery } from '../../workflows/messages/definitions.js';
import type { EvaluationReport, EvaluationRow } from '../../workflows/evaluation/evaluation-types.js';
import type { agentTurn } from '../../workflows/index.js';
import type { AgentTurnInput } from '../../workflows/types/index.js';
import { startFakeProviderServer, type FakeProviderServer, type Json, type ScriptedResponse } from '../fake-provider/server.js';
import { sleep, startWorkerProcess, temporaryDirectory, writeBundle, type WorkerProcess } from './chaos-support.js';

const WORKER = 'test/chaos/evaluation-worker-process.ts';
const taskQueue = 'chaos-eval';
const range = (count: number) => Array.from({ length: count }, (_, index) => index + 1);

/** A recorded turn: its case name (group letter and number), its request, and how a person or the client answers it. */
interface Case {
  name: string;
  text: string;
  input?: Partial<AgentTurnInput>;
  decision?: boolean;
  clientOutput?: unknown;
}

const typedOutput = { schema: { type: 'object', properties: { refund: { type: 'number' }, reason: { type: 'string' } }, required: ['refund', 'reason'] } };
const shipSteps = (name: string) => range(12).map((step) => `use ship_parcel with {"order":"${name}-${step}","qty":1}`).join(' then ');

const CASES: Case[] = [
  // A: one call with an effect.
  ...range(20).map((n) => ({ name: `A${n}`, text: `case A${n}: use ship_parcel with {"order":"A${n}","qty":1}` })),
  // B: a refund a person approved; C: one a person denied.
  ...range(10).map((n) => ({ name: `B${n}`, text: `case B${n}: use refund_order with {"order":"B${n}","amount":250}`, decision: true })),
  ...range(5).map((n) => ({ name: `C${n}`, text: `case C${n}: use refund_order with {"order":"C${n}","amount":300}`, decision: false })),
  // D: a client tool the client answered.
  ...range(5).map((n) => ({ name: `D${n}`, text: `case D${n}: use pick_colour with {"options":["red","green"]}`, clientOutput: { colour: 'red' } })),
  // E: a typed answer.
  ...range(5).map((n) => ({ name: `E${n}`, text: `case E${n}: answer with {"refund":250,"reason":"late"}`, input: { output: typedOutput } })),
  // F: a handoff to another agent.
  ...range(3).map((n) => ({ name: `F${n}`, text: `case F${n}: use transfer_to_billing with {"reason":"refund"}`, input: { handoffs: [{ agent: 'billing', description: 'Refunds.' }] } })),
  // G: twelve steps, handed over to a new run of the turn past 100 events.
  ...range(2).map((n) => ({ name: `G${n}`, text: `case G${n}: ${shipSteps(`G${n}`)}`, input: { maxSteps: 20, historyLimit: { events: 100 } } })),
];

/**
 * The changed model: for each turn, the demo model's calls (parsed from the same request) with
 * these differences, then a final text of its own (or the typed answer).
 *   A1–10 the same call; A11–15 another qty; A16–20 the same call and a read_stock beside it;
 *   B1–5 the same refund; B6–10 another amount (no decision recorded for it);
 *   C the same denied refund; D1–3 the same client call, D4–5 none; E1–3 the same answer,
 *   E4 another refund, E5 an answer the schema refuses; F1–2 the same handoff, F3 none; G the same.
 */
function changedModel(body: Json): ScriptedResponse {
  const messages = body.messages as Array<{ role: string; content: unknown }>;
  const firstUser = messages.find((message) => message.role === 'user')!;
  const request = typeof firstUser.content === 'string' ? firstUser.content : (firstUser.content as Array<{ text?: string }>).map((part) => part.text ?? '').join('');
  const [, group, number] = /case ([A-G])(\d+)/.exec(request)!;
  const n = Number(number);
  let steps = parseScriptedRequests(request).map((step) => step.map((call) => ({ name: call.toolName, input: call.input as Record<string, unknown> })));
  if (group === 'A' && n > 10 && n <= 15) steps = [[{ ...steps[0][0], input: { ...steps[0][0].input, qty: 2 } }]];
  if (group === 'A' && n > 15) steps = [[steps[0][0], { name: 'read_stock', input: { sku: `A${n}` } }]];
  if (group === 'B' && n > 5) steps = [[{ ...steps[0][0], input: { ...steps[0][0].input, amount: 260 } }]];
  if ((group === 'D' && n > 3) || (group === 'F' && n > 2)) steps = [];
  const done = messages.filter((message) => message.role === 'assistant').length;
  if (done < steps.length) return { toolCalls: steps[done] };
  if (body.response_format) return { json: { refund: n <= 3 ? 250 : n === 4 ? 200 : 'all', reason: 'late' } };
  return { text: 'All done, with the new model.' };
}

let server: DevServer;
let fake: FakeProviderServer;
let client: Client;
let turnpike: TurnpikeClient;
let directory: string;
let records: string;
let env: Record<string, string>;
const workers: WorkerProcess[] = [];
const turnIds = new Map<string, string>();

const linesOf = (file: string) => (existsSync(path.join(records, file)) ? readFileSync(path.join(records, file), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { toolName: string; input: Record<string, unknown>; key: string }) : []);

async function until<T>(what: string, read: () => Promise<T | undefined>, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const value = await read().catch(() => undefined);
    if (value !== undefined) return value;
    await sleep(intervalMs);
  }
  throw new Error(`never saw ${what}`);
}

/** Starts a recorded turn, answers its parked call as its case says, and waits for its result. */
async function record(one: Case) {
  const handle = await client.workflow.start<typeof agentTurn>('agentTurn', {
    taskQueue,
    workflowId: `original-${one.name}`,
    args: [{ model: { provider: 'scripted', model: 'demo' }, messages: [{ role: 'user', content: one.text }], modelCallOptions: { startToCloseTimeout: '3s', retry: { initialInterval: '200ms', maximumAttempts: 20 } }, ...one.input }],
  });
  turnIds.set(one.name, handle.workflowId);
  if (one.decision !== undefined || one.clientOutput !== undefined) {
    const [call] = await until(`${one.name} parked`, async () => {
      const { pending } = await handle.query(turnStateQuery);
      return pending.length > 0 ? pending : undefined;
    });
    if (one.decision !== undefined) await handle.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: call.approvalId!, approved: one.decision, approver: 'alice', reason: one.decision ? 'fine' : 'no' }] });
    else await handle.executeUpdate(submitToolResultUpdate, { args: [{ toolCallId: call.toolCallId, output: one.clientOutput }] });
  }
  return handle.result();
}

/** How many runs each workflow on the evaluation queue had, and how many of them ended otherwise than by continuing as new. */
async function evaluationTurnRuns(): Promise<Map<string, { runs: number; ended: number }>> {
  const runs = new Map<string, { runs: number; ended: number }>();
  for await (const execution of client.workflow.list({ query: `WorkflowType = "agentTurn" AND TaskQueue = "${taskQueue}-eval"` })) {
    const seen = runs.get(execution.workflowId) ?? { runs: 0, ended: 0 };
    seen.runs++;
    if (execution.status.name !== 'CONTINUED_AS_NEW') seen.ended++;
    runs.set(execution.workflowId, seen);
  }
  return runs;
}

beforeAll(async () => {
  directory = temporaryDirectory('turnpike-eval-chaos-');
  records = path.join(directory, 'records');
  let bundlePath: string;
  [server, fake, bundlePath] = await Promise.all([startDevServer(), startFakeProviderServer(), writeBundle(directory)]);
  client = new Client({ connection: await Connection.connect({ address: server.address }), dataConverter: turnpikeDataConverter });
  turnpike = new TurnpikeClient({ client, taskQueue });
  fake.setDefault('openai', changedModel);
  env = { TEMPORAL_ADDRESS: server.address, TURNPIKE_TASK_QUEUE: taskQueue, CHAOS_RECORDS_DIR: records, WORKFLOW_BUNDLE: bundlePath, OPENAI_API_KEY: 'sk-test-eval', OPENAI_BASE_URL: fake.openaiBaseURL };
}, 180_000);

afterAll(async () => {
  for (const worker of workers) await worker.kill();
  await client?.connection.close();
  await fake?.close();
  await server?.stop();
  if (directory) rmSync(directory, { recursive: true, force: true });
});

describe('an evaluation run whose worker is killed mid-run', () => {
  it('evaluates 50 recorded turns once each, with exactly the counts the change implies and no tool effect', async () => {
    const first = await startWorkerProcess(env, WORKER);
    workers.push(first);

    // Recorded: 54 effects (A 20, B 10, G 24), every turn completed, G handed over, F handed off.
    const recordedAt = Date.now();
    const results = await Promise.all(CASES.map(record));
    const recordingMs = Date.now() - recordedAt;
    expect(results.map((result) => result.status)).toEqual(Array(50).fill('completed'));
    expect(linesOf('effects.log')).toHaveLength(54);
    expect(results.filter((result) => result.handoff?.to === 'billing')).toHaveLength(3);
    for (const name of ['G1', 'G2']) {
      let runs = 0;
      for await (const _ of client.workflow.list({ query: `WorkflowId = "${turnIds.get(name)}"` })) runs++;
      expect(runs, `${name} handed over`).toBeGreaterThan(1);
    }
    const effects = linesOf('effects.log').length;

    const evaluatedAt = Date.now();
    const ids = CASES.map((one) => turnIds.get(one.name)!);
    const { evaluationId } = await turnpike.evaluate({ turnIds: ids, change: { model: { provider: 'openai', model: 'gpt-4.1' } }, concurrency: 4 });

    // Killed once some but not all turns are evaluated, while one of the run's own activities
    // (building a turn's input, comparing two turns) is running: a lost attempt is tried again
    // after the activities' heartbeat timeout, and the run finishes well within a minute.
    const handle = client.workflow.getHandle(evaluationId);
    const before = await until('some turns evaluated and an activity of the run running', async () => {
      const report = await turnpike.evaluationReport(evaluationId);
      if (report.rows.length < 15) return undefined;
      const { raw } = await handle.describe();
      return (raw.pendingActivities ?? []).some((activity) => activity.state === 2 /* STARTED */) ? report : undefined;
    }, 5);
    await first.kill();
    expect(first.child.signalCode).toBe('SIGKILL');
    const killedAt = Date.now();
    expect(before.rows.length).toBeLessThan(50);
    expect((await handle.describe()).status.name).toBe('RUNNING');

    const second = await startWorkerProcess(env, WORKER);
    workers.push(second);
    await handle.result();
    const recoveryMs = Date.now() - killedAt;
    const evaluationMs = Date.now() - evaluatedAt;
    const report: EvaluationReport = await turnpike.evaluationReport(evaluationId);
    console.log(`recorded 50 turns in ${recordingMs} ms; evaluated in ${evaluationMs} ms; killed with ${before.rows.length} rows; done ${recoveryMs} ms after the kill`);
    expect(recoveryMs).toBeLessThan(60_000);

    // Each turn once: no row lost, none twice; each evaluation turn started once and ended once.
    expect(report.status).toBe('completed');
    expect(report.rows.map((row) => row.turnId).sort()).toEqual([...ids].sort());
    expect(report.rows.map((row) => row.evaluationTurnId).sort()).toEqual(ids.map((_, index) => `${evaluationId}/${index}`).sort());
    const runs = await until('every evaluation turn listed as ended', async () => {
      const listed = await evaluationTurnRuns();
      return [...listed.values()].filter((turn) => turn.ended > 0).length === 50 ? listed : undefined;
    });
    expect([...runs.keys()].sort()).toEqual(ids.map((_, index) => `${evaluationId}/${index}`).sort());
    expect([...runs.values()].every((turn) => turn.ended === 1)).toBe(true);
    // G's evaluation turns handed over too.
    for (const name of ['G1', 'G2']) expect(runs.get(`${evaluationId}/${ids.indexOf(turnIds.get(name)!)}`)!.runs).toBeGreaterThan(1);

    expect(report.totals).toMatchObject({
      turns: 50,
      errors: 0,
      // All but E1–3 (the same typed answer, written the same) and F1–2 (the same handoff, no text).
      textChanged: 45,
      outputInvalid: 1,
      // same: A1–10, A16–20, B1–5, C, D1–3, F1–2, G's 24; different input: A11–15, B6–10;
      // new: A16–20's read_stock; missing: D4–5's client call, F3's handoff.
      toolCalls: { same: 54, differentInput: 10, new: 5, missing: 3 },
      // The same calls that have a result on record: all of them but C's denied refunds.
      replayed: 49,
      ranSafe: 5,
      notRun: 5,
      wouldAsk: 5,
      denials: 5,
      original: { approvalsAsked: 15, denials: 5 },
      // 114 model calls (A 40, B 20, C 10, D 8, E 7, F 3, G 26), 10 input and 5 output tokens each.
      evaluated: { usage: { tokens: 1_710 } },
    });
    const row = (name: string): EvaluationRow => report.rows.find((candidate) => candidate.turnId === turnIds.get(name))!;
    expect(row('A3')).toMatchObject({ status: { original: 'completed', evaluated: 'completed' }, textChanged: true, toolCalls: { same: 1, differentInput: 0, new: 0, missing: 0 }, replayed: 1 });
    expect(row('A12')).toMatchObject({ toolCalls: { same: 0, differentInput: 1, new: 0, missing: 0 }, replayed: 0, notRun: 1 });
    expect(row('A17')).toMatchObject({ toolCalls: { same: 1, differentInput: 0, new: 1, missing: 0 }, replayed: 1, ranSafe: 1 });
    expect(row('B2')).toMatchObject({ toolCalls: { same: 1, differentInput: 0, new: 0, missing: 0 }, replayed: 1, wouldAsk: 0, denials: 0, original: { approvalsAsked: 1, denials: 0 } });
    expect(row('B7')).toMatchObject({ toolCalls: { same: 0, differentInput: 1, new: 0, missing: 0 }, replayed: 0, wouldAsk: 1, denials: 0 });
    expect(row('C4')).toMatchObject({ toolCalls: { same: 1, differentInput: 0, new: 0, missing: 0 }, replayed: 0, denials: 1, original: { approvalsAsked: 1, denials: 1 } });
    expect(row('D1')).toMatchObject({ toolCalls: { same: 1, differentInput: 0, new: 0, missing: 0 }, replayed: 1, notRun: 0 });
    expect(row('D5')).toMatchObject({ toolCalls: { same: 0, differentInput: 0, new: 0, missing: 1 }, replayed: 0 });
    expect(row('E2')).toMatchObject({ textChanged: false, output: { valid: true, changedFields: [] } });
    expect(row('E4')).toMatchObject({ textChanged: true, output: { valid: true, changedFields: ['refund'] } });
    expect(row('E5')).toMatchObject({ status: { original: 'completed', evaluated: 'invalid-output' }, output: { valid: false, changedFields: ['(whole answer)'] } });
    expect(row('F1')).toMatchObject({ textChanged: false, toolCalls: { same: 1, differentInput: 0, new: 0, missing: 0 } });
    expect(row('F3')).toMatchObject({ textChanged: true, toolCalls: { same: 0, differentInput: 0, new: 0, missing: 1 } });
    expect(row('G2')).toMatchObject({ toolCalls: { same: 12, differentInput: 0, new: 0, missing: 0 }, replayed: 12, notRun: 0 });

    // No effect during the evaluation; the safe tool ran once per call it had no record of.
    expect(linesOf('effects.log')).toHaveLength(effects);
    const reads = linesOf('reads.log');
    expect(new Set(reads.map((read) => read.key)).size).toBe(5);
    expect([...new Set(reads.map((read) => read.input.sku))].sort()).toEqual(['A16', 'A17', 'A18', 'A19', 'A20']);
    // Every request the new model was sent was one the real API takes.
    expect(fake.requests.filter((request) => request.errors.length > 0).map((request) => request.errors)).toEqual([]);
  }, 240_000);
});
