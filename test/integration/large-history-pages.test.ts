/**
 * Histories whose pages are larger than gRPC's default receive limit (4 MiB): five signals of
 * 1.1 MB, which Temporal accepts for any workflow (a turn too, even though it has no such
 * signal), come back in one page of 5.5 MB. On a Temporal server of this file's own, because the
 * sweep reads the whole namespace, and a file store in a temporary folder.
 *
 * The CLI and `TurnpikeClient.connect` connect from the environment (TEMPORAL_ADDRESS) as an
 * operator's do. The other clients here are opened by the test as an application might: with
 * gRPC's limits, and without the SDK's gRPC retry, which retries RESOURCE_EXHAUSTED for about
 * 40 s before the error reaches the sweep.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../cli/main.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { contentKey, contentRef, storeContent } from '../../content/content-store.js';
import { sweepContent } from '../../content/content-sweep.js';
import { createTurnpikeDataConverter } from '../../content/data-converter.js';
import { FileContentStore } from '../../content/file-content-store.js';
import { CONTENT_STORE_VARIABLE } from '../../content/store-from-environment.js';
import type { TurnState } from '../../workflows/types/index.js';
import { startOwnTemporal, type OwnTemporal } from '../support/own-temporal.js';
import { use } from '../support/test-tools.js';

const HOUR = 3_600_000;
const LARGE_SIGNAL_CHARS = 1_100_000;
const LARGE_SIGNALS = 5;
const ENVIRONMENT = ['TEMPORAL_ADDRESS', 'TEMPORAL_NAMESPACE', 'TURNPIKE_TASK_QUEUE', CONTENT_STORE_VARIABLE] as const;

let temporal: OwnTemporal;
let root: string;
let store: FileContentStore;
let turnId: string;
let probeId: string;
let image: Buffer;
let ofProbe: string;
const opened: Connection[] = [];
const workflows: string[] = [];
const environmentBefore = new Map(ENVIRONMENT.map((name) => [name, process.env[name]]));

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'turnpike-large-pages-'));
  store = new FileContentStore(root);
  temporal = await startOwnTemporal({ contentStore: store });
  process.env.TEMPORAL_ADDRESS = temporal.server.address;
  process.env.TEMPORAL_NAMESPACE = temporal.server.namespace;
  process.env.TURNPIKE_TASK_QUEUE = temporal.taskQueue;
  process.env[CONTENT_STORE_VARIABLE] = `file:${root}`;

  // A turn with stored content (an image of 200 KiB), parked on an approval, then sent five junk signals.
  image = randomBytes(200 * 1024);
  const turnpike = new TurnpikeClient({ client: temporal.client, taskQueue: temporal.taskQueue, contentStore: store });
  turnId = `turn-${randomUUID()}`;
  workflows.push(turnId);
  await turnpike.startTurn(
    {
      model: { provider: 'scripted', model: 'demo' },
      messages: [{ role: 'user', content: [{ type: 'text', text: use('guarded_action', { target: 'alpha', count: 1 }) }, { type: 'image', source: { type: 'base64', mediaType: 'image/png', data: image.toString('base64') } }] }],
    },
    { turnId },
  );
  await untilPending(turnpike, turnId);
  await sendLargeSignals(turnId, { hasWorker: true });

  // A workflow of the application's, not a turn, with the same signals; the last one names stored content.
  ofProbe = await storeContent(store, new TextEncoder().encode(`named in the last large signal of a workflow ${randomUUID()}`));
  probeId = `probe-${randomUUID()}`;
  workflows.push(probeId);
  await temporal.client.workflow.start('waitsForever', { taskQueue: `nobody-${randomUUID()}`, workflowId: probeId, args: [{}] });
  await sendLargeSignals(probeId, { ref: contentRef(ofProbe), hasWorker: false });
  await untilListed([turnId, probeId]);
});

afterAll(async () => {
  for (const workflowId of workflows) await temporal?.client.workflow.getHandle(workflowId).terminate().catch(() => undefined);
  for (const connection of opened) await connection.close();
  await temporal?.stop();
  for (const [name, value] of environmentBefore) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  if (root) await rm(root, { recursive: true, force: true });
});

/**
 * Five signals of 1.1 MB of junk through a client without codecs; the last one also names `ref`.
 * On a workflow with a worker, each is sent once the workflow task the one before started has
 * completed (a workflow with none starts no task, so none is in flight): the server writes
 * signals that arrive during a workflow task in one batch, which it does not split across pages,
 * and the clients with small limits below take one signal a page, not two.
 */
