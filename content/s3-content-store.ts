/**
 * A content store in an S3 bucket, or in any S3-compatible object store (SeaweedFS, MinIO, Ceph,
 * R2...) given its `endpoint`. Each object is `<prefix><key>`; `storedAt` is its LastModified.
 *
 * Credentials come from the AWS SDK's default chain (AWS_ACCESS_KEY_ID and
 * AWS_SECRET_ACCESS_KEY, a profile, an instance or task role) unless given. `@aws-sdk/client-s3`
 * is an optional peer of turnpike, loaded on first use, so an application that keeps its content
 * elsewhere need not install it.
 */
import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import { importOptional } from '../peers/optional-packages.js';
import { isContentKey, type ContentStore, type StoredObject } from './content-store.js';

export const DEFAULT_CONTENT_PREFIX = 'turnpike/content/';
const DEFAULT_PAGE_SIZE = 1000;

export interface S3ContentStoreOptions {
  bucket: string;
  /** Prepended to every key; a `/` is added when it does not end with one. Default `turnpike/content/`. */
  prefix?: string;
  /** An S3-compatible server, e.g. `http://127.0.0.1:8333`; AWS S3 when unset. */
  endpoint?: string;
  /** Default `us-east-1`. */
  region?: string;
  /** `http://endpoint/bucket/key` rather than `http://bucket.endpoint/key`; most S3-compatible servers need it. */
  forcePathStyle?: boolean;
  /** The SDK's default credential chain when unset. */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** Keys per ListObjectsV2 request while listing (at most 1000, S3's limit). Default 1000. */
  pageSize?: number;
}

type S3Module = typeof import('@aws-sdk/client-s3');

function loadS3(): Promise<S3Module> {
  return importOptional('The S3 content store', ['@aws-sdk/client-s3'], () => import('@aws-sdk/client-s3'));
}

function checkKey(key: string): void {
  if (!isContentKey(key)) throw new Error(`Not a content key: ${JSON.stringify(key)}`);
}

/** S3's answer for an object that is not there: NoSuchKey from GetObject, a bare 404 from others. */
function isNotFound(error: unknown): boolean {
  const { name, $metadata } = (error ?? {}) as { name?: string; $metadata?: { httpStatusCode?: number } };
  return name === 'NoSuchKey' || name === 'NotFound' || $metadata?.httpStatusCode === 404;
}

export class S3ContentStore implements ContentStore {
  readonly description: string;
  readonly kind = 's3';
  readonly bucket: string;
  readonly prefix: string;
  private readonly pageSize: number;
  private closed = false;

  /** Private fields (#): a secret never shows in JSON.stringify or console.log of the store. */
  readonly #options: S3ContentStoreOptions;
  #client?: Promise<{ s3: S3Module; client: S3Client }>;

  constructor(options: S3ContentStoreOptions) {
    this.#options = options;
    if (!options.bucket) throw new TypeError('S3ContentStore: bucket is required');
    this.bucket = options.bucket;
    const prefix = options.prefix ?? DEFAULT_CONTENT_PREFIX;
    this.prefix = prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/`;
    this.pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
    if (!Number.isInteger(this.pageSize) || this.pageSize < 1 || this.pageSize > 1000) {
      throw new TypeError(`S3ContentStore: pageSize must be an integer from 1 to 1000 (got ${String(options.pageSize)})`);
    }
    this.description = `s3://${this.bucket}/${this.prefix}${options.endpoint ? ` at ${options.endpoint}` : ''}`;
  }

  private connect(): Promise<{ s3: S3Module; client: S3Client }> {
    if (this.closed) return Promise.reject(new Error(`The ${this.kind} content store is closed`));
    this.#client ??= loadS3().then((s3) => {
      const config: S3ClientConfig = {
        region: this.#options.region ?? 'us-east-1',
        endpoint: this.#options.endpoint,
        forcePathStyle: this.#options.forcePathStyle,
        credentials: this.#options.credentials,
        // Checksums only where S3 requires them: not every S3-compatible server takes the SDK's
        // default CRC32 trailers, and every read is checked against its SHA-256 key anyway.
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
      };
      return { s3, client: new s3.S3Client(config) };
    });
    this.#client.catch(() => (this.#client = undefined));
    return this.#client;
  }

  /**
   * Stores the object. Storing a key again writes the same bytes again, which gives it a new
   * LastModified: that is the refresh of `storedAt`.
   */
  async put(key: string, bytes: Uint8Array): Promise<void> {
    checkKey(key);
    const { s3, client } = await this.connect();
    await client.send(
      new s3.PutObjectCommand({ Bucket: this.bucket, Key: this.prefix + key, Body: bytes, ContentLength: bytes.byteLength, ContentType: 'application/octet-stream' }),
    );
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    checkKey(key);
    const { s3, client } = await this.connect();
    try {
      const object = await client.send(new s3.GetObjectCommand({ Bucket: this.bucket, Key: this.prefix + key }));
      return object.Body ? await object.Body.transformToByteArray() : new Uint8Array();
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  /** Every object under the prefix whose name is a content key, a ListObjectsV2 page at a time. */
  async *list(): AsyncIterable<StoredObject> {
    const { s3, client } = await this.connect();
    let token: string | undefined;
    do {
      const page = await client.send(new s3.ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.prefix, ContinuationToken: token, MaxKeys: this.pageSize }));
      for (const object of page.Contents ?? []) {
        const key = object.Key?.slice(this.prefix.length);
        if (isContentKey(key) && object.LastModified) yield { key, bytes: object.Size ?? 0, storedAt: object.LastModified };
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  async delete(key: string): Promise<void> {
    checkKey(key);
    const { s3, client } = await this.connect();
    // S3 answers 204 for a key that is not there as for one that was.
    await client.send(new s3.DeleteObjectCommand({ Bucket: this.bucket, Key: this.prefix + key }));
  }

  /** Closes the client's connections; the store cannot be used afterwards. */
  async close(): Promise<void> {
    this.closed = true;
    const pending = this.#client;
    this.#client = undefined;
    if (pending) (await pending.catch(() => undefined))?.client.destroy();
  }
}
