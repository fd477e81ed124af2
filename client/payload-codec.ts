/**
 * A payload codec that gzips large payloads, so a long turn over a long conversation stays
 * well inside Temporal's history limits: a turn's input and result carry the conversation and
 * what the turn added to it (model steps carry only a reference to it, see
 * workflows/transcript.ts), and JSON text compresses several-fold.
 *
 * Only payloads of `minimumBytes` or more are compressed. Decisions, results submitted by
 * clients, `turnState` and search attributes stay plain JSON, so operators keep reading and
 * sending them with the Temporal CLI and Web UI; compressed ones show as `binary/gzip`.
 *
 * Workers and clients must use the same codec (`turnpikeDataConverter`): `createWorker` and
 * `TurnpikeClient.connect` do. A client without it can still start turns and send decisions,
 * but reads large results as compressed bytes.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import type { DataConverter, Payload, PayloadCodec } from '@temporalio/common';
import proto from '@temporalio/proto';

// A CommonJS module: Node's ESM loader sees only its default export.
const { temporal } = proto;

export const GZIP_ENCODING = 'binary/gzip';
const encoder = new TextEncoder();
const decoder = new TextDecoder();

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
      if (!encoding || decoder.decode(encoding) !== GZIP_ENCODING || !payload.data) return payload;
      return temporal.api.common.v1.Payload.decode(gunzipSync(payload.data)) as Payload;
    });
  }
}

/** The data converter every turnpike worker and client uses. */
export const turnpikeDataConverter: DataConverter = { payloadCodecs: [new CompressionCodec()] };
