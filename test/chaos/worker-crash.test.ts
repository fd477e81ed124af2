/**
 * Worker crashes: 50 concurrent turns through the real OpenAI SDK (a slow fake provider), a
 * slow server tool and an approval-gated payment tool, while the worker process is killed
 * with SIGKILL again and again — during model calls, tool calls and while turns are parked —
 * and restarted. Every turn completes with a valid history, and every approved charge took
 * effect exactly once.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { turnpikeDataConverter } from '../../content/data-converter.js';
import { startDevServer, type DevServer } from '../../scripts/dev-server.js';
import { approveToolCallUpdate, turnStateQuery } from '../../workflows/messages/definitions.js';
import type { agentTurn } from '../../workflows/index.js';
import type { AgentTurnResult } from '../../workflows/types/index.js';
import { startFakeProviderServer, type FakeProviderServer } from '../fake-provider/server.js';
import { sleep, startWorkerProcess, temporaryDirectory, writeBundle, type WorkerProcess } from './chaos-support.js';
import { everyCallAnsweredOnce } from '../support/call-pairs.js';

const TURNS = 50;
const KILLS = 6;
/** Tool steps per turn, each with a slow tool and an approved charge. */
const STEPS = 3;

let server: DevServer;
let fake: FakeProviderServer;
let client: Client;
let directory: string;
let bundlePath: string;

beforeAll(async () => {
  directory = temporaryDirectory('turnpike-chaos-');
  [server, fake, bundlePath] = await Promise.all([startDevServer(), startFakeProviderServer(), writeBundle(directory)]);
  client = new Client({ connection: await Connection.connect({ address: server.address }), dataConverter: turnpikeDataConverter });
  // Every turn: STEPS steps, each with a slow tool and a charge needing approval, then an answer.
  fake.setDefault('openai', (body) => {
    const stepsDone = body.messages.filter((message: { role: string }) => message.role === 'assistant').length;
    if (stepsDone < STEPS) {
      return { delayMs: 400, toolCalls: [{ name: 'slow_sync', input: { n: stepsDone } }, { name: 'charge_card', input: { amount: 10 + stepsDone } }] };
    }
    return { delayMs: 400, text: 'All settled.' };
  });
});

afterAll(async () => {
  await client?.connection.close();
  await fake?.close();
  await server?.stop();
  rmSync(directory, { recursive: true, force: true });
});

