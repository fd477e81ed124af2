/**
 * Content by reference through a worker crash and a server restart: a turn whose user message
 * carries a 5 MB PDF and whose tool returns 5 MB of JSON, its worker (a process of its own over
 * a folder content store) killed with SIGKILL while the model step after the tool result is in
 * flight, the dev server restarted on its SQLite file, a new worker started. The turn completes;
 * every model request carried the PDF byte for byte and the tool's output as the model sees it;
 * the tool ran once; the store holds each object once and no half-written file; the turn's
 * history stays under 1 MB.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { createTurnpikeDataConverter } from '../../content/data-converter.js';
import { contentKey } from '../../content/content-store.js';
import { FileContentStore } from '../../content/file-content-store.js';
import { DEFAULT_MODEL_OUTPUT_BYTES } from '../../content/stored-content.js';
import { freePort, startDevServer, type DevServer } from '../../scripts/dev-server.js';
import { startFakeProviderServer, type FakeProviderServer } from '../fake-provider/server.js';
import { MB, pdfsSent, sha, toolResultSent } from '../support/content-fixtures.js';
import { sleep, startWorkerProcess, temporaryDirectory, writeBundle, type WorkerProcess } from './chaos-support.js';
import { REPORT_LOG, reportOutput } from './content-tools.js';

const { temporal } = proto;
const TASK_QUEUE = 'chaos-content';

let directory: string;
let bundlePath: string;
let server: DevServer | undefined;
let fake: FakeProviderServer;
let worker: WorkerProcess | undefined;
let client: TurnpikeClient | undefined;

beforeAll(async () => {
  directory = temporaryDirectory('turnpike-content-chaos-');
  [fake, bundlePath] = await Promise.all([startFakeProviderServer(), writeBundle(directory)]);
});
afterAll(async () => {
  await worker?.kill();
  await client?.close();
  await fake?.close();
  await server?.stop();
  rmSync(directory, { recursive: true, force: true });
});

async function connect(address: string, store: FileContentStore): Promise<TurnpikeClient> {
  const connection = await Connection.connect({ address });
  return new TurnpikeClient({ client: new Client({ connection, dataConverter: createTurnpikeDataConverter({ contentStore: store }) }), taskQueue: TASK_QUEUE, contentStore: store });
}

/** Every file under `root`, relative paths. */
function filesUnder(root: string): string[] {
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)));
}

async function waitFor(what: string, condition: () => boolean, context: () => string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`content chaos: never saw ${what}; ${context()}`);
    await sleep(50);
  }
}

