/**
 * How the real APIs check images and documents in a user message, for the fake provider server:
 * Chat Completions `image_url` and `file` parts, Anthropic `image` and `document` blocks. (The
 * Responses API's `input_image` / `input_file` are checked in openai-responses.ts.)
 */
import type { Json } from './server.js';

const isObject = (value: unknown): value is Record<string, Json> => typeof value === 'object' && value !== null && !Array.isArray(value);
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const IMAGE_DATA_URL = /^data:image\/(png|jpeg|gif|webp);base64,([A-Za-z0-9+/]+={0,2})$/;
const PDF_DATA_URL = /^data:application\/pdf;base64,([A-Za-z0-9+/]+={0,2})$/;

/** Anthropic's per-image limit (base64-decoded bytes); OpenAI's per-request limit on inline files. */
export const ANTHROPIC_MAX_IMAGE_BYTES = 5 * 1024 * 1024;
export const OPENAI_MAX_INLINE_BYTES = 50 * 1024 * 1024;
const ANTHROPIC_MAX_PDF_BYTES = 32 * 1024 * 1024;

const decodedBytes = (base64: string) => Math.floor((base64.length * 3) / 4);

/** A Chat Completions user content part of type `image_url` or `file`. */
export function validateOpenAIBinaryPart(part: Record<string, Json>, at: string): string[] {
  if (part.type === 'image_url') {
    const image = part.image_url;
    if (!isObject(image) || typeof image.url !== 'string') return [`Missing required parameter: '${at}.image_url.url'.`];
    if (image.detail != null && !['low', 'high', 'auto'].includes(image.detail)) return [`Invalid value: '${String(image.detail)}'. Supported values are: 'low', 'high', and 'auto'. (param: ${at}.image_url.detail)`];
    if (image.url.startsWith('data:')) {
      const match = IMAGE_DATA_URL.exec(image.url);
      if (!match) return [`Invalid '${at}.image_url.url'. Expected a base64-encoded data URL with an image MIME type (e.g. 'data:image/png;base64,aW1nIGJ5dGVzIGhlcmU='), but got unsupported MIME type or invalid data.`];
      if (decodedBytes(match[2]) > OPENAI_MAX_INLINE_BYTES) return [`Invalid '${at}.image_url.url': the image is larger than the allowed 50MB.`];
      return [];
    }
    return /^https?:\/\//.test(image.url) ? [] : [`Invalid '${at}.image_url.url'. Expected a valid URL, but got a value with an invalid format.`];
  }
  if (part.type === 'file') {
    const file = part.file;
    if (!isObject(file)) return [`Missing required parameter: '${at}.file'.`];
    if (file.file_id != null) return [];
    // Chat Completions takes no file URL: only an uploaded file's id or inline data.
    if (typeof file.file_data !== 'string') return [`Invalid '${at}.file': one of 'file_id' or 'file_data' is required.`];
    const errors: string[] = [];
    const match = PDF_DATA_URL.exec(file.file_data);
    if (!match) errors.push(`Invalid '${at}.file.file_data'. Expected a base64-encoded data URL with a supported file type (e.g. 'data:application/pdf;base64,…').`);
    else if (decodedBytes(match[1]) > OPENAI_MAX_INLINE_BYTES) errors.push(`Invalid '${at}.file.file_data': the file is larger than the allowed 50MB.`);
    if (typeof file.filename !== 'string' || file.filename.length === 0) errors.push(`Missing required parameter: '${at}.file.filename'.`);
    return errors;
  }
  return [];
}

/** An Anthropic `image` or `document` block in a user message. */
export function validateAnthropicBinaryBlock(block: Record<string, Json>, at: string, role: 'user' | 'assistant'): string[] {
  if (role !== 'user') return [`${at}: ${String(block.type)} blocks can only be in \`user\` messages`];
  const source = block.source;
  if (!isObject(source)) return [`${at}.source: Field required`];
  const image = block.type === 'image';
  if (source.type === 'url') {
    return typeof source.url === 'string' && /^https?:\/\//.test(source.url) ? [] : [`${at}.source.url: Input should be a valid URL`];
  }
  if (source.type === 'text' && !image) return typeof source.data === 'string' ? [] : [`${at}.source.data: Field required`];
  if (source.type !== 'base64') {
    return [`${at}.source: Input tag '${String(source.type)}' found using 'type' does not match any of the expected tags: 'base64', ${image ? '' : "'text', "}'url', 'file'`];
  }
  const mediaTypes = image ? ['image/jpeg', 'image/png', 'image/gif', 'image/webp'] : ['application/pdf'];
  if (!mediaTypes.includes(source.media_type)) return [`${at}.source.base64.media_type: Input should be ${mediaTypes.map((type) => `'${type}'`).join(' or ')}`];
  if (typeof source.data !== 'string' || !BASE64.test(source.data) || source.data.length % 4 !== 0) {
    return [`${at}.source.base64.data: The ${image ? 'image' : 'PDF'} data is not valid base64`];
  }
  const limit = image ? ANTHROPIC_MAX_IMAGE_BYTES : ANTHROPIC_MAX_PDF_BYTES;
  if (decodedBytes(source.data) > limit) return [`${at}.source.base64: ${image ? 'image' : 'PDF'} exceeds ${limit / 1024 / 1024} MB maximum`];
  return [];
}
