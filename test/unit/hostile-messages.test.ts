/**
 * The pieces that keep a hostile message from failing a turn's workflow task or travelling back
 * out of it: the codec that never throws, the decoding of raw message arguments, the field
 * limits, shape errors that quote nothing, and the event stream's publish check.
 */
import { gzipSync } from 'node:zlib';
import { RawValue, type Payload } from '@temporalio/common';
import { encodePayloadWire } from '../../workflows/stream/stream-wire.js';
import proto from '@temporalio/proto';
import { describe, expect, it } from 'vitest';
import { CompressionCodec, MAX_DECOMPRESSED_BYTES, UNDECODABLE_ENCODING, UNDECODABLE_REASON_KEY } from '../../codec/payload-codec.js';
import { MAX_DEPTH, MAX_MESSAGE_BYTES, measureJson, messageProblem } from '../../workflows/messages/field-limits.js';
import { approveToolCallInputSchema, describeShapeError, turnFinishedInputSchema } from '../../workflows/messages/message-schemas.js';
import { decodeArgument } from '../../workflows/messages/raw-messages.js';
import { MAX_ITEM_CHARS, publishProblem } from '../../workflows/stream/stream-guard.js';
import { z } from 'zod';

const { temporal } = proto;
const bytes = (text: string) => new TextEncoder().encode(text);
const text = (data: Uint8Array | null | undefined) => new TextDecoder().decode(data ?? new Uint8Array());
const payload = (encoding: string, data?: string | Uint8Array): Payload => ({ metadata: { encoding: bytes(encoding) }, ...(data !== undefined ? { data: typeof data === 'string' ? bytes(data) : data } : {}) });
/** A marker that must never show up in anything the turn says about the message. */
const MARKER = 'Zq7xMARKERw3';

describe('CompressionCodec.decode', () => {
  const codec = new CompressionCodec();
  const gzipped = (inner: Uint8Array) => payload('binary/gzip', gzipSync(inner));

  it('marks a payload it cannot read instead of throwing, with why and without its data', async () => {
    const [notGzip, empty, notAPayload, bomb] = await codec.decode([
      payload('binary/gzip', 'definitely not gzip'),
      payload('binary/gzip'),
      gzipped(bytes('\u00ff\u00ff\u00ff not a protobuf payload')),
      gzipped(new Uint8Array(MAX_DECOMPRESSED_BYTES + 1)),
    ]);
    for (const marked of [notGzip, empty, notAPayload, bomb]) {
      expect(text(marked.metadata?.encoding)).toBe(UNDECODABLE_ENCODING);
      expect(marked.data).toBeUndefined();
    }
    expect(text(notGzip.metadata?.[UNDECODABLE_REASON_KEY])).toBe('its binary/gzip data is not gzip');
    expect(text(empty.metadata?.[UNDECODABLE_REASON_KEY])).toBe('its binary/gzip payload has no data');
    expect(text(notAPayload.metadata?.[UNDECODABLE_REASON_KEY])).toBe('its binary/gzip data does not unzip to a payload');
    expect(text(bomb.metadata?.[UNDECODABLE_REASON_KEY])).toBe(`its binary/gzip data unzips to more than ${MAX_DECOMPRESSED_BYTES} bytes`);
  });

  it('still round-trips what it compressed, and passes other payloads on untouched', async () => {
    const large = payload('json/plain', JSON.stringify({ text: 'compressible '.repeat(1_000) }));
    const [encoded] = await codec.encode([large]);
    expect(text(encoded.metadata?.encoding)).toBe('binary/gzip');
    const [decoded] = await codec.decode([encoded]);
    expect(text(decoded.data)).toBe(text(large.data));
    const odd = payload('json/protobuf', 'whatever');
    expect((await codec.decode([odd]))[0]).toBe(odd);
    expect(temporal.api.common.v1.Payload.decode(temporal.api.common.v1.Payload.encode(decoded).finish()).metadata?.encoding).toBeDefined();
  });
});

