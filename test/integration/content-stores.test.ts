/**
 * One conformance suite for every content store, each against the real thing: a folder, a private
 * PostgreSQL instance (scripts/postgres.ts, as the cluster test runs it) and an S3 server that checks
 * every request's signature (moto, scripts/s3-server.ts). Each store also carries the claim-check
 * codec, and each is built from the URL that TURNPIKE_CONTENT_STORE would hold.
 *
 * Corruption is made behind the store's back, in the backend itself: the file overwritten, the
 * row updated, other bytes put under the object's key.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { Payload } from '@temporalio/common';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLAIM_ENCODING, ClaimCheckCodec } from '../../content/claim-check-codec.js';
import { ContentUnavailableError, contentKey, readVerified, storeContent, type ContentStore, type StoredObject } from '../../content/content-store.js';
import { FileContentStore } from '../../content/file-content-store.js';
import { PostgresContentStore } from '../../content/postgres-content-store.js';
import { S3ContentStore } from '../../content/s3-content-store.js';
import { contentStoreFromUrl } from '../../content/store-from-environment.js';
import { startPostgres, type Postgres } from '../../scripts/postgres.js';
import { startS3Server, type S3Server } from '../../scripts/s3-server.js';
import { freeLowPort } from '../support/free-port.js';

/** Small pages, so listing the test's objects takes several. */
const PAGE_SIZE = 3;

interface Backend {
  /** The store under test, listing PAGE_SIZE objects at a time. */
  store: ContentStore;
  /** The same backend as TURNPIKE_CONTENT_STORE would name it. */
  url: string;
  /** Replaces the stored bytes of `key` without going through the store. */
  corrupt(key: string, bytes: Uint8Array): Promise<void>;
  /**
   * How long storing again must wait to get a later `storedAt`: the backend's clock resolution
   * (S3's LastModified is in whole seconds).
   */
  clockResolutionMs: number;
  stop(): Promise<void>;
}

const directory = mkdtempSync(path.join(tmpdir(), 'turnpike-content-stores-'));
// PostgreSQL runs as the postgres user when we are root: it must reach <directory>/pg.
chmodSync(directory, 0o755);
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function fileBackend(): Promise<Backend> {
  const root = path.join(directory, 'files');
  const store = new FileContentStore(root);
  return {
    store,
    url: `file:${root}`,
    corrupt: (key, bytes) => writeFile(path.join(root, key.slice(0, 2), key), bytes),
    clockResolutionMs: 20,
    stop: async () => {},
  };
}

async function postgresBackend(): Promise<Backend> {
  const postgres: Postgres = await startPostgres({ dataDirectory: path.join(directory, 'pg'), port: await freeLowPort(), user: 'turnpike', password: 'content-test', logFile: path.join(directory, 'postgres.log') });
  const connectionString = `postgresql://${postgres.user}:${postgres.password}@${postgres.host}:${postgres.port}/postgres`;
  const store = new PostgresContentStore({ connectionString, table: 'content_conformance', pageSize: PAGE_SIZE });
  const client = new pg.Client({ connectionString });
  await client.connect();
  return {
    store,
    url: `${connectionString}?table=turnpike_content`,
    corrupt: async (key, bytes) => {
      const updated = await client.query('UPDATE content_conformance SET bytes = $2 WHERE key = $1', [key, Buffer.from(bytes)]);
      expect(updated.rowCount).toBe(1);
    },
    clockResolutionMs: 5,
    stop: async () => {
      await store.close();
      await client.end();
      await postgres.stop();
    },
  };
}

async function s3Backend(): Promise<Backend> {
  const s3: S3Server = await startS3Server({ port: await freeLowPort(), logFile: path.join(directory, 's3-server.log') });
  // The store takes its credentials from the SDK's default chain, as a deployment would.
  process.env.AWS_ACCESS_KEY_ID = s3.credentials.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = s3.credentials.secretAccessKey;
  const client = new S3Client({ endpoint: s3.endpoint, region: s3.region, forcePathStyle: true, credentials: s3.credentials });
  await client.send(new CreateBucketCommand({ Bucket: 'conformance' }));
  await client.send(new CreateBucketCommand({ Bucket: 'from-url' }));
  const store = new S3ContentStore({ bucket: 'conformance', endpoint: s3.endpoint, forcePathStyle: true, pageSize: PAGE_SIZE });
  return {
    store,
    url: `s3://from-url/some/prefix?endpoint=${encodeURIComponent(s3.endpoint)}&region=${s3.region}&forcePathStyle=true`,
    corrupt: async (key, bytes) => {
      await client.send(new PutObjectCommand({ Bucket: 'conformance', Key: `${store.prefix}${key}`, Body: bytes }));
    },
    clockResolutionMs: 1_100,
    stop: async () => {
      await store.close();
      client.destroy();
      await s3.stop();
    },
  };
}