describe('worker crashes', () => {
  it(`completes ${TURNS} concurrent turns through ${KILLS} SIGKILLs of the worker, each approved charge taking effect once`, async () => {
    const taskQueue = 'chaos-crash';
    const records = path.join(directory, 'records');
    mkdirSync(path.join(records, 'effects'), { recursive: true });
    const env = {
      TEMPORAL_ADDRESS: server.address,
      TURNPIKE_TASK_QUEUE: taskQueue,
      CHAOS_RECORDS_DIR: records,
      WORKFLOW_BUNDLE: bundlePath,
      OPENAI_API_KEY: 'sk-test-chaos',
      OPENAI_BASE_URL: fake.openaiBaseURL,
    };
    let worker: WorkerProcess = await startWorkerProcess(env);

    const startTurn = (index: number) =>
        client.workflow.start<typeof agentTurn>('agentTurn', {
          taskQueue,
          workflowId: `chaos-turn-${index}`,
          // A lost workflow task is retried after 2s rather than 10s.
          workflowTaskTimeout: '2s',
          args: [{
            model: { provider: 'openai', model: 'gpt-4.1-mini' },
            messages: [{ role: 'user', content: `Charge order ${index}` }],
            modelCallOptions: { startToCloseTimeout: '3s', retry: { initialInterval: '200ms', maximumAttempts: 20 } },
          }],
        });
    // Started in waves, so model calls, tool calls and parked turns overlap for the whole run.
    const handles: Array<WorkflowHandle<typeof agentTurn>> = [];
    const startAll = (async () => {
      for (let wave = 0; wave < TURNS / 5; wave++) {
        handles.push(...(await Promise.all(Array.from({ length: 5 }, (_, offset) => startTurn(wave * 5 + offset)))));
        // Each restart costs seconds; arrivals span ~40s so every kill finds work in flight.
        await sleep(4_000);
      }
    })();

    // An approver that keeps deciding whatever is parked, as a person at a dashboard would;
    // paused before a kill that must land while turns are parked.
    let approving = true;
    let paused = false;
    const approved = new Set<string>();
    const parkedNow = async () => {
      // A query waits for a worker to answer it; while none runs, give up quickly.
      const states = await Promise.all(
        handles.map((handle) => client.withDeadline(Date.now() + 1_000, () => handle.query(turnStateQuery)).catch(() => undefined)),
      );
      return states.flatMap((state, index) => (state?.pending ?? []).map((call) => ({ handle: handles[index], call })));
    };
    const approver = (async () => {
      while (approving) {
        if (!paused) {
          const open = (await parkedNow()).filter(({ call }) => call.approvalId && !approved.has(call.approvalId));
          await Promise.all(
            open.map(({ handle, call }) =>
              // An update waits for a worker to accept it; without one, give up and retry next round.
              client
                .withDeadline(Date.now() + 2_000, () => handle.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: call.approvalId!, approved: true, approver: 'chaos' }] }))
                .then(
                  () => approved.add(call.approvalId!),
                  () => undefined,
                ),
            ),
          );
        }
        await sleep(200);
      }
    })();

    const attemptsSoFar = () => {
      try {
        return readFileSync(path.join(records, 'attempts.log'), 'utf8').trim().split('\n').filter(Boolean).length;
      } catch {
        return 0;
      }
    };
    const waitFor = async (what: string, condition: () => boolean | Promise<boolean>) => {
      const deadline = Date.now() + 30_000;
      while (!(await condition())) {
        if (Date.now() > deadline) {
          const statuses = await Promise.all(handles.map((handle) => handle.describe().then((d) => d.status.name)));
          throw new Error(
            `chaos: never saw ${what}; model requests ${fake.requests.length}, parked ${(await parkedNow()).length}, approved ${approved.size}, ` +
              `worker exit ${worker.child.exitCode}/${worker.child.signalCode}, statuses ${JSON.stringify(Object.entries(statuses.reduce<Record<string, number>>((counts, status) => ({ ...counts, [status]: (counts[status] ?? 0) + 1 }), {})))}`,
          );
        }
        await sleep(20);
      }
    };

    // Each kill is aimed: right after the new worker sent a model request (the fake answers
    // after 400ms), right after a charge attempt began (it takes effect after 150ms), or
    // while turns sit parked with the approver paused.
    const phases = ['model', 'tool', 'parked', 'model', 'tool', 'parked'] as const;
    const kills: Array<{ phase: string; modelRequests: number; chargeAttempts: number; parked: number }> = [];
    for (const phase of phases.slice(0, KILLS)) {
      const requests = fake.requests.length;
      const attempts = attemptsSoFar();
      let parked = 0;
      if (phase === 'model') await waitFor('a model request', () => fake.requests.length > requests);
      if (phase === 'tool') await waitFor('a charge attempt', () => attemptsSoFar() > attempts);
      if (phase === 'parked') {
        paused = true;
        await waitFor('parked turns', async () => (parked = (await parkedNow()).length) >= 3);
      }
      // Kill first, count after: any delay here lets the in-flight call finish.
      await worker.kill();
      kills.push({ phase, modelRequests: fake.requests.length, chargeAttempts: attemptsSoFar(), parked });
      paused = false;
      worker = await startWorkerProcess(env);
    }

    await startAll;
    const results: AgentTurnResult[] = await Promise.all(handles.map((handle) => handle.result()));
    approving = false;
    await approver;
    await worker.kill();

    expect(results.map((result) => result.status)).toEqual(Array(TURNS).fill('completed'));
    expect(results.every((result) => everyCallAnsweredOnce(result.messages))).toBe(true);
    expect(results.every((result) => result.toolCalls.map((call) => call.outcome).join() === Array(STEPS).fill('executed,approved').join())).toBe(true);

    const effects = readdirSync(path.join(records, 'effects')).map(decodeURIComponent).sort();
    const expectedKeys = results
      .flatMap((result, index) => result.toolCalls.filter((call) => call.toolName === 'charge_card').map((call) => `chaos-turn-${index}/${call.toolCallId}`))
      .sort();
    expect(expectedKeys).toHaveLength(TURNS * STEPS);
    expect(effects).toEqual(expectedKeys);
    const attempts = readFileSync(path.join(records, 'attempts.log'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { key: string; pid: number });
    const workers = new Set(attempts.map((attempt) => attempt.pid));
    console.log(
      `worker-crash: ${TURNS} turns, ${KILLS} SIGKILLs, ${workers.size} worker processes ran charges, ${attempts.length} charge attempts, ` +
        `${effects.length} effects (lost: 0, duplicated: 0), ${fake.requests.length} model requests; at each kill: ${JSON.stringify(kills)}`,
    );
    expect(kills.map((kill) => kill.phase)).toEqual(phases.slice(0, KILLS));
    // The tool-phase kills interrupted charges mid-way: they were attempted again, and took effect once.
    expect(attempts.length).toBeGreaterThan(effects.length);
  });
});
