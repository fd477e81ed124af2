/**
 * The codec server and payloads kept in the content store (the claim check): /decode of a
 * claimed payload answers the original payload, read back from the store the workers write to;
 * a claim whose object is missing, or whose bytes are not its own, decodes to the
 * `binary/turnpike-undecodable` marker with a reason naming the reference, never an error.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Payload } from '@temporalio/common';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCodecServer } from '../../api/codec-server.js';
import { turnpikeCodecs } from '../../content/data-converter.js';
import { UNDECODABLE_ENCODING, UNDECODABLE_REASON_KEY } from '../../codec/payload-codec.js';
import { CLAIM_ENCODING, claimReference } from '../../content/claim-check-codec.js';
import { keyOfRef } from '../../content/content-store.js';
import { FileContentStore } from '../../content/file-content-store.js';

interface JsonPayload {
  metadata: Record<string, string>;
  data: string;
}

const base64 = (text: string) => Buffer.from(text).toString('base64');
const text = (value: string) => Buffer.from(value, 'base64').toString();

let folder: string;
let store: FileContentStore;
let server: FastifyInstance;

beforeAll(async () => {
  folder = mkdtempSync(path.join(tmpdir(), 'turnpike-codec-claims-'));
  store = new FileContentStore(folder);
  server = await buildCodecServer({ contentStore: store });
});
afterAll(async () => {
  await server?.close();
  rmSync(folder, { recursive: true, force: true });
});

/** A JSON payload of ~300 KB of incompressible text: over the claim threshold even after gzip. */
function largePayload(): JsonPayload {
  const value = { text: `claimed-payload-marker ${randomBytes(225 * 1024).toString('base64')}` };
  return { metadata: { encoding: base64('json/plain') }, data: base64(JSON.stringify(value)) };
}

/** The payload as a worker writes it to history: turnpike's codecs over the same store. */
async function claimedAsAWorkerWrites(payload: JsonPayload): Promise<JsonPayload> {
  let payloads: Payload[] = [{ metadata: { encoding: Buffer.from(text(payload.metadata.encoding!)) }, data: Buffer.from(payload.data, 'base64') }];
  for (const codec of turnpikeCodecs([], { contentStore: store })) payloads = await codec.encode(payloads);
  const [claimed] = payloads;
  return {
    metadata: Object.fromEntries(Object.entries(claimed!.metadata ?? {}).map(([key, value]) => [key, Buffer.from(value!).toString('base64')])),
    data: Buffer.from(claimed!.data!).toString('base64'),
  };
}

async function decode(payloads: JsonPayload[]): Promise<JsonPayload[]> {
  const response = await server.inject({ method: 'POST', url: '/default/decode', payload: JSON.stringify({ payloads }), headers: { 'content-type': 'application/json' } });
  expect(response.statusCode).toBe(200);
  return (response.json() as { payloads: JsonPayload[] }).payloads;
}

function storedFile(claimed: JsonPayload): { ref: string; file: string } {
  const reference = claimReference({ data: Buffer.from(claimed.data, 'base64') })!;
  const key = keyOfRef(reference.ref)!;
  return { ref: reference.ref, file: path.join(folder, key.slice(0, 2), key) };
}

describe('codec server: claimed payloads', () => {
  it('decodes a claimed payload to the original, read from the content store', async () => {
    const original = largePayload();
    const claimed = await claimedAsAWorkerWrites(original);
    expect(text(claimed.metadata.encoding!)).toBe(CLAIM_ENCODING);
    expect(text(claimed.data)).toMatch(/^\{"ref":"sha256:[0-9a-f]{64}","bytes":\d+\}$/);
    await expect(decode([claimed])).resolves.toEqual([original]);
  });

  it('encodes a large payload to a claim it then decodes, as the Temporal CLI round-trips one', async () => {
    const original = largePayload();
    const response = await server.inject({ method: 'POST', url: '/encode', payload: JSON.stringify({ payloads: [original] }), headers: { 'content-type': 'application/json' } });
    const [claimed] = (response.json() as { payloads: JsonPayload[] }).payloads;
    expect(text(claimed!.metadata.encoding!)).toBe(CLAIM_ENCODING);
    await expect(decode([claimed!])).resolves.toEqual([original]);
  });

  it.each([
    ['missing', (file: string) => rmSync(file), 'is missing from'],
    ['corrupt', (file: string) => writeFileSync(file, 'other bytes'), 'is corrupt'],
  ])('decodes a claim whose object is %s to the undecodable marker, with a reason naming the reference', async (_, spoil, says) => {
    const plain = { metadata: { encoding: base64('json/plain') }, data: base64('"small"') };
    const claimed = await claimedAsAWorkerWrites(largePayload());
    const { ref, file } = storedFile(claimed);
    spoil(file);
    const [marker, untouched] = await decode([claimed, plain]);
    expect(text(marker!.metadata.encoding!)).toBe(UNDECODABLE_ENCODING);
    expect(marker!.data).toBe('');
    const reason = text(marker!.metadata[UNDECODABLE_REASON_KEY]!);
    expect(reason).toContain(ref);
    expect(reason).toContain(says);
    // The other payloads of the same request decode as usual.
    expect(untouched).toEqual(plain);
  });
});
