/**
 * The retention sweep on a real Temporal server of this file's own (the sweep reads every
 * workflow of the namespace; other files' workflows must not take part) and a file store in a
 * temporary folder. Objects are made old by setting their files' times into the past.
 *
 * Running workflows are started on a task queue no worker polls: they stay running with their
 * input in history. The closed one is a real turn run to completion by a turnpike worker.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, mkdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompressionCodec } from '../../codec/payload-codec.js';
import { ClaimCheckCodec, claimReference, isClaimed } from '../../content/claim-check-codec.js';
import { contentKey, contentRef, keyOfRef, storeContent, type ContentStore } from '../../content/content-store.js';
import { keepingWorkflowsQuery, sweepContent, type SweepOptions } from '../../content/content-sweep.js';
import { FileContentStore } from '../../content/file-content-store.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import type { AgentTurnInput } from '../../workflows/types/index.js';
import { startOwnTemporal, type OwnTemporal } from '../support/own-temporal.js';
import { ReversingCodec } from '../support/reversing-codec.js';

const HOUR = 3_600_000;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

let temporal: OwnTemporal;
let root: string;
let store: FileContentStore;
const started: Array<{ client: Client; workflowId: string }> = [];

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'turnpike-sweep-'));
  store = new FileContentStore(root);
  temporal = await startOwnTemporal({ contentStore: store });
});

afterAll(async () => {
  for (const { client, workflowId } of started) await client.workflow.getHandle(workflowId).terminate().catch(() => undefined);
  await temporal?.stop();
  if (root) await rm(root, { recursive: true, force: true });
});

async function put(text: string): Promise<string> {
  return storeContent(store, encoder.encode(text));
}

function fileOf(key: string): string {
  return path.join(root, key.slice(0, 2), key);
}

/** Sets the object's stored time two hours back. */
async function age(...keys: string[]): Promise<void> {
  const then = new Date(Date.now() - 2 * HOUR);
  for (const key of keys) await utimes(fileOf(key), then, then);
}

/** Starts a workflow on a task queue no worker polls: it stays running, `input` in its history. */
async function startIdle(client: Client, input: unknown): Promise<string> {
  const workflowId = `idle-${randomUUID()}`;
  await client.workflow.start('waitsForever', { taskQueue: `nobody-${randomUUID()}`, workflowId, args: [input] });
  started.push({ client, workflowId });
  return workflowId;
}

