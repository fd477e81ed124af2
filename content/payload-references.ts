/**
 * The content keys a workflow's history refers to, for the retention sweep (content-sweep.ts).
 *
 * History is walked generically: every object shaped like a Temporal `Payload` (a `metadata`
 * map of bytes, and `data` bytes) is read, wherever it sits: inputs, results, signals, updates,
 * memos, search attributes, failures' details, headers. Each payload is scanned for
 * `sha256:<hex>` as history holds it, then decoded one codec at a time in decoding order (the
 * data converter's chain reversed: the claim check first, compression last) and scanned again at
 * every stage. So a reference is found in plain JSON, inside gzip, inside a claimed payload, and
 * inside a claimed object's own content (a message that refers to a stored image).
 *
 * A claimed object is read once per sweep however many histories refer to it.
 *
 * What could not be read is told apart by whether it can still refer to anything:
 * - *undecodable*: a codec marked it (binary/turnpike-undecodable: not gzip, a claimed object
 *   missing or corrupt). No worker or client can read what it held, so it refers to nothing.
 * - *unreadable*: a codec threw (a store that could not be reached, a user's codec failing), or
 *   after the whole chain the payload is in an encoding the sweep's codecs do not decode (an
 *   encryption codec the sweep was not given). It may hold references the sweep cannot see.
 */
import type { Payload, PayloadCodec } from '@temporalio/common';
import { UNDECODABLE_ENCODING, UNDECODABLE_REASON_KEY } from '../codec/payload-codec.js';
import { claimReference, isClaimed } from './claim-check-codec.js';
import { referencedKeys } from './content-store.js';

/** Encodings of Temporal's default payload converter: what a payload is in once fully decoded. */
export const CONVERTER_ENCODINGS: ReadonlySet<string> = new Set(['binary/null', 'binary/plain', 'json/plain', 'json/protobuf', 'binary/protobuf']);

const decoder = new TextDecoder();

function isBytes(value: unknown): value is Uint8Array {
  return value instanceof Uint8Array;
}

/** A `Payload` in a proto message: a `metadata` map whose values are bytes, and bytes (or nothing) as `data`. */
function isPayloadShaped(value: object): value is Payload {
  const { metadata, data } = value as { metadata?: unknown; data?: unknown };
  if (typeof metadata !== 'object' || metadata === null || isBytes(metadata) || Array.isArray(metadata)) return false;
  if (data !== undefined && data !== null && !isBytes(data)) return false;
  return Object.values(metadata).every(isBytes);
}

/** Every payload in `message` (a proto message or plain object), depth first. */
export function payloadsIn(message: unknown): Payload[] {
  const found: Payload[] = [];
  const seen = new Set<object>();
  const visit = (value: unknown): void => {
    if (typeof value !== 'object' || value === null || isBytes(value) || ArrayBuffer.isView(value) || value instanceof Date) return;
    if (seen.has(value)) return;
    seen.add(value);
    // Its fields are walked too: a message that only looks like a payload may hold real ones.
    if (isPayloadShaped(value)) found.push(value);
    for (const child of Array.isArray(value) ? value : Object.values(value)) visit(child);
  };
  visit(message);
  return found;
}

function encodingOf(payload: Payload): string | undefined {
  const encoding = payload.metadata?.encoding;
  return encoding ? decoder.decode(encoding) : undefined;
}

/** The keys in a payload as it is: its data and its metadata values, read byte for byte. */
function keysInPayload(payload: Payload): string[] {
  const texts = [payload.data, ...Object.values(payload.metadata ?? {})].filter(isBytes).map((bytes) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1'));
  return texts.flatMap(referencedKeys);
}

/** Reads payloads for references with one chain of codecs, remembering claimed objects for the sweep. */
export class ReferenceScanner {
  /** Payloads a codec marked undecodable (they refer to nothing). */
  undecodable = 0;
  /** Payloads that may hold references the sweep could not read; any one makes the sweep delete nothing. */
  unreadable = 0;
  /** Keys found below a claimed payload, by decoding stage and reference. */
  private readonly claimed = new Map<string, Promise<Set<string>>>();

  /**
   * @param codecs the data converter's codec chain in encoding order, as given to `payloadCodecs`
   * @param log told about each payload that could not be read, with `where` it was
   */
  constructor(
    private readonly codecs: readonly PayloadCodec[],
    private readonly log: (line: string) => void,
  ) {}

  /** Adds to `into` every key referenced by the payloads anywhere in `message`. */
  async scan(message: unknown, into: Set<string>, where: string): Promise<void> {
    for (const payload of payloadsIn(message)) {
      for (const key of await this.keysOf(payload, this.codecs.length - 1, where)) into.add(key);
    }
  }

  /** The keys in `payload` and in what it decodes to through codecs `stage`, `stage - 1`, … 0. */
  private async keysOf(payload: Payload, stage: number, where: string): Promise<Set<string>> {
    const keys = new Set(keysInPayload(payload));
    const encoding = encodingOf(payload);
    if (encoding === UNDECODABLE_ENCODING) {
      this.undecodable += 1;
      const reason = payload.metadata?.[UNDECODABLE_REASON_KEY];
      this.log(`${where}: a payload could not be decoded (${reason ? decoder.decode(reason) : 'no reason given'}); it refers to nothing`);
      return keys;
    }
    if (stage < 0) {
      if (encoding !== undefined && !CONVERTER_ENCODINGS.has(encoding)) {
        this.unreadable += 1;
        this.log(`${where}: a payload is still ${encoding} after the sweep's codecs; the sweep was not given the codec that reads it`);
      }
      return keys;
    }
    const ref = isClaimed(payload) ? claimReference(payload)?.ref : undefined;
    const cacheKey = ref === undefined ? undefined : `${stage}:${ref}`;
    let below = cacheKey === undefined ? undefined : this.claimed.get(cacheKey);
    if (!below) {
      below = this.decodeAndScan(payload, stage, where);
      if (cacheKey !== undefined) this.claimed.set(cacheKey, below);
    }
    for (const key of await below) keys.add(key);
    return keys;
  }

  private async decodeAndScan(payload: Payload, stage: number, where: string): Promise<Set<string>> {
    let decoded: Payload | undefined;
    try {
      [decoded] = await (this.codecs[stage] as PayloadCodec).decode([payload]);
    } catch (error) {
      this.unreadable += 1;
      this.log(`${where}: a payload could not be decoded: ${error instanceof Error ? error.message : String(error)}`);
      return new Set();
    }
    return decoded ? this.keysOf(decoded, stage - 1, where) : new Set();
  }
}