async function listAll(store: ContentStore): Promise<StoredObject[]> {
  const objects: StoredObject[] = [];
  for await (const object of store.list()) objects.push(object);
  return objects;
}

function sameBytes(actual: Uint8Array | undefined, expected: Uint8Array): boolean {
  return actual !== undefined && Buffer.from(actual.buffer, actual.byteOffset, actual.byteLength).equals(Buffer.from(expected.buffer, expected.byteOffset, expected.byteLength));
}

const BACKENDS: Array<[string, () => Promise<Backend>]> = [
  ['file', fileBackend],
  ['PostgreSQL', postgresBackend],
  ['S3', s3Backend],
];

describe.each(BACKENDS)('%s content store', (_name, start) => {
  let backend: Backend;
  let store: ContentStore;

  // Long enough for a first run that installs the S3 server from PyPI (CI installs it before the tests).
  beforeAll(async () => {
    backend = await start();
    store = backend.store;
  }, 15 * 60_000);
  afterAll(() => backend?.stop());

  it('gives back a 20 MB object byte for byte', async () => {
    const bytes = randomBytes(20 * 1024 * 1024);
    const key = await storeContent(store, bytes);
    expect(sameBytes(await store.get(key), bytes)).toBe(true);
    expect(sameBytes(await readVerified(store, key), bytes)).toBe(true);
    expect((await listAll(store)).find((object) => object.key === key)?.bytes).toBe(bytes.length);
  });

  it('gives undefined for a key it does not hold, and readVerified says it is missing', async () => {
    const key = contentKey(randomBytes(32));
    expect(await store.get(key)).toBeUndefined();
    const error = await readVerified(store, key).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ContentUnavailableError);
    expect((error as ContentUnavailableError).reason).toBe('missing');
  });

  it('keeps one object when the same content is stored twice, and refreshes its storedAt', async () => {
    const bytes = randomBytes(1000);
    const key = await storeContent(store, bytes);
    const first = (await listAll(store)).filter((object) => object.key === key);
    expect(first).toHaveLength(1);
    await sleep(backend.clockResolutionMs);
    await store.put(key, bytes);
    const second = (await listAll(store)).filter((object) => object.key === key);
    expect(second).toHaveLength(1);
    expect(second[0]!.storedAt.getTime()).toBeGreaterThan(first[0]!.storedAt.getTime());
    expect(sameBytes(await store.get(key), bytes)).toBe(true);
  });

  it('lists every object once, over several pages', async () => {
    const stored = new Map<string, number>();
    for (let index = 0; index < 3 * PAGE_SIZE + 1; index++) {
      const bytes = randomBytes(100 + index);
      stored.set(await storeContent(store, bytes), bytes.length);
    }
    const listed = await listAll(store);
    const keys = listed.map((object) => object.key);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys).toEqual([...keys].sort());
    for (const [key, size] of stored) {
      const object = listed.find((candidate) => candidate.key === key);
      expect(object?.bytes).toBe(size);
      expect(object?.storedAt).toBeInstanceOf(Date);
    }
  });

  it('deletes an object, and deleting a missing one is not an error', async () => {
    const key = await storeContent(store, randomBytes(500));
    await store.delete(key);
    expect(await store.get(key)).toBeUndefined();
    expect((await listAll(store)).some((object) => object.key === key)).toBe(false);
    await expect(store.delete(key)).resolves.toBeUndefined();
    await expect(store.delete(contentKey(randomBytes(32)))).resolves.toBeUndefined();
  });

  it('readVerified finds bytes that no longer hash to their key', async () => {
    const key = await storeContent(store, randomBytes(2000));
    await backend.corrupt(key, randomBytes(2000));
    const error = await readVerified(store, key).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ContentUnavailableError);
    expect((error as ContentUnavailableError).reason).toBe('corrupt');
  });

  it('claim-checks a 300 KiB payload into a reference and back', async () => {
    const codec = new ClaimCheckCodec({ store });
    const payload: Payload = { metadata: { encoding: new TextEncoder().encode('binary/plain') }, data: randomBytes(300 * 1024) };
    const [claimed] = await codec.encode([payload]);
    expect(new TextDecoder().decode(claimed!.metadata!.encoding)).toBe(CLAIM_ENCODING);
    expect(claimed!.data!.length).toBeLessThan(200);
    const [decoded] = await codec.decode([claimed!]);
    expect(new TextDecoder().decode(decoded!.metadata!.encoding)).toBe('binary/plain');
    expect(sameBytes(decoded!.data ?? undefined, payload.data!)).toBe(true);
  });

  it('is built from its TURNPIKE_CONTENT_STORE URL', async () => {
    const fromUrl = contentStoreFromUrl(backend.url);
    expect(fromUrl).toBeInstanceOf(store.constructor);
    try {
      const bytes = randomBytes(4096);
      const key = await storeContent(fromUrl, bytes);
      expect(sameBytes(await readVerified(fromUrl, key), bytes)).toBe(true);
      expect((await listAll(fromUrl)).map((object) => object.key)).toContain(key);
      await fromUrl.delete(key);
      expect(await fromUrl.get(key)).toBeUndefined();
    } finally {
      await fromUrl.close?.();
    }
  });
});