async function sendLargeSignals(workflowId: string, { ref, hasWorker }: { ref?: string; hasWorker: boolean }): Promise<void> {
  const handle = temporal.clientWith({}).workflow.getHandle(workflowId);
  for (let index = 1; index <= LARGE_SIGNALS; index += 1) {
    const junk = randomBytes(LARGE_SIGNAL_CHARS / 2).toString('hex');
    await handle.signal('junk', { junk, ...(index === LARGE_SIGNALS && ref ? { see: ref } : {}) });
    while (hasWorker && (await handle.describe()).raw.pendingWorkflowTask) await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function untilPending(turnpike: TurnpikeClient, id: string): Promise<TurnState> {
  for (;;) {
    const state = await turnpike.turnState(id);
    if (state.pending.length === 1) return state;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function untilListed(workflowIds: string[]): Promise<void> {
  for (;;) {
    const listed = new Set<string>();
    for await (const execution of temporal.client.workflow.list()) listed.add(execution.workflowId);
    if (workflowIds.every((id) => listed.has(id))) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A client as an application may open it: gRPC's receive limit unless `receiveLimit`, no gRPC retry. */
async function applicationClient(receiveLimit?: number): Promise<Client> {
  const connection = await Connection.connect({
    address: temporal.server.address,
    interceptors: [],
    ...(receiveLimit ? { channelArgs: { 'grpc.max_receive_message_length': receiveLimit } } : {}),
  });
  opened.push(connection);
  return new Client({ connection, namespace: temporal.server.namespace, dataConverter: createTurnpikeDataConverter({ contentStore: store }) });
}

async function cli(argv: string[], client?: TurnpikeClient): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, {
    ...(client ? { client } : {}),
    stdout: { write: (chunk: string | Uint8Array) => (stdout += chunk.toString()) },
    stderr: { write: (chunk: string | Uint8Array) => (stderr += chunk.toString()) },
  });
  return { code, stdout, stderr };
}

async function age(...keys: string[]): Promise<void> {
  const then = new Date(Date.now() - 2 * HOUR);
  for (const key of keys) await utimes(path.join(root, key.slice(0, 2), key), then, then);
}

async function exists(key: string): Promise<boolean> {
  return (await store.get(key)) !== undefined;
}

function junkSignals(events: Array<{ workflowExecutionSignaledEventAttributes?: { signalName?: string | null } | null }>): number {
  return events.filter((event) => event.workflowExecutionSignaledEventAttributes?.signalName === 'junk').length;
}

describe('a history whose pages are larger than 4 MiB', () => {
  it('is read by the CLI and by TurnpikeClient, and the turn shows', async () => {
    // The page is over gRPC's default limit: a connection with that limit is refused it.
    const limited = await applicationClient();
    await expect(limited.workflow.getHandle(turnId).fetchHistory()).rejects.toThrow(/RESOURCE_EXHAUSTED: Received message larger than max/);

    const shown = await cli(['show', turnId, '--json']);
    expect(shown.code, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ turnId, execution: 'RUNNING', state: { status: 'awaiting-input', pending: [{ toolName: 'guarded_action' }] } });

    const connected = await TurnpikeClient.connect();
    try {
      const state = await connected.turnState(turnId);
      expect(state.pending).toHaveLength(1);
      const history = await connected.client.workflow.getHandle(turnId).fetchHistory();
      expect(junkSignals(history.events ?? [])).toBe(LARGE_SIGNALS);
    } finally {
      await connected.close();
    }
  });

  it('does not stop the sweep: the orphan goes, the turn\'s content and what the signals name stay', async () => {
    const orphan = await storeContent(store, new TextEncoder().encode(`old, referred to by nothing ${randomUUID()}`));
    const imageKey = contentKey(image);
    expect(await exists(imageKey)).toBe(true);
    await age(orphan, imageKey, ofProbe);

    const swept = await cli(['content', 'sweep', '--retention', '1h', '--json', '--verbose']);
    expect(swept.code, swept.stderr).toBe(0);
    // The CLI's connection takes the page whole: the sweep notes no smaller limit.
    expect(swept.stderr).not.toContain('connectTemporal');
    const report = JSON.parse(swept.stdout);
    expect(report).toMatchObject({ deletedKeys: [orphan], unreadable: 0, unreadableWorkflows: [], kept: { referenced: 2, unverified: 0 } });
    expect(await exists(orphan)).toBe(false);
    expect(await exists(imageKey)).toBe(true);
    expect(await exists(ofProbe)).toBe(true);
  });

  it('is read in smaller pages through a client with gRPC\'s default receive limit', async () => {
    const orphan = await storeContent(store, new TextEncoder().encode(`old, referred to by nothing ${randomUUID()}`));
    await age(orphan);
    const log: string[] = [];
    const report = await sweepContent({ client: await applicationClient(), store, retention: '1h', log: (line) => log.push(line) });
    expect(report).toMatchObject({ deletedKeys: [orphan], unreadableWorkflows: [], kept: { referenced: 2, unverified: 0 } });
    expect(await exists(contentKey(image))).toBe(true);
    expect(await exists(ofProbe)).toBe(true);
    expect(log.join('\n')).toContain('connectTemporal');
  });
});

describe('a history one event of which is larger than the connection takes', () => {
  it('is named with how to skip it; the sweep reads the others and deletes nothing until it is skipped', async () => {
    // 1.3 MiB: a page of one 1.1 MB signal fits, one of the 1.6 MB signal below does not.
    const client = await applicationClient(1_363_148);
    const bigId = `big-${randomUUID()}`;
    workflows.push(bigId);
    await temporal.client.workflow.start('waitsForever', { taskQueue: `nobody-${randomUUID()}`, workflowId: bigId, args: [{}] });
    await temporal.clientWith({}).workflow.getHandle(bigId).signal('junk', { junk: randomBytes(800_000).toString('hex') });
    await untilListed([bigId]);
    const orphan = await storeContent(store, new TextEncoder().encode(`old, referred to by nothing ${randomUUID()}`));
    await age(orphan);

    const report = await sweepContent({ client, store, retention: '1h' });
    expect(report.unreadableWorkflows).toEqual([{ workflowId: bigId, runId: expect.any(String), error: expect.stringContaining('larger than') }]);
    expect(report).toMatchObject({ deleted: 0, workflowsScanned: 2, kept: { referenced: 2, unverified: 1 } });
    expect(await exists(orphan)).toBe(true);

    const turnpike = new TurnpikeClient({ client, taskQueue: temporal.taskQueue, contentStore: store });
    const refused = await cli(['content', 'sweep', '--retention', '1h'], turnpike);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`workflow ${bigId}`);
    expect(refused.stderr).toContain(`turnpike content sweep --skip-workflow ${bigId}`);
    expect(await exists(orphan)).toBe(true);

    const skipping = await cli(['content', 'sweep', '--retention', '1h', '--skip-workflow', bigId, '--json'], turnpike);
    expect(skipping.code, skipping.stderr).toBe(0);
    expect(JSON.parse(skipping.stdout)).toMatchObject({ deletedKeys: [orphan], workflowsSkipped: 1, workflowsScanned: 2, unreadableWorkflows: [], kept: { referenced: 2 } });
    expect(await exists(orphan)).toBe(false);
    expect(await exists(contentKey(image))).toBe(true);
    expect(await exists(ofProbe)).toBe(true);
  });
});
