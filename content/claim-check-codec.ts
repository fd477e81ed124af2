/**
 * The claim check: a payload codec that keeps any payload of `thresholdBytes` or more (default
 * 128 KiB, measured after compression) in the content store and puts a small reference in its
 * place, so no payload reaches Temporal's 2 MB limit and a history stays small however large
 * the content it carries.
 *
 * In history a claimed payload has encoding {@link CLAIM_ENCODING} and data
 * `{"ref":"sha256:<hex>","bytes":<n>}`: the SHA-256 of the stored bytes, which are the original
 * payload serialized as a protobuf `Payload`. Identical payloads are stored once.
 *
 * It runs last in the data converter's codec chain (turnpike's compression first, then any codec
 * of the user's, such as encryption), so what is stored is what history would have held.
 *
 * Decoding reads the object back and checks its hash. Like the compression codec, it does not
 * throw for content that is not there: a reference to a missing object, or to bytes that do not
 * hash to it, becomes a payload marked undecodable with a reason that names the reference
 * (payload-codec.ts). A signal carrying one is dropped by the turn; anything else that reads it
 * fails, and a workflow task that fails this way is retried, so a store that recovers lets the
 * turn go on. A store that cannot be reached at all throws, which also fails (and retries) the
 * workflow task or activity: nothing is decided on content that could not be read.
 */
import type { Payload, PayloadCodec } from '@temporalio/common';
import proto from '@temporalio/proto';
import { undecodablePayload } from '../codec/payload-codec.js';
import { ContentUnavailableError, contentRef, keyOfRef, readVerified, storeContent, type ContentStore } from './content-store.js';

// A CommonJS module: Node's ESM loader sees only its default export.
const { temporal } = proto;

export const CLAIM_ENCODING = 'binary/turnpike-claim';
/** Payloads this big or bigger (their data, after compression) are stored. */
export const DEFAULT_CLAIM_THRESHOLD_BYTES = 128 * 1024;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export interface ClaimCheckOptions {
  /** The store, or a function that gives it on first use (so a default store opens only when needed). */
  store: ContentStore | (() => ContentStore);
  thresholdBytes?: number;
}

/** The reference a claimed payload carries. */
export interface ClaimReference {
  ref: string;
  bytes: number;
}

export function isClaimed(payload: Payload): boolean {
  const encoding = payload.metadata?.encoding;
  return !!encoding && decoder.decode(encoding) === CLAIM_ENCODING;
}

/** The reference in a claimed payload, or undefined when its data is not one. */
export function claimReference(payload: Payload): ClaimReference | undefined {
  try {
    const parsed = JSON.parse(decoder.decode(payload.data ?? new Uint8Array())) as Partial<ClaimReference>;
    return keyOfRef(parsed.ref) && typeof parsed.bytes === 'number' ? { ref: parsed.ref as string, bytes: parsed.bytes } : undefined;
  } catch {
    return undefined;
  }
}

export class ClaimCheckCodec implements PayloadCodec {
  private resolved?: ContentStore;
  readonly thresholdBytes: number;

  constructor(private readonly options: ClaimCheckOptions) {
    this.thresholdBytes = options.thresholdBytes ?? DEFAULT_CLAIM_THRESHOLD_BYTES;
    if (!Number.isInteger(this.thresholdBytes) || this.thresholdBytes < 1024) {
      throw new TypeError(`ClaimCheckCodec: thresholdBytes must be an integer of at least 1024 (got ${String(options.thresholdBytes)})`);
    }
  }

  get store(): ContentStore {
    this.resolved ??= typeof this.options.store === 'function' ? this.options.store() : this.options.store;
    return this.resolved;
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return Promise.all(
      payloads.map(async (payload) => {
        if ((payload.data?.length ?? 0) < this.thresholdBytes) return payload;
        const bytes = temporal.api.common.v1.Payload.encode(payload).finish();
        const key = await storeContent(this.store, bytes);
        const reference: ClaimReference = { ref: contentRef(key), bytes: bytes.length };
        return { metadata: { encoding: encoder.encode(CLAIM_ENCODING) }, data: encoder.encode(JSON.stringify(reference)) };
      }),
    );
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return Promise.all(payloads.map((payload) => (isClaimed(payload) ? this.claim(payload) : payload)));
  }

  private async claim(payload: Payload): Promise<Payload> {
    const reference = claimReference(payload);
    if (!reference) return undecodablePayload(`its ${CLAIM_ENCODING} data is not a content reference`);
    let bytes: Uint8Array;
    try {
      bytes = await readVerified(this.store, keyOfRef(reference.ref) as string);
    } catch (error) {
      if (error instanceof ContentUnavailableError) return undecodablePayload(error.message);
      throw error;
    }
    try {
      return temporal.api.common.v1.Payload.decode(bytes) as Payload;
    } catch {
      return undecodablePayload(`stored content ${reference.ref} is not a payload`);
    }
  }
}
