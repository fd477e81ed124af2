/** The claim check and content by reference, over a real folder store: what is stored, what comes back, and how a missing or corrupt object reads. */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ApplicationFailure, type Payload } from '@temporalio/common';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { turnpikeCodecs } from '../../content/data-converter.js';
import { UNDECODABLE_ENCODING, UNDECODABLE_REASON_KEY } from '../../codec/payload-codec.js';
import { CLAIM_ENCODING, ClaimCheckCodec } from '../../content/claim-check-codec.js';
import { contentKey, readVerified, type ContentStore } from '../../content/content-store.js';
import { FileContentStore } from '../../content/file-content-store.js';
import { readStoredContent, storeLargeOutput, storeLargeParts } from '../../content/stored-content.js';
import type { Message } from '../../workflows/types/index.js';

const text = (bytes: Uint8Array | null | undefined) => new TextDecoder().decode(bytes ?? new Uint8Array());
const json = (value: unknown): Payload => ({ metadata: { encoding: new TextEncoder().encode('json/plain') }, data: new TextEncoder().encode(JSON.stringify(value)) });

let folder: string;
let store: FileContentStore;
beforeEach(() => {
  folder = mkdtempSync(path.join(tmpdir(), 'turnpike-claims-'));
  store = new FileContentStore(folder);
});
afterEach(() => rmSync(folder, { recursive: true, force: true }));

async function keys(): Promise<string[]> {
  const found: string[] = [];
  for await (const object of store.list()) found.push(object.key);
  return found;
}

describe('ClaimCheckCodec', () => {
  it('stores a payload at the threshold once, however often it is encoded, and reads it back exactly', async () => {
    const codec = new ClaimCheckCodec({ store, thresholdBytes: 1024 });
    const large = json({ text: randomBytes(2048).toString('base64') });
    const small = json({ text: 'short' });
    const [first, untouched] = await codec.encode([large, small]);
    const [second] = await codec.encode([large]);
    expect(text(first!.metadata!.encoding)).toBe(CLAIM_ENCODING);
    expect(JSON.parse(text(first!.data))).toEqual({ ref: `sha256:${(await keys())[0]}`, bytes: expect.any(Number) });
    expect(second).toEqual(first);
    expect(untouched).toBe(small);
    expect(await keys()).toHaveLength(1);
    const [decoded] = await codec.decode([first!]);
    expect(text(decoded!.data)).toBe(text(large.data));
  });

  it('marks a claim whose object is missing, corrupt or not a reference, naming the reference, and throws when the store cannot be read', async () => {
    const codec = new ClaimCheckCodec({ store, thresholdBytes: 1024 });
    const [claim] = await codec.encode([json({ text: randomBytes(2048).toString('base64') })]);
    const [key] = await keys();
    writeFileSync(path.join(folder, key!.slice(0, 2), key!), 'tampered');
    const [corrupt] = await codec.decode([claim!]);
    expect(text(corrupt!.metadata!.encoding)).toBe(UNDECODABLE_ENCODING);
    expect(text(corrupt!.metadata![UNDECODABLE_REASON_KEY])).toBe(`Stored content sha256:${key} in the file content store is corrupt: its bytes do not hash to its reference`);
    await store.delete(key!);
    const [missing] = await codec.decode([claim!]);
    expect(text(missing!.metadata![UNDECODABLE_REASON_KEY])).toBe(`Stored content sha256:${key} is missing from the file content store`);
    const [malformed] = await codec.decode([{ metadata: { encoding: new TextEncoder().encode(CLAIM_ENCODING) }, data: new TextEncoder().encode('{"ref":"../x"}') }]);
    expect(text(malformed!.metadata![UNDECODABLE_REASON_KEY])).toBe(`its ${CLAIM_ENCODING} data is not a content reference`);
    const broken: ContentStore = { ...store, description: 'broken', get: () => Promise.reject(new Error('connection refused')), put: () => Promise.resolve(), list: () => store.list(), delete: () => Promise.resolve() };
    await expect(new ClaimCheckCodec({ store: broken }).decode([claim!])).rejects.toThrow('connection refused');
  });

  it("says which key a folder store failed to read or write, and the file system's code, never its folder", async () => {
    const bytes = new TextEncoder().encode('x');
    const key = contentKey(bytes);
    writeFileSync(path.join(folder, key.slice(0, 2)), "a file where the key's folder belongs");
    // Each attempt starts only when it is awaited: a rejection nobody awaits yet is an unhandled one.
    const attempts = [[() => store.get(key), 'read'], [() => store.put(key, bytes), 'store'], [() => readVerified(store, key), 'read']] as const;
    for (const [attempt, doing] of attempts) {
      const error = (await (attempt() as Promise<unknown>).catch((caught: unknown) => caught)) as Error & { code?: string };
      expect(error.message).toBe(`The file content store could not ${doing} sha256:${key}: ENOTDIR (${doing === 'read' ? 'open' : 'utime'})`);
      expect(error.code).toBe('ENOTDIR');
    }
  });

  it('runs last, after compression and the user\'s codecs, so what is stored is what history would have held', async () => {
    const codecs = turnpikeCodecs([], { contentStore: store });
    expect(codecs.map((codec) => codec.constructor.name)).toEqual(['CompressionCodec', 'ClaimCheckCodec']);
    let payloads = [json({ text: randomBytes(300 * 1024).toString('base64') })];
    for (const codec of codecs) payloads = await codec.encode(payloads);
    expect(text(payloads[0]!.metadata!.encoding)).toBe(CLAIM_ENCODING);
    const [key] = await keys();
    // The stored object is the gzip payload: compression ran first.
    expect(text((await store.get(key!))!)).toContain('binary/gzip');
  });
});