describe('decodeArgument', () => {
  const decode = (p: Payload | undefined) => decodeArgument(p === undefined ? undefined : RawValue.fromPayload(p));

  it('decodes what the default converter reads', () => {
    expect(decode(payload('json/plain', '{"approvalId":"apr_1","approved":true}'))).toEqual({ ok: true, value: { approvalId: 'apr_1', approved: true } });
    expect(decode(payload('binary/null'))).toEqual({ ok: true, value: undefined });
  });

  it.each([
    ["invalid JSON (Python's NaN)", payload('json/plain', `{"approvalId": NaN, "approved": tru ${MARKER}`), 'its "json/plain" data does not decode'],
    ['an unknown encoding', payload('binary/encrypted', MARKER), 'its encoding "binary/encrypted" is not one this worker reads'],
    ['protobuf where JSON is expected', payload('json/protobuf', MARKER), 'its encoding "json/protobuf" is not one this worker reads'],
    ['an encoding that is not a name', payload(`${MARKER} `.repeat(100)), 'its encoding (1300 bytes) is not one this worker reads'],
    ['JSON with no data', payload('json/plain'), 'its "json/plain" data does not decode'],
    ['no metadata', { data: bytes(MARKER) }, 'its payload has no encoding'],
    ['no argument at all', undefined, 'it has no argument'],
    ['a payload the codec marked', { metadata: { encoding: bytes(UNDECODABLE_ENCODING), [UNDECODABLE_REASON_KEY]: bytes('its binary/gzip data is not gzip') } }, 'its binary/gzip data is not gzip'],
  ])('refuses %s, saying why without quoting it', (_kind, raw, reason) => {
    const decoded = decode(raw as Payload | undefined);
    expect(decoded).toEqual({ ok: false, reason });
    expect(JSON.stringify(decoded)).not.toContain(MARKER);
  });
});

describe('field limits', () => {
  const huge = `${MARKER}${'x'.repeat(1_100_000)}`;

  it.each([
    ['approvalId', { approvalId: huge, approved: true }, `approveToolCall.approvalId is ${huge.length} characters long; the limit is 200`],
    ['reason', { approvalId: 'apr_1', approved: false, reason: huge }, `approveToolCall.reason is ${huge.length} characters long; the limit is 4000`],
    ['approver', { approvalId: 'apr_1', approved: true, approver: huge }, `approveToolCall.approver is ${huge.length} characters long; the limit is 200`],
    ['a group', { approvalId: 'apr_1', approved: true, approverGroups: ['ops', huge] }, `approveToolCall.approverGroups[1] is ${huge.length} characters long; the limit is 200`],
    ['too many groups', { approvalId: 'apr_1', approved: true, approverGroups: Array.from({ length: 201 }, () => 'g') }, 'approveToolCall.approverGroups has 201 entries; the limit is 200'],
    ['inputHash', { approvalId: 'apr_1', approved: true, inputHash: huge }, `approveToolCall.inputHash is ${huge.length} characters long; the limit is 200`],
    ['input', { approvalId: 'apr_1', approved: true, input: { target: huge } }, 'approveToolCall.input is larger than 262144 bytes as JSON'],
    ['an unknown field', { approvalId: 'apr_1', approved: true, [MARKER]: huge }, `approveToolCall is larger than ${MAX_MESSAGE_BYTES} bytes as JSON`],
    ['a huge key', { approvalId: 'apr_1', approved: true, [huge]: 1 }, `approveToolCall is larger than ${MAX_MESSAGE_BYTES} bytes as JSON`],
  ])('refuse an oversized approveToolCall %s, naming the field and its size, never its value', (_field, message, problem) => {
    expect(messageProblem('approveToolCall', message)).toBe(problem);
  });

  it('covers every string field of every message', () => {
    expect(messageProblem('submitToolResult', { toolCallId: huge, output: {} })).toMatch(/^submitToolResult\.toolCallId is \d+ characters long/);
    expect(messageProblem('submitToolResult', { toolCallId: 'call_1', output: { colour: huge } })).toBe('submitToolResult.output is larger than 262144 bytes as JSON');
    expect(messageProblem('supersedeTurn', { reason: huge })).toMatch(/^supersedeTurn\.reason is \d+ characters long; the limit is 4000$/);
    expect(messageProblem('supersedeTurn', { reason: 'newer', messageId: huge })).toMatch(/^supersedeTurn\.messageId is \d+ characters long; the limit is 200$/);
    expect(messageProblem('parkElicitation', { toolCallId: 'c', attempt: 1, message: huge, requestedSchema: {} })).toMatch(/^parkElicitation\.message is \d+ characters long/);
    expect(messageProblem('awaitElicitationAnswer', huge)).toMatch(/^awaitElicitationAnswer is \d+ characters long; the limit is 200$/);
    expect(messageProblem('callContext', { toolCallId: huge })).toMatch(/^callContext\.toolCallId is \d+ characters long; the limit is 200$/);
    expect(messageProblem('approveToolCall', { approvalId: 'apr_1', approved: true, reason: 'fine', input: { target: 'prod' } })).toBeUndefined();
    // A conversation's messages have their own limits.
    expect(messageProblem('sendMessage', { text: huge })).toBeUndefined();
  });

  it('measures a value nested a million levels deep without recursion, and refuses it by depth', () => {
    const deep = JSON.parse(`${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`);
    expect(measureJson(deep, MAX_MESSAGE_BYTES, MAX_DEPTH)).toMatchObject({ exceeds: 'depth', depth: MAX_DEPTH + 1 });
    expect(messageProblem('submitToolResult', { toolCallId: 'call_1', output: deep })).toBe(`submitToolResult.output is nested more than ${MAX_DEPTH} levels deep`);
    expect(messageProblem('approveToolCall', { approvalId: 'apr_1', approved: true, extra: deep })).toBe(`approveToolCall is nested more than ${MAX_DEPTH + 1} levels deep`);
    expect(measureJson({ a: [1, 'two', null, true] }, 1_000, 10)).toEqual({ bytes: JSON.stringify({ a: [1, 'two', null, true] }).length, depth: 2 });
  });
});

