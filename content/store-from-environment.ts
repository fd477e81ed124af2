/**
 * The content store a process uses when it is not given one: `TURNPIKE_CONTENT_STORE`, a URL.
 *
 *   unset                      `.turnpike/content` under the current folder (npm start, tests)
 *   file:/srv/turnpike/content a folder (a path without a scheme works too)
 *   postgresql://user:password@host:5432/db?table=turnpike_content
 *                              a PostgreSQL table (postgres:// too; `table` defaults to
 *                              turnpike_content and is created when missing; every other
 *                              parameter goes to node-postgres, e.g. sslmode=require)
 *   s3://bucket/prefix/?endpoint=http://127.0.0.1:8333&region=us-east-1&forcePathStyle=true
 *                              an S3 bucket, or an S3-compatible server at `endpoint`; the
 *                              prefix defaults to turnpike/content/, the region to us-east-1;
 *                              credentials come from AWS_ACCESS_KEY_ID and
 *                              AWS_SECRET_ACCESS_KEY or the AWS SDK's other usual sources
 *
 * Every process that reads turn payloads (workers, clients, the HTTP API, the codec server) must
 * name the same store.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ContentStore } from './content-store.js';
import { FileContentStore } from './file-content-store.js';
import { PostgresContentStore, redactConnectionString } from './postgres-content-store.js';
import { S3ContentStore } from './s3-content-store.js';

export const CONTENT_STORE_VARIABLE = 'TURNPIKE_CONTENT_STORE';
export const DEFAULT_CONTENT_FOLDER = path.join('.turnpike', 'content');

const S3_PARAMETERS = new Set(['endpoint', 'region', 'forcePathStyle']);

function unusable(url: string, why: string): Error {
  return new Error(`${CONTENT_STORE_VARIABLE}: cannot use ${JSON.stringify(redactConnectionString(url))}; ${why}`);
}

function postgresStore(url: string): ContentStore {
  const parsed = new URL(url);
  const table = parsed.searchParams.get('table') ?? undefined;
  parsed.searchParams.delete('table');
  try {
    return new PostgresContentStore({ connectionString: parsed.toString(), table });
  } catch (error) {
    throw unusable(url, (error as Error).message);
  }
}

function s3Store(url: string): ContentStore {
  const parsed = new URL(url);
  if (parsed.username || parsed.password) throw unusable(url, 'S3 credentials go in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, not in the URL');
  if (!parsed.hostname) throw unusable(url, 'expected s3://bucket/prefix');
  const unknown = [...parsed.searchParams.keys()].filter((name) => !S3_PARAMETERS.has(name));
  if (unknown.length > 0) throw unusable(url, `unknown parameter ${unknown.join(', ')} (expected ${[...S3_PARAMETERS].join(', ')})`);
  const forcePathStyle = parsed.searchParams.get('forcePathStyle');
  if (forcePathStyle !== null && forcePathStyle !== 'true' && forcePathStyle !== 'false') throw unusable(url, 'forcePathStyle must be true or false');
  const prefix = decodeURIComponent(parsed.pathname.replace(/^\/+/, ''));
  return new S3ContentStore({
    bucket: parsed.hostname,
    prefix: prefix || undefined,
    endpoint: parsed.searchParams.get('endpoint') ?? undefined,
    region: parsed.searchParams.get('region') ?? undefined,
    forcePathStyle: forcePathStyle === null ? undefined : forcePathStyle === 'true',
  });
}

/** The store a URL names; throws a clear error, without the URL's password, for one it cannot take. */
export function contentStoreFromUrl(url: string): ContentStore {
  if (url.startsWith('file:')) return new FileContentStore(url.startsWith('file://') ? fileURLToPath(url) : url.slice('file:'.length));
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) return new FileContentStore(url);
  const scheme = url.slice(0, url.indexOf(':')).toLowerCase();
  if (!URL.canParse(url)) throw unusable(url, 'it is not a URL');
  if (scheme === 'postgres' || scheme === 'postgresql') return postgresStore(url);
  if (scheme === 's3') return s3Store(url);
  throw unusable(url, 'expected a folder, a file:, postgresql:// or s3:// URL');
}

/** The store `TURNPIKE_CONTENT_STORE` names, or the default folder. */
export function contentStoreFromEnvironment(environment: NodeJS.ProcessEnv = process.env): ContentStore {
  const url = environment[CONTENT_STORE_VARIABLE]?.trim();
  return url ? contentStoreFromUrl(url) : new FileContentStore(DEFAULT_CONTENT_FOLDER);
}
