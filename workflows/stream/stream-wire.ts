/**
 * The wire form of an event-stream item (and, below, of a stream carried across continue-as-new): a Temporal `Payload` (`temporal.api.common.v1.Payload`,
 * `map<string, bytes> metadata = 1; bytes data = 2;`) in protobuf bytes, in standard base64.
 * It is the form `@temporalio/workflow-streams` defined for its publish signal, poll update and
 * continue-as-new state; turnpike's own stream (event-stream.ts) keeps it, so histories recorded
 * with that library replay and its clients in any language can still publish and poll.
 *
 * Hand-written (after that library's codec, MIT) so that the workflow bundle carries no
 * protobuf runtime and no `Buffer`: workflow-safe, side-effect free.
 */
import type { Payload } from '@temporalio/common';
import type { WorkflowStreamState } from '../types/stream.js';

export type { WorkflowStreamState };

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const B64_INDEX = new Map([...B64].map((char, index) => [char, index]));

export function encodeBase64(data: Uint8Array): string {
  let result = '';
  for (let i = 0; i < data.length; i += 3) {
    const b0 = data[i]!;
    const b1 = i + 1 < data.length ? data[i + 1]! : 0;
    const b2 = i + 2 < data.length ? data[i + 2]! : 0;
    result += B64[(b0 >> 2) & 0x3f]! + B64[((b0 << 4) | (b1 >> 4)) & 0x3f]!;
    result += i + 1 < data.length ? B64[((b1 << 2) | (b2 >> 6)) & 0x3f]! : '=';
    result += i + 2 < data.length ? B64[b2 & 0x3f]! : '=';
  }
  return result;
}

/** Throws `TypeError` on anything but standard, padded or unpadded base64. */
export function decodeBase64(data: string): Uint8Array {
  const clean = data.replace(/=+$/, '');
  if (data.length - clean.length > 2 || clean.length % 4 === 1) throw new TypeError(`Invalid base64 of length ${data.length}`);
  const out = new Uint8Array((clean.length * 3) >> 2);
  let j = 0;
  for (let i = 0; i < clean.length; i += 4) {
    const [a, b, c, d] = [0, 1, 2, 3].map((k) => (i + k < clean.length ? (B64_INDEX.get(clean[i + k]!) ?? -1) : 0)) as [number, number, number, number];
    if (a < 0 || b < 0 || c < 0 || d < 0) throw new TypeError(`Invalid base64: a character outside the alphabet near offset ${i}`);
    out[j++] = (a << 2) | (b >> 4);
    if (j < out.length) out[j++] = ((b << 4) | (c >> 2)) & 0xff;
    if (j < out.length) out[j++] = ((c << 6) | d) & 0xff;
  }
  return out;
}

function writeVarint(buf: number[], n: number): void {
  while (n >= 0x80) {
    buf.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  buf.push(n);
}

function readVarint(bytes: Uint8Array, pos: { i: number }): number {
  let result = 0;
  for (let shift = 0; shift <= 35; shift += 7) {
    if (pos.i >= bytes.length) throw new Error('Invalid payload bytes: a varint runs past the end');
    const byte = bytes[pos.i++]!;
    result += (byte & 0x7f) * 2 ** shift;
    if ((byte & 0x80) === 0) return result;
  }
  throw new Error('Invalid payload bytes: a varint is too large');
}

function writeField(buf: number[], tag: number, bytes: Uint8Array): void {
  buf.push(tag);
  writeVarint(buf, bytes.length);
  for (const byte of bytes) buf.push(byte);
}

/** The length-delimited fields of a message, as (field number, bytes); other wire types are skipped. */
function* fields(bytes: Uint8Array): Generator<[number, Uint8Array]> {
  const pos = { i: 0 };
  while (pos.i < bytes.length) {
    const tag = readVarint(bytes, pos);
    const wireType = tag & 0x07;
    if (wireType === 2) {
      const length = readVarint(bytes, pos);
      if (pos.i + length > bytes.length) throw new Error('Invalid payload bytes: a field runs past the end');
      yield [tag >>> 3, bytes.subarray(pos.i, pos.i + length)];
      pos.i += length;
    } else if (wireType === 0) readVarint(bytes, pos);
    else if (wireType === 1) pos.i += 8;
    else if (wireType === 5) pos.i += 4;
    else throw new Error(`Invalid payload bytes: wire type ${wireType}`);
  }
}

const utf8 = { encoder: new TextEncoder(), decoder: new TextDecoder() };

export function encodePayloadProto(payload: Payload): Uint8Array {
  const buf: number[] = [];
  for (const [key, value] of Object.entries(payload.metadata ?? {})) {
    if (value == null) continue;
    const entry: number[] = [];
    writeField(entry, 0x0a, utf8.encoder.encode(key));
    writeField(entry, 0x12, value);
    writeField(buf, 0x0a, new Uint8Array(entry));
  }
  if (payload.data && payload.data.length > 0) writeField(buf, 0x12, payload.data);
  return new Uint8Array(buf);
}

/** Throws on bytes that are not a `Payload`. */
export function decodePayloadProto(bytes: Uint8Array): Payload {
  const metadata: Record<string, Uint8Array> = {};
  let data = new Uint8Array(0);
  for (const [field, chunk] of fields(bytes)) {
    if (field === 2) data = new Uint8Array(chunk);
    if (field !== 1) continue;
    let key = '';
    let value = new Uint8Array(0);
    for (const [entryField, entryChunk] of fields(chunk)) {
      if (entryField === 1) key = utf8.decoder.decode(entryChunk);
      else if (entryField === 2) value = new Uint8Array(entryChunk);
    }
    metadata[key] = value;
  }
  return { metadata, data };
}

export function encodePayloadWire(payload: Payload): string {
  return encodeBase64(encodePayloadProto(payload));
}

/** Throws on a string that is not the wire form of a `Payload`. */
export function decodePayloadWire(wire: string): Payload {
  return decodePayloadProto(decodeBase64(wire));
}
