/**
 * A live piece as a PostgreSQL notification payload (activities/postgres-live/live-delta-payload.ts): pieces
 * under PostgreSQL's limit go whole; longer ones are split by UTF-8 bytes on code point
 * boundaries, their parts numbered so the merge sees consecutive units.
 */
import { describe, expect, it } from 'vitest';
import { decodeLivePiece, encodeLivePiece, MAX_NOTIFY_PAYLOAD_BYTES, payloadWorkflowId, splitLivePiece } from '../../activities/postgres-live/live-delta-payload.js';
import { deltaUnits, type LiveDeltaPiece } from '../../activities/live-deltas.js';

const isHigh = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLow = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/** Decodes every payload, checking each is within the limit and names `workflowId`. */
function decodeAll(workflowId: string, payloads: string[]): LiveDeltaPiece[] {
  return payloads.map((payload) => {
    expect(Buffer.byteLength(payload)).toBeLessThanOrEqual(MAX_NOTIFY_PAYLOAD_BYTES);
    expect(payloadWorkflowId(payload)).toBe(workflowId);
    const piece = decodeLivePiece(payload, workflowId);
    expect(piece).toBeDefined();
    return piece!;
  });
}

/** The parts cover `piece`'s units exactly: consecutive starts, the same text, no pair cut. */
function expectParts(piece: LiveDeltaPiece, parts: LiveDeltaPiece[], field: 'text' | 'inputTextDelta'): void {
  const text = (piece.event as unknown as Record<string, string>)[field]!;
  let start = piece.start;
  let joined = '';
  for (const part of parts) {
    expect(part.start).toBe(start);
    expect({ ...part.event, [field]: '' }).toEqual({ ...piece.event, [field]: '' });
    const partText = (part.event as unknown as Record<string, string>)[field]!;
    expect(partText.length).toBeGreaterThan(0);
    // Never a surrogate pair cut in two.
    const at = joined.length + partText.length;
    if (at < text.length) expect(isHigh(text.charCodeAt(at - 1)) && isLow(text.charCodeAt(at))).toBe(false);
    joined += partText;
    start += deltaUnits(part.event);
  }
  expect(joined).toBe(text);
  expect(start).toBe(piece.start + deltaUnits(piece.event));
}

describe('live piece payloads', () => {
  it('sends a piece under the limit whole, and reads it back', () => {
    const piece: LiveDeltaPiece = { event: { type: 'text-delta', text: 'Hello, "world"\n', step: 2, attempt: 1 }, start: 17 };
    const workflowId = 'turn 1: {odd} id';
    const payloads = encodeLivePiece(workflowId, piece);
    expect(payloads).toHaveLength(1);
    expect(decodeAll(workflowId, payloads)).toEqual([piece]);
  });

  it('splits a long text of multi-byte characters by UTF-8 bytes, numbering the parts consecutively', () => {
    // ASCII, 2-, 3- and 4-byte characters, escapes JSON lengthens, and a lone surrogate.
    const alphabet = ['a', 'é', '€', '😀', '"', '\\', '\n', '\u0001', '\ud800', 'ж', '𝄞'];
    const text = Array.from({ length: 12_000 }, (_, index) => alphabet[(index * 7) % alphabet.length]).join('');
    expect(Buffer.byteLength(text)).toBeGreaterThan(2 * MAX_NOTIFY_PAYLOAD_BYTES);
    const piece: LiveDeltaPiece = { event: { type: 'text-delta', text, step: 3, attempt: 2 }, start: 40 };
    const workflowId = 'turn-9f8e';
    const parts = decodeAll(workflowId, encodeLivePiece(workflowId, piece));
    expect(parts.length).toBeGreaterThan(3);
    expectParts(piece, parts, 'text');
    // Parts are filled: none but the last leaves room for another character.
    for (const payload of encodeLivePiece(workflowId, piece).slice(0, -1)) expect(Buffer.byteLength(payload)).toBeGreaterThan(MAX_NOTIFY_PAYLOAD_BYTES - 12);
  });

  it("splits a tool call's input the same way, keeping its call id", () => {
    const inputTextDelta = JSON.stringify({ note: '日本語のテキスト'.repeat(600) });
    const piece: LiveDeltaPiece = { event: { type: 'tool-input-delta', toolCallId: 'call_1', inputTextDelta, step: 1, attempt: 1 }, start: 1 };
    const parts = decodeAll('w', encodeLivePiece('w', piece));
    expect(parts.length).toBeGreaterThan(1);
    expectParts(piece, parts, 'inputTextDelta');
  });

  it('splits at the byte budget it is given, never inside a surrogate pair', () => {
    const piece: LiveDeltaPiece = { event: { type: 'reasoning-delta', text: 'ab😀cd😀😀e', step: 1, attempt: 1 }, start: 0 };
    const parts = splitLivePiece(piece, 5);
    expectParts(piece, parts, 'text');
    for (const part of parts) expect(Buffer.byteLength((part.event as { text: string }).text)).toBeLessThanOrEqual(5);
    expect(parts.map((part) => (part.event as { text: string }).text)).toEqual(['ab', '😀c', 'd😀', '😀e']);
    expect(parts.map((part) => part.start)).toEqual([0, 2, 5, 8]);
  });

  it('drops a piece that cannot be split small enough, and refuses what is not a piece', () => {
    const start: LiveDeltaPiece = { event: { type: 'tool-input-start', toolCallId: 'c', toolName: 'x'.repeat(9_000), step: 1, attempt: 1 }, start: 0 };
    expect(encodeLivePiece('w', start)).toEqual([]);
    expect(payloadWorkflowId('not a payload')).toBeUndefined();
    expect(payloadWorkflowId('5:abc {}')).toBeUndefined();
    expect(decodeLivePiece('1:w {"event":{"type":"step-finished","step":1,"attempt":1},"start":0}', 'w')).toBeUndefined();
    expect(decodeLivePiece('1:w {"event":{"type":"text-delta","step":1,"attempt":1},"start":0}', 'w')).toBeUndefined();
    expect(decodeLivePiece('1:w {"event":{"type":"text-delta","text":"x","step":1,"attempt":1},"start":-1}', 'w')).toBeUndefined();
    expect(decodeLivePiece('1:w {"event":', 'w')).toBeUndefined();
  });
});
