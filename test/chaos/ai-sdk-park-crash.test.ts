/**
 * A Gemini turn (`ai-sdk`, the real `@ai-sdk/google`, thinking on) parked on an approval while
 * its worker process is killed with SIGKILL: the decision arrives while no worker runs, a new
 * worker process takes the turn up from its history and completes it, and the request it makes
 * after the park carries every thought signature Gemini issued before the park, byte for byte.
 * The strict Gemini fake (test/fake-provider/gemini.ts) runs in this process, so it outlives the
 * workers and refuses a missing or altered signature with the real API's error text.
 */
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { turnpikeDataConverter } from '../../content/data-converter.js';
import { startDevServer, type DevServer } from '../../scripts/dev-server.js';
import { approveToolCallUpdate, turnStateQuery } from '../../workflows/messages/definitions.js';
import type { agentTurn } from '../../workflows/index.js';
import { startFakeGemini, type FakeGemini } from '../fake-provider/gemini.js';
import type { Json } from '../fake-provider/server.js';
import { sleep, startWorkerProcess, temporaryDirectory, writeBundle, type WorkerProcess } from './chaos-support.js';

const GEMINI_KEY = 'gemini-chaos-SECRET-91d2';

let server: DevServer;
let gemini: FakeGemini;
let client: Client;
let directory: string;
let bundlePath: string;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  directory = temporaryDirectory('turnpike-gemini-chaos-');
  [server, gemini, bundlePath] = await Promise.all([startDevServer(), startFakeGemini(GEMINI_KEY), writeBundle(directory)]);
  client = new Client({ connection: await Connection.connect({ address: server.address }), dataConverter: turnpikeDataConverter });
});

afterAll(async () => {
  for (const worker of workers) await worker.kill();
  await client?.connection.close();
  await gemini?.close();
  await server?.stop();
  rmSync(directory, { recursive: true, force: true });
});

/** Every part Gemini sent in a request's reply, in order. */
const partsOf = (reply: Json[] | undefined): Json[] => (reply ?? []).flatMap((chunk) => chunk.candidates?.[0]?.content?.parts ?? []);

describe('a parked Gemini turn whose worker is killed', () => {
  it('completes on a new worker process after the decision, sending the thought signatures back unchanged', async () => {
    const taskQueue = 'chaos-gemini';
    const records = path.join(directory, 'records');
    const env = {
      TEMPORAL_ADDRESS: server.address,
      TURNPIKE_TASK_QUEUE: taskQueue,
      CHAOS_RECORDS_DIR: records,
      WORKFLOW_BUNDLE: bundlePath,
      GEMINI_BASE_URL: gemini.baseURL,
      GEMINI_API_KEY: GEMINI_KEY,
    };
    const first = await startWorkerProcess(env, 'test/chaos/gemini-worker-process.ts');
    workers.push(first);

    gemini.script([
      { thinking: 'Sync the order first.', text: 'Syncing.', toolCalls: [{ name: 'slow_sync', args: { n: 1 } }] },
      { thinking: 'Now the charge; that needs a person.', toolCalls: [{ name: 'charge_card', args: { amount: 42 } }] },
      { thinking: 'Charged.', text: 'Order 7 is synced and charged $42.' },
    ]);
    const handle = await client.workflow.start<typeof agentTurn>('agentTurn', {
      taskQueue,
      workflowId: 'chaos-gemini-turn',
      // A workflow task lost with the killed worker is retried after 2s rather than 10s.
      workflowTaskTimeout: '2s',
      args: [{
        model: { provider: 'ai-sdk', model: 'flash3', providerOptions: { google: { thinkingConfig: { includeThoughts: true } } } },
        system: 'You are the billing agent.',
        messages: [{ role: 'user', content: 'Sync order 7, then charge it $42.' }],
        modelCallOptions: { startToCloseTimeout: '10s', retry: { initialInterval: '200ms', maximumAttempts: 10 } },
      }],
    });

    // Parked on the charge's approval, two signed model replies in.
    const deadline = Date.now() + 60_000;
    let pending: Array<{ approvalId?: string; toolName: string }> = [];
    while (pending.length === 0) {
      if (Date.now() > deadline) throw new Error(`the turn never parked; worker said: ${first.output()}`);
      pending = (await handle.query(turnStateQuery)).pending;
      if (pending.length === 0) await sleep(100);
    }
    expect(pending).toMatchObject([{ toolName: 'charge_card' }]);
    expect(gemini.requests).toHaveLength(2);

    await first.kill();
    expect(first.child.signalCode).toBe('SIGKILL');

    // The decision is sent while no worker runs; it is accepted once the new worker polls.
    const decided = handle.executeUpdate(approveToolCallUpdate, { args: [{ approvalId: pending[0].approvalId!, approved: true, approver: 'alice' }] });
    const second = await startWorkerProcess(env, 'test/chaos/gemini-worker-process.ts');
    workers.push(second);
    await decided;
    const result = await handle.result();

    expect(result).toMatchObject({ status: 'completed', steps: 3, text: 'Order 7 is synced and charged $42.' });
    expect(result.toolCalls.map((call) => [call.toolName, call.outcome])).toEqual([
      ['slow_sync', 'executed'],
      ['charge_card', 'approved'],
    ]);
    // The charge ran once, on the new worker.
    const attempts = readFileSync(path.join(records, 'attempts.log'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { pid: number });
    expect(attempts.map((attempt) => attempt.pid)).toEqual([second.child.pid]);

    // Two model calls before the park from the first worker, the one after it from the second,
    // each valid by the fake's checks.
    expect(gemini.requests.map((request) => [request.status, request.errors, Number(request.headers['x-turnpike-test-pid'])])).toEqual([
      [200, [], first.child.pid],
      [200, [], first.child.pid],
      [200, [], second.child.pid],
    ]);
    // Every signature issued before the park is in the request after it, unchanged, on the
    // call it signed, and the thoughts come back with them.
    const issued = [partsOf(gemini.requests[0].reply), partsOf(gemini.requests[1].reply)].map((parts) => parts.find((part) => part.functionCall));
    expect(issued.map((part) => part.thoughtSignature)).toEqual([expect.stringMatching(/^[A-Za-z0-9+/]{64}$/), expect.stringMatching(/^[A-Za-z0-9+/]{64}$/)]);
    const contents: Json[] = gemini.requests[2].body.contents;
    expect(contents.map((content) => content.role)).toEqual(['user', 'model', 'user', 'model', 'user']);
    const sentCalls = contents.flatMap((content) => content.parts.filter((part: Json) => part.functionCall));
    expect(sentCalls.map((part) => [part.functionCall.name, part.functionCall.args, part.thoughtSignature])).toEqual(
      issued.map((part) => [part.functionCall.name, part.functionCall.args, part.thoughtSignature]),
    );
    expect(contents[3].parts).toContainEqual({ text: 'Now the charge; that needs a person.', thought: true });
    expect(contents[4].parts[0].functionResponse).toMatchObject({ name: 'charge_card', response: expect.anything() });

    // The key and the base URL stay in the worker processes.
    const history = JSON.stringify(await handle.fetchHistory());
    expect(history).not.toContain(GEMINI_KEY);
    expect(history).not.toContain(gemini.baseURL);
  });
});