describe('content through a worker crash and a server restart', () => {
  it('a 5 MB PDF and a 5 MB tool result survive a SIGKILL mid-step and a server restart: exact bytes, one tool run, each object stored once', async () => {
    const port = await freePort();
    const dbFile = path.join(directory, 'temporal.sqlite');
    const records = path.join(directory, 'records');
    const storeFolder = path.join(directory, 'content');
    const store = new FileContentStore(storeFolder);
    mkdirSync(records, { recursive: true });

    // Step 1 asks for the report; the first step 2 (it carries the tool result) is held until
    // the worker is gone; any later step 2 answers at once.
    let held = 0;
    fake.setDefault('openai', (body: { messages: Array<{ role: string }> }) => {
      if (!body.messages.some((message) => message.role === 'tool')) return { toolCalls: [{ name: 'export_report', input: { quarter: 'Q3' } }] };
      return held++ === 0 ? { delayMs: 600_000, text: 'never sent' } : { text: 'The report and the PDF agree.' };
    });

    server = await startDevServer({ port, dbFile });
    const env = {
      TEMPORAL_ADDRESS: server.address,
      TURNPIKE_TASK_QUEUE: TASK_QUEUE,
      TURNPIKE_CONTENT_STORE: storeFolder,
      CHAOS_RECORDS_DIR: records,
      WORKFLOW_BUNDLE: bundlePath,
      OPENAI_API_KEY: 'sk-test-chaos',
      OPENAI_BASE_URL: fake.openaiBaseURL,
    };
    worker = await startWorkerProcess(env, 'test/chaos/content-worker-process.ts');
    client = await connect(server.address, store);

    const pdf = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(5 * MB), Buffer.from('\n%%EOF\n')]);
    const reportJson = JSON.stringify(reportOutput());
    const turnId = 'content-chaos-turn';
    await client.startTurn(
      {
        model: { provider: 'openai', model: 'gpt-4.1-mini' },
        tools: ['export_report'],
        // The step heartbeats every 5 s: one lost with its worker is tried again after 12 s.
        modelCallOptions: { startToCloseTimeout: '5m', heartbeatTimeout: '12s', retry: { initialInterval: '200ms', maximumAttempts: 20 } },
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Check the Q3 report against this PDF.' }, { type: 'document', source: { type: 'base64', mediaType: 'application/pdf', data: pdf.toString('base64') }, filename: 'q3.pdf' }] }],
      },
      { turnId },
    );

    const secondSteps = () => fake.requests.filter((request) => toolResultSent(request) !== undefined).length;
    await waitFor('the model step after the tool result', () => secondSteps() > 0, () => `requests ${fake.requests.length}; worker: ${worker?.output()}`);
    await worker.kill();
    const atKill = { requests: fake.requests.length, secondSteps: secondSteps() };
    // The kill landed on the held step: step 1 and one step 2, unanswered.
    expect(atKill).toEqual({ requests: 2, secondSteps: 1 });

    // The server goes down and comes back on the same file while no worker runs.
    await client.close();
    client = undefined;
    await server.stop();
    server = await startDevServer({ port, dbFile });
    client = await connect(server.address, store);
    worker = await startWorkerProcess({ ...env, TEMPORAL_ADDRESS: server.address }, 'test/chaos/content-worker-process.ts');

    const result = await client.turnResult(turnId, { waitForStart: true, pollIntervalMs: 200 });
    expect(result.status).toBe('completed');
    expect(result.text).toBe('The report and the PDF agree.');

    // Every request: valid, with the PDF byte for byte; every one after the tool: its exact view.
    const requests = fake.requests;
    expect(requests.map((request) => request.errors)).toEqual(requests.map(() => []));
    expect(requests.length).toBeGreaterThanOrEqual(3);
    for (const request of requests) expect(pdfsSent(request)).toEqual([sha(pdf)]);
    const reportRef = `sha256:${contentKey(Buffer.from(reportJson))}`;
    const views = requests.map(toolResultSent).filter((view): view is string => view !== undefined);
    expect(views.length).toBeGreaterThanOrEqual(2);
    for (const view of views) {
      expect(sha(view.slice(0, DEFAULT_MODEL_OUTPUT_BYTES))).toBe(sha(reportJson.slice(0, DEFAULT_MODEL_OUTPUT_BYTES)));
      expect(view.slice(DEFAULT_MODEL_OUTPUT_BYTES)).toBe(`\n\n[turnpike: this tool output is ${reportJson.length} bytes of JSON; the first ${DEFAULT_MODEL_OUTPUT_BYTES} are shown. The whole output is kept as ${reportRef}.]`);
    }

    // The tool finished before the kill: it ran once, and its output reads back whole.
    const runs = readFileSync(path.join(records, REPORT_LOG), 'utf8').trim().split('\n');
    expect(runs).toHaveLength(1);
    expect(sha(JSON.stringify(await client.readToolOutput(result.toolCalls[0]!.output)))).toBe(sha(reportJson));

    // One object per content, and nothing half-written: every write finished before the kill.
    const keys: string[] = [];
    for await (const object of store.list()) keys.push(object.key);
    expect(keys.sort()).toEqual([contentKey(pdf), contentKey(Buffer.from(reportJson))].sort());
    expect(filesUnder(storeFolder).filter((name) => name.endsWith('.partial'))).toEqual([]);

    const history = await client.client.workflow.getHandle(turnId).fetchHistory();
    const historyBytes = temporal.api.history.v1.History.encode(history).finish().length;
    expect(historyBytes).toBeLessThan(1 * MB);
    console.log(
      `content-crash: PDF ${pdf.length} bytes, tool output ${reportJson.length} bytes; at the kill ${JSON.stringify(atKill)}; ` +
        `${requests.length} model requests, ${runs.length} tool run, store objects ${keys.length}, history ${historyBytes} bytes`,
    );
  });
});
