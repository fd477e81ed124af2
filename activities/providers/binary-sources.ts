/** Image and document bytes in the shapes the providers take them. */
import type { BinarySource } from '../../workflows/types/index.js';

/** OpenAI requires a file name with inline file data; this one says what it is. */
export const DEFAULT_DOCUMENT_FILENAME = 'document.pdf';

type InlineOrStored = Exclude<BinarySource, { type: 'url' }>;

/**
 * The base64 bytes of a source. A `stored` source is read from the content store before the
 * step reaches a provider (content/stored-content.ts); one that gets here is a bug, said as one.
 */
export function inlineData(source: InlineOrStored): string {
  if (source.type !== 'base64') throw new Error(`Stored content ${source.ref} reached the provider unread from the content store`);
  return source.data;
}

/** A base64 source as a `data:` URL, the form OpenAI takes inline images and files in. */
export function dataUrl(source: InlineOrStored): string {
  return `data:${source.mediaType};base64,${inlineData(source)}`;
}
