/**
 * The sweep's parts that need no server: its visibility queries, and how it finds references in
 * payloads wherever a message holds them and however they are encoded.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Payload } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompressionCodec, UNDECODABLE_ENCODING } from '../../codec/payload-codec.js';
import { ClaimCheckCodec, claimReference } from '../../content/claim-check-codec.js';
import { contentRef, keyOfRef, storeContent } from '../../content/content-store.js';
import { keepingWorkflowsQuery, startedSinceQuery } from '../../content/content-sweep.js';
import { FileContentStore } from '../../content/file-content-store.js';
import { ReferenceScanner, payloadsIn } from '../../content/payload-references.js';

const encoder = new TextEncoder();
const json = (value: unknown): Payload => ({ metadata: { encoding: encoder.encode('json/plain') }, data: encoder.encode(JSON.stringify(value)) });

let root: string;
let store: FileContentStore;
beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'turnpike-sweep-unit-'));
  store = new FileContentStore(root);
});
afterAll(async () => rm(root, { recursive: true, force: true }));

describe('the sweep\'s visibility queries', () => {
  it('asks for running workflows and those closed after the cutoff', () => {
    expect(keepingWorkflowsQuery(new Date('2026-11-19T04:00:00.000Z'))).toBe('ExecutionStatus="Running" OR CloseTime > "2026-11-19T04:00:00.000Z"');
  });

  it('asks for workflows started since a time', () => {
    expect(startedSinceQuery(new Date('2026-11-26T04:00:00.000Z'))).toBe('StartTime >= "2026-11-26T04:00:00.000Z"');
  });
});

describe('finding references in payloads', () => {
  it('finds payloads at any depth of a message, in arrays and maps', () => {
    const first = json(1);
    const second = json(2);
    const third = json(3);
    const message = { events: [{ attributes: { input: { payloads: [first, second] } } }, { header: { fields: { trace: third } } }], bytes: new Uint8Array(3) };
    expect(payloadsIn(message)).toEqual([first, second, third]);
  });

  it('finds a key in plain JSON, in gzip, and in a claimed object inside gzip inside a claim', async () => {
    const image = await storeContent(store, encoder.encode('an image'));
    const document = await storeContent(store, encoder.encode('a document'));
    const codecs = [new CompressionCodec(), new ClaimCheckCodec({ store, thresholdBytes: 1024 })];
    // Encoded as the data converter encodes: compression first, then the claim check.
    let big = [json({ content: [{ ref: contentRef(image) }], padding: randomBytes(4096).toString('hex') })];
    for (const codec of codecs) big = await codec.encode(big);
    const claim = keyOfRef(claimReference(big[0] as Payload)?.ref);
    expect(claim).toBeDefined();
    const keys = new Set<string>();
    const log: string[] = [];
    const scanner = new ReferenceScanner(codecs, (line) => log.push(line));
    await scanner.scan({ input: big, note: json({ text: `see ${contentRef(document)}` }) }, keys, 'here');
    expect([...keys].sort()).toEqual([image, document, claim].sort());
    expect(log).toEqual([]);
  });

  it('reads a claimed object once however many payloads claim it', async () => {
    let reads = 0;
    const counting = { description: 'counting', put: store.put.bind(store), list: store.list.bind(store), delete: store.delete.bind(store), get: (key: string) => ((reads += 1), store.get(key)) };
    const codec = new ClaimCheckCodec({ store: counting, thresholdBytes: 1024 });
    const [claimed] = await codec.encode([json({ padding: randomBytes(2048).toString('hex') })]);
    const scanner = new ReferenceScanner([codec], () => undefined);
    await scanner.scan({ first: claimed, again: { ...(claimed as Payload) } }, new Set(), 'here');
    await scanner.scan([claimed], new Set(), 'elsewhere');
    expect(reads).toBe(1);
  });

  it('counts a payload a codec marked undecodable, and one it cannot read, and goes on', async () => {
    const scanner = new ReferenceScanner([new CompressionCodec()], () => undefined);
    const broken: Payload = { metadata: { encoding: encoder.encode('binary/gzip') }, data: encoder.encode('not gzip') };
    const foreign: Payload = { metadata: { encoding: encoder.encode('binary/encrypted') }, data: encoder.encode('secret') };
    const keys = new Set<string>();
    await scanner.scan([broken, foreign, json(`sha256:${'a'.repeat(64)}`)], keys, 'here');
    expect(scanner.undecodable).toBe(1);
    expect(scanner.unreadable).toBe(1);
    expect([...keys]).toEqual(['a'.repeat(64)]);
    expect(UNDECODABLE_ENCODING).toBe('binary/turnpike-undecodable');
  });
});