/** Waits until visibility lists every one of `workflowIds` as the sweep's query would, with `closed` ones closed. */
async function untilListed(workflowIds: string[], closed: string[] = []): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const listed = new Map<string, boolean>();
    for await (const execution of temporal.client.workflow.list()) listed.set(execution.workflowId, execution.status.name !== 'RUNNING');
    if (workflowIds.every((id) => listed.has(id)) && closed.every((id) => listed.get(id))) return;
    if (Date.now() > deadline) throw new Error(`visibility never listed ${workflowIds.join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The key of the claimed object a workflow's input was replaced by. */
async function claimedInputKey(client: Client, workflowId: string): Promise<{ key: string; historyText: string }> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const [input] = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads ?? [];
  expect(input && isClaimed(input as Payload)).toBe(true);
  const key = keyOfRef(claimReference(input as Payload)?.ref);
  if (!key) throw new Error('the input is not a claim');
  const historyText = (history.events ?? []).flatMap((event) => event.workflowExecutionStartedEventAttributes?.input?.payloads ?? []).map((payload) => decoder.decode(payload.data ?? new Uint8Array())).join('\n');
  return { key, historyText };
}

async function listedBy(query: string): Promise<Set<string>> {
  const ids = new Set<string>();
  for await (const execution of temporal.client.workflow.list({ query })) ids.add(execution.workflowId);
  return ids;
}

async function sweep(options: Partial<SweepOptions> = {}) {
  const log: string[] = [];
  const report = await sweepContent({ client: temporal.client, store, retention: '1h', log: (line) => log.push(line), ...options });
  return { report, log };
}

async function exists(key: string): Promise<boolean> {
  return (await store.get(key)) !== undefined;
}

describe('the content sweep', () => {
  it('reads no history when nothing in the store is older than the retention', async () => {
    const fresh = await put(`fresh ${randomUUID()}`);
    const { report } = await sweep();
    expect(report).toMatchObject({ objects: 1, workflowsScanned: 0, deleted: 0, kept: { recent: 1, referenced: 0, unverified: 0 } });
    expect(await exists(fresh)).toBe(true);
    await store.delete(fresh);
  });

  it('keeps what running and recently closed workflows refer to, also inside a claimed payload, and deletes the rest that is old', async () => {
    const nested = await put('an image that a message in a claimed payload refers to');
    const plain = await put('a document that a running workflow names in its plain JSON input');
    const ofClosedTurn = await put('a document that a completed turn was given');
    const orphans = [await put('old, referred to by nothing (1)'), await put('old, referred to by nothing (2)')];
    const fresh = await put('stored a moment ago, referred to by nothing');

    // A running workflow whose input is over the claim threshold: its history holds only the claim.
    const claiming = temporal.clientWith({ payloadCodecs: [new CompressionCodec(), new ClaimCheckCodec({ store, thresholdBytes: 1024 })] });
    const message = { role: 'user', content: [{ type: 'image', ref: contentRef(nested) }], padding: randomBytes(4096).toString('hex') };
    const claimedId = await startIdle(claiming, message);
    const { key: claim, historyText } = await claimedInputKey(claiming, claimedId);
    expect(historyText).not.toContain(nested);

    const plainId = await startIdle(temporal.client, { note: `see ${contentRef(plain)}` });

    const turnId = `turn-${randomUUID()}`;
    const turnInput: AgentTurnInput = { model: { provider: 'scripted', model: 'demo' }, messages: [{ role: 'user', content: `summarise ${contentRef(ofClosedTurn)}` }] };
    const turn = await temporal.client.workflow.start('agentTurn', { taskQueue: temporal.taskQueue, workflowId: turnId, args: [turnInput] });
    expect(((await turn.result()) as { status: string }).status).toBe('completed');

    // A temporary file a crash left behind.
    const partial = path.join(root, 'ab', `${'ab'.repeat(32)}.${randomUUID()}.partial`);
    await mkdir(path.dirname(partial), { recursive: true });
    await writeFile(partial, 'half an object');
    const then = new Date(Date.now() - 2 * HOUR);
    await utimes(partial, then, then);

    await age(nested, plain, ofClosedTurn, claim, ...orphans);
    await untilListed([claimedId, plainId, turnId], [turnId]);

    // The server's answer to the sweep's query: the closed turn is listed while its close time is after the cutoff, and not after.
    expect(await listedBy(keepingWorkflowsQuery(new Date(Date.now() - HOUR)))).toEqual(new Set([claimedId, plainId, turnId]));
    expect(await listedBy(keepingWorkflowsQuery(new Date(Date.now() + 1_000)))).toEqual(new Set([claimedId, plainId]));

    const dry = await sweep({ dryRun: true });
    expect(dry.report).toMatchObject({ dryRun: true, objects: 7, kept: { recent: 1, referenced: 4, unverified: 0 }, deleted: 2, unreadable: 0, partialsRemoved: 0 });
    expect(dry.report.deletedKeys.sort()).toEqual([...orphans].sort());
    expect(dry.report.workflowsScanned).toBe(3);
    for (const key of [...orphans, fresh, nested, claim]) expect(await exists(key)).toBe(true);
    await expect(stat(partial)).resolves.toBeDefined();

    const { report } = await sweep();
    expect(report).toMatchObject({ dryRun: false, objects: 7, kept: { recent: 1, referenced: 4, unverified: 0 }, deleted: 2, unreadable: 0, partialsRemoved: 1 });
    expect(report.deletedKeys.sort()).toEqual([...orphans].sort());
    expect(report.bytesDeleted).toBe('old, referred to by nothing (1)'.length * 2);
    for (const key of orphans) expect(await exists(key)).toBe(false);
    for (const key of [fresh, nested, plain, ofClosedTurn, claim]) expect(await exists(key)).toBe(true);
    await expect(stat(partial)).rejects.toThrow();

    // The running workflow still reads its input: the claim and what it refers to are there.
    const again = await sweep();
    expect(again.report).toMatchObject({ objects: 5, deleted: 0, kept: { recent: 1, referenced: 4 } });
  });

  it('keeps an object stored again after the sweep listed it', async () => {
    const bytes = encoder.encode(`old, and stored again while the sweep reads histories ${randomUUID()}`);
    const refreshed = await storeContent(store, bytes);
    await age(refreshed);
    let listings = 0;
    // The store as the sweep sees it; once the first listing is done, someone stores the same content again.
    const storingAgain: ContentStore = {
      description: store.description,
      get: (key) => store.get(key),
      put: (key, value) => store.put(key, value),
      delete: (key) => store.delete(key),
      async *list() {
        yield* store.list();
        listings += 1;
        if (listings === 1) await store.put(refreshed, bytes);
      },
    };
    const { report } = await sweep({ store: storingAgain });
    expect(listings).toBe(2);
    expect(report.deletedKeys).toEqual([]);
    expect(report.kept.recent).toBe(2); // the one stored a moment ago in the test before, and this one
    expect(await exists(refreshed)).toBe(true);
  });

  it('keeps an image a turn was sent by reference through TurnpikeClient, after the turn completed', async () => {
    const image = randomBytes(200 * 1024);
    const turnpike = new TurnpikeClient({ client: temporal.client, taskQueue: temporal.taskQueue, contentStore: store });
    const turnId = `turn-${randomUUID()}`;
    const handle = await turnpike.startTurn(
      {
        model: { provider: 'scripted', model: 'demo' },
        messages: [{ role: 'user', content: [{ type: 'text', text: 'what is in this picture?' }, { type: 'image', source: { type: 'base64', mediaType: 'image/png', data: image.toString('base64') } }] }],
      },
      { turnId },
    );
    expect(((await handle.result()) as { status: string }).status).toBe('completed');
    const key = contentKey(image);
    expect(await exists(key)).toBe(true);
    await age(key);
    await untilListed([turnId], [turnId]);

    const { report } = await sweep();
    expect(report).toMatchObject({ deleted: 0, unreadable: 0 });
    expect(await exists(key)).toBe(true);
  });

  it('keeps what a schedule\'s action refers to, claimed or not, until the schedule is deleted', async () => {
    const nested = await put(`an image the input of a scheduled workflow refers to ${randomUUID()}`);
    const claiming = temporal.clientWith({ payloadCodecs: [new CompressionCodec(), new ClaimCheckCodec({ store, thresholdBytes: 1024 })] });
    const scheduleId = `schedule-${randomUUID()}`;
    const schedule = await claiming.schedule.create({
      scheduleId,
      spec: { intervals: [{ every: '1 day' }] },
      action: {
        type: 'startWorkflow',
        workflowType: 'waitsForever',
        taskQueue: `nobody-${randomUUID()}`,
        args: [{ content: [{ type: 'image', ref: contentRef(nested) }], padding: randomBytes(4096).toString('hex') }],
      },
      state: { paused: true },
    });
    // The schedule as the server holds it: its action's input is a claim.
    const described = await claiming.workflowService.describeSchedule({ namespace: temporal.server.namespace, scheduleId });
    const [input] = described.schedule?.action?.startWorkflow?.input?.payloads ?? [];
    expect(input && isClaimed(input as Payload)).toBe(true);
    const claim = keyOfRef(claimReference(input as Payload)?.ref) as string;
    expect(await exists(claim)).toBe(true);
    await age(nested, claim);
    try {
      const { report } = await sweep();
      expect(report).toMatchObject({ schedulesScanned: 1, deleted: 0, unreadable: 0 });
      expect(await exists(nested)).toBe(true);
    } finally {
      await schedule.delete();
    }
    const after = await sweep();
    expect(after.report.deletedKeys.sort()).toEqual([claim, nested].sort());
  });

  it('deletes nothing while a payload is in an encoding its codecs do not read, and reads it with the codec given', async () => {
    const hidden = await put('named only inside a payload of a codec of the application');
    const orphan = await put('old and referred to by nothing');
    const reversing = new ReversingCodec();
    const client = temporal.clientWith({ payloadCodecs: [new CompressionCodec(), reversing, new ClaimCheckCodec({ store, thresholdBytes: 1024 })] });
    const workflowId = await startIdle(client, { document: contentRef(hidden) });
    await age(hidden, orphan);
    await untilListed([workflowId]);

    const { report, log } = await sweep();
    expect(report.unreadable).toBeGreaterThanOrEqual(1);
    expect(report.deleted).toBe(0);
    expect(report.kept.unverified).toBeGreaterThanOrEqual(2);
    expect(await exists(orphan)).toBe(true);
    expect(log.join('\n')).toContain(`workflow ${workflowId}`);

    const withCodec = await sweep({ codecs: [new CompressionCodec(), reversing, new ClaimCheckCodec({ store })] });
    expect(withCodec.report).toMatchObject({ unreadable: 0, deletedKeys: [orphan] });
    expect(await exists(hidden)).toBe(true);
    expect(await exists(orphan)).toBe(false);
  });
});
