/**
 * `turnpike content get` and `content sweep` in-process through `runCli`, on a file store in a
 * temporary folder named by TURNPIKE_CONTENT_STORE and a Temporal server of this file's own
 * (the sweep reads the whole namespace).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../cli/main.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { CompressionCodec } from '../../codec/payload-codec.js';
import { ClaimCheckCodec, claimReference } from '../../content/claim-check-codec.js';
import { contentRef, keyOfRef, storeContent } from '../../content/content-store.js';
import { FileContentStore } from '../../content/file-content-store.js';
import { CONTENT_STORE_VARIABLE } from '../../content/store-from-environment.js';
import { startOwnTemporal, type OwnTemporal } from '../support/own-temporal.js';
import { REVERSED_ENCODING, ReversingCodec } from '../support/reversing-codec.js';

const encoder = new TextEncoder();

let temporal: OwnTemporal;
let client: TurnpikeClient;
let root: string;
let store: FileContentStore;

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'turnpike-cli-content-'));
  process.env[CONTENT_STORE_VARIABLE] = `file:${root}`;
  store = new FileContentStore(root);
  temporal = await startOwnTemporal({ contentStore: store });
  client = new TurnpikeClient({ client: temporal.client, taskQueue: temporal.taskQueue, contentStore: store });
});

afterAll(async () => {
  delete process.env[CONTENT_STORE_VARIABLE];
  await temporal?.stop();
  if (root) await rm(root, { recursive: true, force: true });
});

interface Run {
  code: number;
  stdout: Buffer;
  stderr: string;
}

async function cli(...argv: string[]): Promise<Run> {
  const out: Buffer[] = [];
  let stderr = '';
  const code = await runCli(argv, {
    client,
    stdout: { write: (chunk: string | Uint8Array) => out.push(Buffer.from(chunk)) },
    stderr: { write: (chunk: string | Uint8Array) => (stderr += chunk.toString()) },
  });
  return { code, stdout: Buffer.concat(out), stderr };
}

function fileOf(key: string): string {
  return path.join(root, key.slice(0, 2), key);
}

/** A claimed payload of `value`, stored as the data converter stores one: compressed, (`codecs`,) then claimed. */
async function claim(value: unknown, codecs: PayloadCodec[] = []): Promise<string> {
  let payloads: Payload[] = [{ metadata: { encoding: encoder.encode('json/plain') }, data: encoder.encode(JSON.stringify(value)) }];
  for (const codec of [new CompressionCodec(), ...codecs, new ClaimCheckCodec({ store, thresholdBytes: 1024 })]) payloads = await codec.encode(payloads);
  const key = keyOfRef(claimReference(payloads[0] as Payload)?.ref);
  if (!key) throw new Error('not claimed');
  return key;
}

