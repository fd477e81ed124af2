/**
 * A live delta piece as the text of a PostgreSQL notification (postgres-live-deltas.ts), and back.
 *
 *   <length of the workflow id>:<workflow id> <piece JSON>
 *   12:turn-a1b2c3d4 {"event":{"type":"text-delta","text":"Hello","step":1,"attempt":1},"start":0}
 *
 * The length comes first because a workflow id may hold spaces, colons or braces; a listener
 * reads the id without parsing the JSON, so notifications for turns nobody reads in its process
 * cost a map lookup.
 *
 * PostgreSQL refuses a payload of 8,000 bytes or more (`NOTIFY_PAYLOAD_MAX_LENGTH`, "payload
 * string too long"). A longer piece is split into parts by the UTF-8 bytes its text takes in
 * the JSON, on code point boundaries (a surrogate pair is never cut), each part's `start`
 * advanced by the units (UTF-16 code units, as `deltaUnits` counts them) of the parts before it,
 * so the merge sees consecutive units. A piece that cannot be split small enough (a
 * `tool-input-start` with a huge tool name) is dropped: readers read it from the durable stream.
 */
import { deltaUnits, LIVE_DELTA_TYPES, type LiveDeltaEvent, type LiveDeltaPiece } from '../live-deltas.js';

/** The longest payload PostgreSQL takes, in bytes: it refuses 8,000 or more. */
export const MAX_NOTIFY_PAYLOAD_BYTES = 7_999;


/** The field of a delta event that holds its units' text (none for `tool-input-start`). */
function textField(event: LiveDeltaEvent): 'text' | 'inputTextDelta' | undefined {
  if (event.type === 'text-delta' || event.type === 'reasoning-delta') return 'text';
  if (event.type === 'tool-input-delta') return 'inputTextDelta';
  return undefined;
}

/** The bytes one code point (from `for … of`: a pair, or a single code unit) takes inside a JSON string. */
function jsonBytes(codePoint: string): number {
  if (codePoint.length === 2) return 4;
  const code = codePoint.charCodeAt(0);
  if (code < 0x80) return JSON.stringify(codePoint).length - 2;
  if (code < 0x800) return 2;
  // A lone surrogate: JSON.stringify writes it as \udXXX.
  if (code >= 0xd800 && code <= 0xdfff) return 6;
  return 3;
}

function prefix(workflowId: string): string {
  return `${workflowId.length}:${workflowId} `;
}

/**
 * `piece` split so that each part's text takes at most `maxTextBytes` bytes of JSON; the parts'
 * texts joined are the piece's text, and each part starts where the one before it ended.
 */
export function splitLivePiece(piece: LiveDeltaPiece, maxTextBytes: number): LiveDeltaPiece[] {
  const field = textField(piece.event);
  if (field === undefined) return [piece];
  const text = (piece.event as unknown as Record<typeof field, string>)[field];
  const parts: LiveDeltaPiece[] = [];
  let part = '';
  let bytes = 0;
  let start = piece.start;
  const emit = () => {
    parts.push({ event: { ...piece.event, [field]: part } as LiveDeltaEvent, start });
    start += part.length;
    part = '';
    bytes = 0;
  };
  for (const codePoint of text) {
    const cost = jsonBytes(codePoint);
    if (bytes + cost > maxTextBytes && part.length > 0) emit();
    part += codePoint;
    bytes += cost;
  }
  if (part.length > 0 || parts.length === 0) emit();
  return parts;
}

/** The notification payloads of one piece: one, or its parts (none when it cannot fit). */
export function encodeLivePiece(workflowId: string, piece: LiveDeltaPiece, maxBytes = MAX_NOTIFY_PAYLOAD_BYTES): string[] {
  const whole = prefix(workflowId) + JSON.stringify(piece);
  if (Buffer.byteLength(whole) <= maxBytes) return [whole];
  const field = textField(piece.event);
  if (field === undefined) return [];
  // What a part costs besides its text: the id, the event's other fields, `start` at its longest.
  const units = deltaUnits(piece.event);
  const empty = { event: { ...piece.event, [field]: '' }, start: piece.start + units };
  const room = maxBytes - Buffer.byteLength(prefix(workflowId) + JSON.stringify(empty));
  // Room for at least a few code points, or the piece is dropped.
  if (room < 24) return [];
  return splitLivePiece(piece, room).map((part) => prefix(workflowId) + JSON.stringify(part));
}

/** The workflow id of a payload, without parsing its piece (undefined when it is not one of ours). */
export function payloadWorkflowId(payload: string): string | undefined {
  const colon = payload.indexOf(':');
  if (colon < 1 || colon > 10) return undefined;
  const length = Number(payload.slice(0, colon));
  if (!Number.isInteger(length) || length < 0 || payload.charAt(colon + 1 + length) !== ' ') return undefined;
  return payload.slice(colon + 1, colon + 1 + length);
}

const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

/** The piece of a payload whose id is `workflowId`; undefined for anything malformed. */
export function decodeLivePiece(payload: string, workflowId: string): LiveDeltaPiece | undefined {
  let piece: unknown;
  try {
    piece = JSON.parse(payload.slice(prefix(workflowId).length));
  } catch {
    return undefined;
  }
  if (typeof piece !== 'object' || piece === null) return undefined;
  const { event, start } = piece as { event?: Record<string, unknown>; start?: unknown };
  if (!isCount(start) || typeof event !== 'object' || event === null) return undefined;
  if (!LIVE_DELTA_TYPES.has(event.type as string) || !isCount(event.step) || !isCount(event.attempt)) return undefined;
  const field = textField(event as unknown as LiveDeltaEvent);
  if (field !== undefined && typeof event[field] !== 'string') return undefined;
  if (event.type !== 'text-delta' && event.type !== 'reasoning-delta' && typeof event.toolCallId !== 'string') return undefined;
  if (event.type === 'tool-input-start' && typeof event.toolName !== 'string') return undefined;
  return { event: event as unknown as LiveDeltaEvent, start };
}
