/**
 * The content store a process uses when it is not given one: `TURNPIKE_CONTENT_STORE`, a URL.
 *
 *   unset                      `.turnpike/content` under the current folder (npm start, tests)
 *   file:/srv/turnpike/content a folder (a path without a scheme works too)
 *
 * Every process that reads turn payloads (workers, clients, the HTTP API, the codec server) must
 * name the same store.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ContentStore } from './content-store.js';
import { FileContentStore } from './file-content-store.js';

export const CONTENT_STORE_VARIABLE = 'TURNPIKE_CONTENT_STORE';
export const DEFAULT_CONTENT_FOLDER = path.join('.turnpike', 'content');

/** The store a URL names; throws a clear error for one it cannot take. */
export function contentStoreFromUrl(url: string): ContentStore {
  if (url.startsWith('file:')) return new FileContentStore(url.startsWith('file://') ? fileURLToPath(url) : url.slice('file:'.length));
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) return new FileContentStore(url);
  throw new Error(`${CONTENT_STORE_VARIABLE}: cannot use ${JSON.stringify(url.replace(/\/\/[^@/]*@/, '//…@'))}; expected a folder or file: URL`);
}

/** The store `TURNPIKE_CONTENT_STORE` names, or the default folder. */
export function contentStoreFromEnvironment(environment: NodeJS.ProcessEnv = process.env): ContentStore {
  const url = environment[CONTENT_STORE_VARIABLE]?.trim();
  return url ? contentStoreFromUrl(url) : new FileContentStore(DEFAULT_CONTENT_FOLDER);
}