describe('turnpike content get', () => {
  it('writes an object byte for byte, to a file or to stdout', async () => {
    const bytes = randomBytes(5_000);
    const key = await storeContent(store, bytes);
    const out = path.join(root, 'out.bin');

    const toFile = await cli('content', 'get', contentRef(key), '--out', out);
    expect(toFile.code, toFile.stderr).toBe(0);
    expect(toFile.stdout.toString()).toContain(`wrote 5000 bytes to ${out}`);
    expect(Buffer.compare(await readFile(out), bytes)).toBe(0);

    const toStdout = await cli('content', 'get', contentRef(key));
    expect(toStdout.code, toStdout.stderr).toBe(0);
    expect(Buffer.compare(toStdout.stdout, bytes)).toBe(0);

    const asJson = await cli('content', 'get', contentRef(key), '--json');
    expect(asJson.code, asJson.stderr).toBe(0);
    const { base64, ...about } = JSON.parse(asJson.stdout.toString()) as { base64: string };
    expect(about).toEqual({ ref: contentRef(key), bytes: 5000 });
    expect(Buffer.compare(Buffer.from(base64, 'base64'), bytes)).toBe(0);
  });

  it('writes a stored tool output, JSON kept as it is, unchanged', async () => {
    const json = encoder.encode(JSON.stringify({ rows: [{ id: 1, note: randomUUID() }] }));
    const key = await storeContent(store, json);
    const run = await cli('content', 'get', contentRef(key));
    expect(run.code, run.stderr).toBe(0);
    expect(Buffer.compare(run.stdout, Buffer.from(json))).toBe(0);
  });

  it('writes a claimed payload as the JSON it holds, and its stored bytes with --raw', async () => {
    const value = { role: 'tool', content: [{ type: 'text', text: randomBytes(3_000).toString('hex') }] };
    const key = await claim(value);

    const decoded = await cli('content', 'get', contentRef(key));
    expect(decoded.code, decoded.stderr).toBe(0);
    expect(JSON.parse(decoded.stdout.toString())).toEqual(value);

    const out = path.join(root, 'claimed.json');
    const toFile = await cli('content', 'get', contentRef(key), '--out', out, '--json');
    expect(JSON.parse(toFile.stdout.toString())).toEqual({ ref: contentRef(key), bytes: JSON.stringify(value).length, encoding: 'json/plain', out });
    expect(JSON.parse(await readFile(out, 'utf8'))).toEqual(value);

    const raw = await cli('content', 'get', contentRef(key), '--raw');
    expect(raw.code, raw.stderr).toBe(0);
    expect(Buffer.compare(raw.stdout, await readFile(fileOf(key)))).toBe(0);
  });

  it('refuses a claimed payload still in an encoding of the application\'s codec, and gives its stored bytes with --raw', async () => {
    const key = await claim({ secret: randomBytes(3_000).toString('hex') }, [new ReversingCodec()]);
    const refused = await cli('content', 'get', contentRef(key));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(contentRef(key));
    expect(refused.stderr).toContain(REVERSED_ENCODING);
    expect(refused.stdout.length).toBe(0);

    const raw = await cli('content', 'get', contentRef(key), '--raw');
    expect(raw.code, raw.stderr).toBe(0);
    expect(Buffer.compare(raw.stdout, await readFile(fileOf(key)))).toBe(0);
  });

  it('exits 4 naming the reference when there is no such object', async () => {
    const ref = contentRef('0'.repeat(64));
    const run = await cli('content', 'get', ref);
    expect(run.code).toBe(4);
    expect(run.stderr).toContain(ref);
    expect(run.stdout.length).toBe(0);
  });

  it('exits 1 naming the reference when the object does not hash to it', async () => {
    const key = await storeContent(store, encoder.encode(`soon corrupt ${randomUUID()}`));
    await writeFile(fileOf(key), 'other bytes');
    const run = await cli('content', 'get', contentRef(key), '--json');
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stderr)).toMatchObject({ error: { exitCode: 1, kind: 'corrupt' } });
    expect(run.stderr).toContain(contentRef(key));
    expect(run.stdout.length).toBe(0);
  });

  it('refuses what is not a reference as a usage error', async () => {
    expect((await cli('content', 'get', 'sha256:abc')).code).toBe(2);
  });
});

describe('turnpike content sweep', () => {
  it('reports what it would delete with --dry-run --json, and deletes it without', async () => {
    const old = await storeContent(store, encoder.encode(`old and referred to by nothing ${randomUUID()}`));
    const referenced = await storeContent(store, encoder.encode(`old, named by a running workflow ${randomUUID()}`));
    const workflowId = `idle-${randomUUID()}`;
    await temporal.client.workflow.start('waitsForever', { taskQueue: `nobody-${randomUUID()}`, workflowId, args: [{ see: contentRef(referenced) }] });
    const then = new Date(Date.now() - 2 * 3_600_000);
    for (const key of [old, referenced]) await utimes(fileOf(key), then, then);
    // A temporary file of an interrupted write, too young to remove.
    await mkdir(path.join(root, 'ff'), { recursive: true });
    await writeFile(path.join(root, 'ff', `${'f'.repeat(64)}.${randomUUID()}.partial`), 'half');
    try {
      for (;;) {
        const listed = await temporal.client.workflow.count(`WorkflowId="${workflowId}"`);
        if (listed.count > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }

      const dry = await cli('content', 'sweep', '--retention', '1h', '--dry-run', '--json');
      expect(dry.code, dry.stderr).toBe(0);
      const report = JSON.parse(dry.stdout.toString());
      expect(report).toMatchObject({ dryRun: true, deleted: 1, deletedKeys: [old], kept: { referenced: 1 }, unreadable: 0, workflowsScanned: 1 });
      expect(await store.get(old)).toBeDefined();

      const swept = await cli('content', 'sweep', '--retention', '1h');
      expect(swept.code, swept.stderr).toBe(0);
      expect(swept.stdout.toString()).toMatch(/deleted\s+1 \(\d+ bytes\)/);
      expect(await store.get(old)).toBeUndefined();
      expect(await store.get(referenced)).toBeDefined();
    } finally {
      await temporal.client.workflow.getHandle(workflowId).terminate();
    }
  });

  it('refuses a retention that is not a duration as a usage error', async () => {
    expect((await cli('content', 'sweep', '--retention', '7 days')).code).toBe(2);
    expect((await cli('content', 'sweep', '--retention', '0h')).code).toBe(2);
  });
});
