/**
 * Where turnpike keeps content too large for workflow history: images and documents in user
 * messages, large tool results, and any other payload over the claim-check threshold
 * (claim-check-codec.ts). History holds only a reference, `sha256:<hex>`, the SHA-256 of the
 * stored bytes, so identical content is stored once and every read can be checked.
 *
 * A store is a flat map from key (the 64 lowercase hex digits of the SHA-256) to bytes. Every
 * process that reads or writes turn payloads uses the same store: workers, clients, the HTTP
 * API and the codec server. Adapters: the local filesystem (file-content-store.ts, the default),
 * PostgreSQL and S3-compatible object stores. Retention is the sweep's job (content-sweep.ts).
 */
import { createHash } from 'node:crypto';

/** One object in a store, as the retention sweep sees it. */
export interface StoredObject {
  key: string;
  bytes: number;
  /** When it was last stored: storing the same content again refreshes it. */
  storedAt: Date;
}

export interface ContentStore {
  /**
   * A short description for operators' logs (the sweep's), e.g. `file:/srv/turnpike/content`.
   * Errors that reach histories, clients and the dashboard never carry it: they name the `kind`.
   */
  readonly description: string;
  /** What the store is, as errors name it, e.g. `file`, `postgresql`, `s3`: never where it is. */
  readonly kind?: string;
  /**
   * Stores `bytes` under `key` (their SHA-256, hex). Idempotent: storing a key again keeps one
   * object and refreshes its `storedAt`. Resolves only once the bytes are durable.
   */
  put(key: string, bytes: Uint8Array): Promise<void>;
  /** The stored bytes, or undefined when there is no object with this key. Store failures throw. */
  get(key: string): Promise<Uint8Array | undefined>;
  /** Every stored object (the retention sweep's input). */
  list(): AsyncIterable<StoredObject>;
  /** Removes the object; removing a missing key is not an error. */
  delete(key: string): Promise<void>;
  /**
   * Removes what interrupted writes left behind (temporary files, unfinished uploads) last
   * touched before `olderThan`, and gives how many. The retention sweep calls it when present.
   */
  removeStalePartials?(olderThan: Date): Promise<number>;
  /** Releases connections. */
  close?(): Promise<void>;
}

/** A content reference as it appears in history and messages: `sha256:` and 64 hex digits. */
export const CONTENT_REF_PATTERN = /sha256:([0-9a-f]{64})/g;
const KEY = /^[0-9a-f]{64}$/;

/** The store key of `bytes`: their SHA-256 in lowercase hex. */
export function contentKey(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

export function isContentKey(key: unknown): key is string {
  return typeof key === 'string' && KEY.test(key);
}

/** `sha256:<key>` */
export function contentRef(key: string): string {
  return `sha256:${key}`;
}

/** The key a `sha256:<hex>` reference names, or undefined when it is not one. */
export function keyOfRef(ref: unknown): string | undefined {
  if (typeof ref !== 'string' || !ref.startsWith('sha256:')) return undefined;
  const key = ref.slice('sha256:'.length);
  return KEY.test(key) ? key : undefined;
}

/** Every content key referenced in `text` (history payloads, decoded or not). */
export function referencedKeys(text: string): string[] {
  return [...text.matchAll(CONTENT_REF_PATTERN)].map((match) => match[1] as string);
}

/**
 * How errors name `store`: by its kind (`the file content store`), never by its location, which
 * is the server's business, not the caller's.
 */
export function contentStoreName(store: ContentStore): string {
  return store.kind ? `the ${store.kind} content store` : 'the content store';
}

/**
 * Why stored content could not be read: `missing` (no object) or `corrupt` (its bytes do not
 * hash to its key). `store` is how the message names the store ({@link contentStoreName}).
 */
export class ContentUnavailableError extends Error {
  constructor(
    readonly ref: string,
    readonly reason: 'missing' | 'corrupt',
    store: string,
  ) {
    super(reason === 'missing' ? `Stored content ${ref} is missing from ${store}` : `Stored content ${ref} in ${store} is corrupt: its bytes do not hash to its reference`);
    this.name = reason === 'missing' ? 'ContentMissing' : 'ContentCorrupt';
  }
}

/** Reads `key` and checks its hash: the bytes, or a {@link ContentUnavailableError}. Store failures throw as they are. */
export async function readVerified(store: ContentStore, key: string): Promise<Uint8Array> {
  const bytes = await store.get(key);
  if (!bytes) throw new ContentUnavailableError(contentRef(key), 'missing', contentStoreName(store));
  if (contentKey(bytes) !== key) throw new ContentUnavailableError(contentRef(key), 'corrupt', contentStoreName(store));
  return bytes;
}

/** Stores `bytes` under their hash and gives their key. */
export async function storeContent(store: ContentStore, bytes: Uint8Array): Promise<string> {
  const key = contentKey(bytes);
  await store.put(key, bytes);
  return key;
}
