/**
 * A new A2A task's message as turnpike's user message. Text parts are its text, data parts are
 * JSON text, and file parts sent as bytes (`raw`) become image or document parts by their media
 * type: the images and documents turnpike's providers all take (`IMAGE_MEDIA_TYPES`,
 * `DOCUMENT_MEDIA_TYPES`). `TurnpikeClient.startTurn` then keeps every one of 128 KiB or more in
 * the content store, so that only its reference travels in workflow history.
 *
 * Everything is checked here, before anything is stored or started, with the protocol's own
 * errors: another media type is `ContentTypeNotSupportedError` naming the accepted ones; a file
 * by `url` is refused the same way (see below); a file without bytes or media type, one over
 * {@link MAX_A2A_FILE_BYTES}, or small files that together would not fit in workflow history
 * are `RequestMalformedError`.
 *
 * Files by URL are not taken. turnpike's messages can name a URL the provider fetches itself, but
 * with an `ai-sdk` model the AI SDK downloads a URL its model does not take natively from the
 * worker, so a caller's URL would be fetched inside the deployment's network (server-side
 * request forgery). Callers send the bytes instead.
 */
import type { Message, Part } from '@a2a-js/sdk';
import { ContentTypeNotSupportedError, RequestMalformedError } from '@a2a-js/sdk/errors';
import { DEFAULT_STORE_THRESHOLD_BYTES } from '../../content/stored-content.js';
import { DOCUMENT_MEDIA_TYPES, IMAGE_MEDIA_TYPES, MAX_INLINE_TOTAL_BASE64_CHARS, MAX_STORED_PART_BYTES } from '../../workflows/turn/binary-parts.js';
import type { UserContentPart } from '../../workflows/types/index.js';

/** The media types of the files a task's message may carry: images, then documents. */
export const A2A_FILE_MEDIA_TYPES: readonly string[] = [...IMAGE_MEDIA_TYPES, ...DOCUMENT_MEDIA_TYPES];

/** What the Agent Card lists as `defaultInputModes`: text, data (JSON) and the files above. */
export const A2A_INPUT_MODES: readonly string[] = ['text/plain', 'application/json', ...A2A_FILE_MEDIA_TYPES];

/** The largest file a message may carry: the largest image or document the content store keeps for a turn. */
export const MAX_A2A_FILE_BYTES = MAX_STORED_PART_BYTES;

/** The longest file name a document part keeps (as `binaryPartsProblem` checks it). */
const MAX_FILENAME_LENGTH = 255;

/**
 * The content of a new task's user message: a string when it holds text and data only (as before
 * files were taken), else its parts in order, adjacent text and data joined into one text part.
 */
export function messageContent(message: Message): string | UserContentPart[] {
  const parts: UserContentPart[] = [];
  let texts: string[] = [];
  const flush = () => {
    if (texts.length > 0) parts.push({ type: 'text', text: texts.join('\n') });
    texts = [];
  };
  let inlineChars = 0;
  for (const [index, part] of message.parts.entries()) {
    const content = part.content;
    if (content?.$case === 'text') texts.push(content.value);
    else if (content?.$case === 'data') texts.push(JSON.stringify(content.value));
    else if (content?.$case === 'raw' || content?.$case === 'url') {
      const file = filePart(part, index);
      // Small files stay inline in workflow history, and all of them together must fit there.
      if (staysInline(file.source.data)) inlineChars += file.source.data.length;
      flush();
      parts.push(file);
    } else throw new RequestMalformedError({ message: `parts[${index}] must hold text, data, raw bytes or a url` });
  }
  flush();
  if (inlineChars > MAX_INLINE_TOTAL_BASE64_CHARS) {
    throw new RequestMalformedError({ message: `The message's files under ${DEFAULT_STORE_THRESHOLD_BYTES} bytes hold ${inlineChars} base64 characters together; at most ${MAX_INLINE_TOTAL_BASE64_CHARS} fit in a turn's history (larger files go by reference through the content store): send fewer small files` });
  }
  if (!parts.some((part) => part.type !== 'text' || part.text.trim() !== '')) throw new RequestMalformedError({ message: 'The message has no text and no file' });
  return parts.every((part) => part.type === 'text') ? parts.map((part) => (part as { text: string }).text).join('\n') : parts;
}

/** A file part as an image or document part, or the protocol's error saying why it cannot be one. */
function filePart(part: Part, index: number): Extract<UserContentPart, { type: 'image' | 'document' }> & { source: { type: 'base64'; mediaType: string; data: string } } {
  const at = `parts[${index}]`;
  const accepted = `accepted: ${A2A_FILE_MEDIA_TYPES.join(', ')}`;
  if (part.content?.$case === 'url') {
    throw new ContentTypeNotSupportedError({ message: `${at}: files by url are not taken (the API does not fetch URLs): send the file's bytes as raw, with its mediaType (${accepted})` });
  }
  const bytes = part.content?.$case === 'raw' ? part.content.value : undefined;
  if (!bytes || bytes.length === 0) throw new RequestMalformedError({ message: `${at}: a file part needs its bytes (raw), and these are empty` });
  const mediaType = (part.mediaType ?? '').split(';')[0]!.trim().toLowerCase();
  if (mediaType === '') throw new RequestMalformedError({ message: `${at}: a file part needs its mediaType (${accepted})` });
  if (!A2A_FILE_MEDIA_TYPES.includes(mediaType)) throw new ContentTypeNotSupportedError({ message: `${at}: files of type ${JSON.stringify(mediaType)} are not taken; ${accepted}` });
  if (bytes.length > MAX_A2A_FILE_BYTES) throw new RequestMalformedError({ message: `${at} is ${bytes.length} bytes; a file may be at most ${MAX_A2A_FILE_BYTES} bytes` });
  const source = { type: 'base64' as const, mediaType, data: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('base64') };
  if (IMAGE_MEDIA_TYPES.includes(mediaType)) return { type: 'image', source };
  const filename = part.filename ?? '';
  if (filename.length > MAX_FILENAME_LENGTH) throw new RequestMalformedError({ message: `${at}.filename is ${filename.length} characters long; at most ${MAX_FILENAME_LENGTH} are allowed` });
  return { type: 'document', source, ...(filename !== '' ? { filename } : {}) };
}

/** Whether `storeLargeParts` leaves a part of this base64 inline (it measures three bytes in four characters). */
function staysInline(data: string): boolean {
  return (data.length * 3) / 4 < DEFAULT_STORE_THRESHOLD_BYTES;
}
