/**
 * Reading one stored object for a person (`turnpike content get`): checked against its hash,
 * and, when it is a claimed payload (claim-check-codec.ts), decoded into what the workflow saw.
 *
 * A claimed object is a Temporal `Payload` serialized as protobuf, as the codecs before the
 * claim check left it (compressed, perhaps encrypted). Decoding it through those codecs gives
 * the payload the data converter reads; its data (JSON text, for turnpike's payloads) is the
 * content. Any other object (an image, a document) is its bytes as they are.
 */
import type { Payload, PayloadCodec } from '@temporalio/common';
import proto from '@temporalio/proto';
import { CompressionCodec, UNDECODABLE_ENCODING, UNDECODABLE_REASON_KEY } from '../codec/payload-codec.js';
import { contentRef, readVerified, type ContentStore } from './content-store.js';
import { CONVERTER_ENCODINGS } from './payload-references.js';

// A CommonJS module: Node's ESM loader sees only its default export.
const { temporal } = proto;

const decoder = new TextDecoder();
/** What a payload's `encoding` looks like (`json/plain`, `binary/gzip`): bytes that merely parse as protobuf rarely do. */
const ENCODING = /^[a-z][a-z0-9.+-]*\/[a-z0-9][a-z0-9.+_-]*$/i;

export interface StoredContent {
  /** The content: the object's bytes, or a claimed payload's data once decoded. */
  bytes: Uint8Array;
  /** The encoding of the payload the bytes are the data of, when the object is a claimed payload. */
  encoding?: string;
}

/** The payload a stored object is, or undefined when its bytes are not a serialized payload. */
export function storedPayload(bytes: Uint8Array): Payload | undefined {
  let payload: Payload;
  try {
    payload = temporal.api.common.v1.Payload.decode(bytes) as Payload;
  } catch {
    return undefined;
  }
  const encoding = payload.metadata?.encoding;
  return encoding && ENCODING.test(decoder.decode(encoding)) ? payload : undefined;
}

/**
 * Reads and verifies `key` (ContentUnavailableError when missing or corrupt). Unless `raw`, a
 * claimed payload is decoded through `codecs`, those the data converter runs before the claim
 * check, in encoding order (default: turnpike's compression).
 */
export async function readStoredContent(
  store: ContentStore,
  key: string,
  options: { raw?: boolean; codecs?: readonly PayloadCodec[] } = {},
): Promise<StoredContent> {
  const bytes = await readVerified(store, key);
  const stored = options.raw ? undefined : storedPayload(bytes);
  if (!stored) return { bytes };
  let payload = stored;
  for (const codec of [...(options.codecs ?? [new CompressionCodec()])].reverse()) [payload = payload] = await codec.decode([payload]);
  const encoding = decoder.decode(payload.metadata?.encoding ?? new Uint8Array());
  if (encoding === UNDECODABLE_ENCODING) {
    const reason = payload.metadata?.[UNDECODABLE_REASON_KEY];
    throw new Error(`Stored content ${contentRef(key)} is a payload that could not be decoded: ${reason ? decoder.decode(reason) : 'no reason given'} (--raw gives its bytes)`);
  }
  if (!CONVERTER_ENCODINGS.has(encoding)) {
    throw new Error(`Stored content ${contentRef(key)} is a payload still ${encoding} after turnpike's codecs (a codec of the application's?); --raw gives its bytes`);
  }
  return { bytes: payload.data ?? new Uint8Array(), encoding };
}