describe('describeShapeError', () => {
  it('names fields and types, never the keys or values it was sent', () => {
    const strict = z.fromJSONSchema({ type: 'object', properties: { target: { type: 'string' } }, additionalProperties: false });
    const parsed = strict.safeParse({ target: 1, [MARKER]: 2, [`${MARKER} with spaces`]: 3 });
    const description = describeShapeError(parsed.error!);
    expect(description).toBe('target: Invalid input: expected string, received number; (message): 2 unrecognized keys');
    const record = z.fromJSONSchema({ type: 'object', additionalProperties: { type: 'number' } });
    expect(describeShapeError(record.safeParse({ [`${MARKER}!`.repeat(20)]: 'x' }).error!)).toBe('…: Invalid input: expected number, received string');
    const message = describeShapeError(approveToolCallInputSchema().safeParse({ approvalId: MARKER.repeat(50), approved: MARKER }).error!);
    expect(message).not.toContain(MARKER);
    expect(message).toContain('approvalId: Too big');
  });
});

describe("a failed turn's turnFinished signal", () => {
  const spend = { inputTokens: 100, outputTokens: 7, wallTimeMs: 1_200, toolCalls: 1 };

  it('takes the spend a failed turn reports', () => {
    expect(turnFinishedInputSchema().safeParse({ turnWorkflowId: 'c/turn-1', failure: 'refused', spend, budget: { totalTokens: 10_000 } }).success).toBe(true);
  });

  it.each([
    ['negative tokens', { ...spend, inputTokens: -1 }],
    ['tokens as text', { ...spend, outputTokens: '7' }],
    ['a fraction of a tool call', { ...spend, toolCalls: 0.5 }],
    ['no wall time', { inputTokens: 1, outputTokens: 1, toolCalls: 0 }],
    ['an infinite cost', { ...spend, costUsd: Infinity }],
  ])('refuses one whose spend has %s, so the conversation ignores it and keeps its budget', (_, bad) => {
    expect(turnFinishedInputSchema().safeParse({ turnWorkflowId: 'c/turn-1', failure: 'refused', spend: bad }).success).toBe(false);
  });
});

describe('the event stream publish check', () => {
  const event = (value: unknown) => encodePayloadWire({ metadata: { encoding: bytes('json/plain') }, data: bytes(JSON.stringify(value)) });
  const good = { items: [{ topic: 'turnpike', data: event({ type: 'text-delta', step: 1, attempt: 1, text: 'hi' }) }], publisher_id: 'p1', sequence: 1 };

  it('lets what the model activity publishes through', () => {
    expect(publishProblem(good)).toBeUndefined();
  });

  it.each([
    ['an empty object', {}, 'items is not a list'],
    ['not an object', 'x', 'it is not an object'],
    ['another topic', { ...good, items: [{ topic: 'elsewhere', data: good.items[0].data }] }, "items[0] is not on turnpike's topic"],
    ['data that is not a payload', { ...good, items: [{ topic: 'turnpike', data: '!!!' }] }, 'items[0] is not a turnpike event'],
    ['a payload that is not an event', { ...good, items: [{ topic: 'turnpike', data: event([1, 2]) }] }, 'items[0] is not a turnpike event'],
    ['an oversized item', { ...good, items: [{ topic: 'turnpike', data: 'A'.repeat(MAX_ITEM_CHARS + 4) }] }, `items[0].data is ${MAX_ITEM_CHARS + 4} characters long; the limit is ${MAX_ITEM_CHARS}`],
    ['a sequence that is not a number', { ...good, sequence: 'one' }, 'sequence is not a positive integer'],
  ])('drops %s', (_kind, input, problem) => {
    expect(publishProblem(input)).toBe(problem);
  });
});