describe('content by reference', () => {
  const pdf = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(200 * 1024)]);

  it('stores inline parts at the threshold and leaves smaller, URL and invalid ones as they are', async () => {
    const small = { type: 'image' as const, source: { type: 'base64' as const, mediaType: 'image/png', data: randomBytes(1024).toString('base64') } };
    const invalid = { type: 'document' as const, source: { type: 'base64' as const, mediaType: 'application/pdf', data: `${'!'.repeat(200 * 1024)}` } };
    const messages: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'hi' }, small, invalid, { type: 'document', source: { type: 'base64', mediaType: 'application/pdf', data: pdf.toString('base64') } }] }];
    const [stored] = await storeLargeParts(messages, store);
    expect(stored!.content).toEqual([{ type: 'text', text: 'hi' }, small, invalid, { type: 'document', source: { type: 'stored', ref: `sha256:${contentKey(pdf)}`, mediaType: 'application/pdf', bytes: pdf.length } }]);
    // Read back for a model step: the same bytes, inline again.
    expect(await readStoredContent([stored!], store)).toEqual(messages);
  });

  it('stores a large tool output and gives the model its whole JSON, or its first bytes and a note when it is over the limit', async () => {
    const output = { rows: 'é'.repeat(100 * 1024) };
    const result = await storeLargeOutput({ output, isError: false }, store);
    const bytes = Buffer.byteLength(JSON.stringify(output));
    expect(result.output).toEqual({ turnpikeStored: `sha256:${contentKey(Buffer.from(JSON.stringify(output)))}`, mediaType: 'application/json', bytes });
    const tool = (value: unknown): Message => ({ role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 't', output: value }] });
    expect(await readStoredContent([tool(result.output)], store)).toEqual([tool(output)]);
    const [cut] = await readStoredContent([tool(result.output)], store, 1026);
    const view = (cut as { content: Array<{ output: string }> }).content[0]!.output;
    // 1,026 bytes end inside a two-byte character (9 + 508 × 2 + 1): the half character is left out.
    expect(view.startsWith(`{"rows":"${'é'.repeat(508)}\n\n[turnpike: this tool output is ${bytes} bytes of JSON; the first 1026 are shown.`)).toBe(true);
    expect((await storeLargeOutput({ output: { small: true }, isError: false }, store)).output).toEqual({ small: true });
  });

  it('fails a step whose stored content is missing or corrupt with a retryable typed failure naming the reference', async () => {
    const [stored] = await storeLargeParts([{ role: 'user', content: [{ type: 'document', source: { type: 'base64', mediaType: 'application/pdf', data: pdf.toString('base64') } }] }], store);
    const key = contentKey(pdf);
    writeFileSync(path.join(folder, key.slice(0, 2), key), 'tampered');
    const corrupt = await readStoredContent([stored!], store).catch((error: unknown) => error);
    expect(corrupt).toBeInstanceOf(ApplicationFailure);
    expect(corrupt).toMatchObject({ type: 'ContentCorrupt', nonRetryable: false, message: expect.stringContaining(`sha256:${key}`) });
    await store.delete(key);
    const missing = await readStoredContent([stored!], store).catch((error: unknown) => error);
    expect(missing).toMatchObject({ type: 'ContentMissing', nonRetryable: false, details: [{ ref: `sha256:${key}`, store: 'file' }] });
    // The store's kind, not where it is: these reach histories and callers.
    for (const failure of [corrupt, missing] as ApplicationFailure[]) expect(JSON.stringify([failure.message, failure.details])).not.toMatch(/file:\/|turnpike-claims-/);
  });
});
