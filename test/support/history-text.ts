/**
 * Every string and every payload's bytes (decoded as UTF-8) in a workflow history, as one text:
 * what a test searches for a secret. Compressed payloads are decompressed first, so a secret
 * cannot hide inside one.
 */
import { gunzipSync } from 'node:zlib';
import proto from '@temporalio/proto';
import { GZIP_ENCODING } from '../../codec/payload-codec.js';

// A CommonJS module: Node's ESM loader sees only its default export.
const { temporal } = proto;

export function historyText(value: unknown): string {
  if (value instanceof Uint8Array) return Buffer.from(value).toString('utf8');
  const payload = value as { metadata?: { encoding?: Uint8Array }; data?: Uint8Array } | null;
  if (payload?.data && payload.metadata?.encoding && Buffer.from(payload.metadata.encoding).toString() === GZIP_ENCODING) {
    return historyText(temporal.api.common.v1.Payload.decode(gunzipSync(payload.data)));
  }
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(historyText).join('\n');
  if (value && typeof value === 'object') return Object.values(value).map(historyText).join('\n');
  return '';
}
