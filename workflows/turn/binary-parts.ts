/**
 * Checks of the images and documents in a turn's messages, run when the turn starts.
 *
 * Inline (base64) bytes travel in workflow history: in the turn's input and in every model
 * step's activity input. Temporal refuses a payload over 2 MB (the default blob size limit), so a
 * turn whose images would cross it would fail at its first model call, or worse, after it parked.
 * It is refused up front instead, with a message naming the part, before any model is called.
 * Pure and deterministic (workflow code); a turn without such parts is accepted exactly as before.
 */
import type { BinarySource, Message, ModelProvider } from '../types/index.js';

/** The largest inline image or document, decoded: what one part may add to the turn's input. */
export const MAX_INLINE_PART_BYTES = 1024 * 1024;

/**
 * The largest image or document kept in the content store (a `stored` source): only its
 * reference travels in history, so the limit is the providers' (OpenAI takes files up to 50 MB).
 */
export const MAX_STORED_PART_BYTES = 50 * 1024 * 1024;

const STORED_REF = /^sha256:[0-9a-f]{64}$/;

/**
 * The most base64 text all of a turn's inline parts may hold together: under Temporal's 2 MB
 * payload limit with room for the rest of the step's input.
 */
export const MAX_INLINE_TOTAL_BASE64_CHARS = 1_500_000;

/** The longest URL a part may name. */
export const MAX_URL_LENGTH = 2048;

/** The image formats both OpenAI and Anthropic take. */
export const IMAGE_MEDIA_TYPES: readonly string[] = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];

/** The document formats both OpenAI and Anthropic take. */
export const DOCUMENT_MEDIA_TYPES: readonly string[] = ['application/pdf'];

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Bytes that `data` decodes to (it is valid base64). */
export function base64Bytes(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.floor((data.length * 3) / 4) - padding;
}

/**
 * Why the images and documents in `messages` cannot be sent to `provider`, naming the part
 * (`messages[0].content[1] …`), or undefined when they can (or there are none).
 */
export function binaryPartsProblem(messages: readonly Message[], provider: ModelProvider): string | undefined {
  let total = 0;
  for (const [messageIndex, message] of messages.entries()) {
    if (!message || typeof message !== 'object' || !Array.isArray(message.content)) continue;
    for (const [partIndex, part] of (message.content as Array<{ type?: unknown }>).entries()) {
      if (!part || (part.type !== 'image' && part.type !== 'document')) continue;
      const at = `messages[${messageIndex}].content[${partIndex}]`;
      if (message.role !== 'user') return `${at}: ${String(part.type)} parts may only appear in user messages`;
      const typed = part as { type: 'image' | 'document'; source?: unknown; detail?: unknown; filename?: unknown };
      const problem = partProblem(typed, provider);
      if (problem) return `${at}${problem}`;
      const source = typed.source as BinarySource;
      if (source.type === 'base64') total += source.data.length;
    }
  }
  if (total > MAX_INLINE_TOTAL_BASE64_CHARS) {
    return `messages: the inline images and documents hold ${total} base64 characters together; at most ${MAX_INLINE_TOTAL_BASE64_CHARS} fit in a turn (they travel in workflow history, which refuses payloads over 2 MB). ${LARGER_ONES}`;
  }
  return undefined;
}

const LARGER_ONES = `. Larger files go by reference: TurnpikeClient and the HTTP API keep inline parts of 128 KiB or more in the content store (up to ${MAX_STORED_PART_BYTES} bytes each), or pass a URL`;

function partProblem(part: { type: 'image' | 'document'; source?: unknown; detail?: unknown; filename?: unknown }, provider: ModelProvider): string | undefined {
  const kinds = part.type === 'image' ? IMAGE_MEDIA_TYPES : DOCUMENT_MEDIA_TYPES;
  if (part.type === 'image' && part.detail !== undefined && !['low', 'high', 'auto'].includes(part.detail as string)) {
    return `.detail must be one of low, high, auto (got ${JSON.stringify(part.detail)})`;
  }
  if (part.type === 'document' && part.filename !== undefined && (typeof part.filename !== 'string' || part.filename.length === 0 || part.filename.length > 255)) {
    return '.filename must be a non-empty string of at most 255 characters';
  }
  const source = part.source as Record<string, unknown> | undefined;
  if (!source || typeof source !== 'object') return `.source must be { type: 'base64', mediaType, data }, { type: 'stored', ref, mediaType, bytes } or { type: 'url', url }`;
  if (source.mediaType !== undefined && !kinds.includes(source.mediaType as string)) {
    return `.source.mediaType must be one of ${kinds.join(', ')} (got ${JSON.stringify(source.mediaType)})`;
  }
  if (source.type === 'url') {
    const url = source.url;
    if (typeof url !== 'string' || !/^https?:\/\/[^\s]+$/i.test(url)) return `.source.url must be an http(s) URL`;
    if (url.length > MAX_URL_LENGTH) return `.source.url is ${url.length} characters long; at most ${MAX_URL_LENGTH} are allowed`;
    if (part.type === 'document' && provider === 'openai') {
      return ': OpenAI Chat Completions takes documents inline only (base64), not by URL; use provider "openai-responses" or inline data';
    }
    return undefined;
  }
  if (source.type === 'stored') return storedProblem(source, kinds);
  if (source.type !== 'base64') return `.source.type must be 'base64', 'stored' or 'url' (got ${JSON.stringify(source.type)})`;
  if (source.mediaType === undefined) return `.source.mediaType is required for base64 data (one of ${kinds.join(', ')})`;
  const data = source.data;
  if (typeof data !== 'string' || data.length === 0) return '.source.data must be a non-empty base64 string';
  if (data.startsWith('data:')) return '.source.data must be bare base64, without a "data:" prefix';
  if (data.length % 4 !== 0 || !BASE64.test(data)) return '.source.data is not valid base64';
  const bytes = base64Bytes(data);
  if (bytes > MAX_INLINE_PART_BYTES) {
    return ` is ${bytes} bytes; an inline ${part.type} may be at most ${MAX_INLINE_PART_BYTES} bytes (it travels in workflow history)${LARGER_ONES}`;
  }
  return undefined;
}

function storedProblem(source: Record<string, unknown>, kinds: readonly string[]): string | undefined {
  if (typeof source.ref !== 'string' || !STORED_REF.test(source.ref)) return '.source.ref must be "sha256:" and 64 lowercase hex digits';
  if (source.mediaType === undefined) return `.source.mediaType is required for stored content (one of ${kinds.join(', ')})`;
  const bytes = source.bytes;
  if (typeof bytes !== 'number' || !Number.isInteger(bytes) || bytes <= 0) return '.source.bytes must be a positive integer';
  if (bytes > MAX_STORED_PART_BYTES) return `.source is ${bytes} bytes; a stored image or document may be at most ${MAX_STORED_PART_BYTES} bytes`;
  return undefined;
}
