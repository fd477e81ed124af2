/**
 * A payload codec that gzips large payloads, so a long turn over a long conversation stays
 * well inside Temporal's history limits: a turn's input and result carry the conversation and
 * what the turn added to it (model steps carry only a reference to it, see
 * workflows/context/transcript.ts), and JSON text compresses several-fold.
 *
 * Only payloads of `minimumBytes` or more are compressed. Decisions, results submitted by
 * clients, `turnState` and search attributes stay plain JSON, so operators keep reading and
 * sending them with the Temporal CLI and Web UI; compressed ones show as `binary/gzip`.
 *
 * Decoding never throws. A worker decodes every payload of a workflow activation before any
 * workflow code runs, so one payload the codec cannot read (a signal whose `binary/gzip` data
 * is not gzip, or not a payload once unzipped, or unzips to more than
 * {@link MAX_DECOMPRESSED_BYTES}) would fail that workflow task, and every retry of it, for
 * good: signals stay in history. Such a payload is passed on *marked* instead: encoding
 * {@link UNDECODABLE_ENCODING}, the reason in metadata {@link UNDECODABLE_REASON_KEY}, no data.
 * turnpike's message handlers drop or refuse it (workflows/messages/raw-messages.ts); anything else that
 * reads it (an activity result, a turn's input, a client reading a result) fails as loudly as
 * before, with the SDK's "Unknown encoding: binary/turnpike-undecodable".
 *
 * Workers and clients must use the same codecs (`turnpikeDataConverter`, content/data-converter.ts):
 * `createWorker` and `TurnpikeClient.connect` do. A client without it can still start turns and send decisions,
 * but reads large results as compressed bytes.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import type { Payload, PayloadCodec } from '@temporalio/common';
import proto from '@temporalio/proto';

// A CommonJS module: Node's ESM loader sees only its default export.
const { temporal } = proto;

export const GZIP_ENCODING = 'binary/gzip';
/** The encoding of a payload this codec could not decode; it carries no data. */
export const UNDECODABLE_ENCODING = 'binary/turnpike-undecodable';
/** The metadata key that says why a payload could not be decoded (turnpike's words, never the payload's content). */
export const UNDECODABLE_REASON_KEY = 'turnpike-undecodable';
/**
 * The most a compressed payload may unzip to: 64 MiB. Temporal refuses payloads over 2 MiB, and
 * turnpike's JSON compresses 5–10 fold, so real payloads stay far below it; a small gzip bomb
 * in a signal does not take the worker's memory.
 */
export const MAX_DECOMPRESSED_BYTES = 64 * 1024 * 1024;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A payload that could not be decoded, marked with why (see the module comment). */
export function undecodablePayload(reason: string): Payload {
  return { metadata: { encoding: encoder.encode(UNDECODABLE_ENCODING), [UNDECODABLE_REASON_KEY]: encoder.encode(reason) } };
}

export class CompressionCodec implements PayloadCodec {
  constructor(private readonly minimumBytes = 4 * 1024) {}

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      if ((payload.data?.length ?? 0) < this.minimumBytes) return payload;
      const compressed = gzipSync(temporal.api.common.v1.Payload.encode(payload).finish());
      if (compressed.length >= (payload.data?.length ?? 0)) return payload;
      return { metadata: { encoding: encoder.encode(GZIP_ENCODING) }, data: compressed };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      const encoding = payload.metadata?.encoding;
      if (!encoding || decoder.decode(encoding) !== GZIP_ENCODING) return payload;
      return decompress(payload.data);
    });
  }
}

function decompress(data: Uint8Array | null | undefined): Payload {
  if (!data || data.length === 0) return undecodablePayload('its binary/gzip payload has no data');
  let unzipped: Buffer;
  try {
    unzipped = gunzipSync(data, { maxOutputLength: MAX_DECOMPRESSED_BYTES });
  } catch (error) {
    const tooLarge = (error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE';
    return undecodablePayload(tooLarge ? `its binary/gzip data unzips to more than ${MAX_DECOMPRESSED_BYTES} bytes` : 'its binary/gzip data is not gzip');
  }
  try {
    return temporal.api.common.v1.Payload.decode(unzipped) as Payload;
  } catch {
    return undecodablePayload('its binary/gzip data does not unzip to a payload');
  }
}
