/** Image and document bytes in the shapes the providers take them. */
import type { BinarySource } from '../../workflows/types.js';

/** OpenAI requires a file name with inline file data; this one says what it is. */
export const DEFAULT_DOCUMENT_FILENAME = 'document.pdf';

/** A base64 source as a `data:` URL, the form OpenAI takes inline images and files in. */
export function dataUrl(source: Extract<BinarySource, { type: 'base64' }>): string {
  return `data:${source.mediaType};base64,${source.data}`;
}