describe('S3 content store with the wrong credentials', () => {
  let s3: S3Server;
  let client: S3Client;

  beforeAll(async () => {
    s3 = await startS3Server({ port: await freeLowPort(), logFile: path.join(directory, 's3-credentials.log') });
    client = new S3Client({ endpoint: s3.endpoint, region: s3.region, forcePathStyle: true, credentials: s3.credentials });
    await client.send(new CreateBucketCommand({ Bucket: 'signed' }));
  }, 15 * 60_000);
  afterAll(async () => {
    client?.destroy();
    await s3?.stop();
  });

  // The server checks every signature, so the conformance suite above passing means the store
  // signs its requests with the key it was given; and a refusal is an error, never "missing".
  it('is refused with a wrong secret or an unknown key, and never reads that as a missing object', async () => {
    const at = { bucket: 'signed', endpoint: s3.endpoint, forcePathStyle: true } as const;
    const right = new S3ContentStore({ ...at, credentials: s3.credentials });
    const wrongSecret = new S3ContentStore({ ...at, credentials: { accessKeyId: s3.credentials.accessKeyId, secretAccessKey: 'not-the-secret' } });
    const unknownKey = new S3ContentStore({ ...at, credentials: { accessKeyId: 'AKIAUNKNOWNKEY000000', secretAccessKey: s3.credentials.secretAccessKey } });
    try {
      const bytes = randomBytes(1000);
      const key = await storeContent(right, bytes);

      await expect(wrongSecret.get(key)).rejects.toMatchObject({ name: 'SignatureDoesNotMatch', $metadata: { httpStatusCode: 403 } });
      await expect(wrongSecret.put(key, randomBytes(1000))).rejects.toMatchObject({ name: 'SignatureDoesNotMatch' });
      await expect(wrongSecret.delete(key)).rejects.toMatchObject({ name: 'SignatureDoesNotMatch' });
      await expect(listAll(wrongSecret)).rejects.toMatchObject({ name: 'SignatureDoesNotMatch' });
      await expect(unknownKey.get(key)).rejects.toMatchObject({ name: 'InvalidAccessKeyId', $metadata: { httpStatusCode: 403 } });
      await expect(readVerified(unknownKey, key)).rejects.toMatchObject({ name: 'InvalidAccessKeyId' });

      // Nothing the refused stores tried changed the object.
      expect(sameBytes(await readVerified(right, key), bytes)).toBe(true);
    } finally {
      await Promise.all([right.close(), wrongSecret.close(), unknownKey.close()]);
    }
  });
});
