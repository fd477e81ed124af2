/**
 * contentStoreFromUrl: which store each TURNPIKE_CONTENT_STORE form builds, with which options,
 * and that no error or description shows a password. Building a store opens no connection, so
 * this needs no database or object store (test/integration/content-stores.test.ts uses them).
 */
import path from 'node:path';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { FileContentStore } from '../../content/file-content-store.js';
import { PostgresContentStore } from '../../content/postgres-content-store.js';
import { S3ContentStore } from '../../content/s3-content-store.js';
import { contentStoreFromEnvironment, contentStoreFromUrl } from '../../content/store-from-environment.js';

const SECRET = 'pa55-w0rd';

function errorOf(url: string): string {
  try {
    contentStoreFromUrl(url);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`${url} was accepted`);
}

describe('contentStoreFromUrl', () => {
  it('builds a folder store from a path or a file: URL, and the default folder when unset', () => {
    expect((contentStoreFromUrl('/srv/content') as FileContentStore).root).toBe('/srv/content');
    expect((contentStoreFromUrl('file:/srv/content') as FileContentStore).root).toBe('/srv/content');
    expect((contentStoreFromUrl('file:///srv/content') as FileContentStore).root).toBe('/srv/content');
    expect((contentStoreFromEnvironment({}) as FileContentStore).root).toBe(path.resolve('.turnpike/content'));
  });

  it('builds a PostgreSQL store, taking table= out of the connection string and the password out of its description', () => {
    for (const scheme of ['postgres', 'postgresql']) {
      const store = contentStoreFromUrl(`${scheme}://turnpike:${SECRET}@db.internal:5432/app?table=app.content&sslmode=require`);
      expect(store).toBeInstanceOf(PostgresContentStore);
      expect((store as PostgresContentStore).table).toBe('app.content');
      expect(store.description).toBe(`${scheme}://turnpike@db.internal:5432/app?sslmode=require (table app.content)`);
      expect(JSON.stringify(store)).not.toContain(SECRET);
      expect(inspect(store, { depth: 5 })).not.toContain(SECRET);
    }
    expect((contentStoreFromUrl('postgresql://localhost/app') as PostgresContentStore).table).toBe('turnpike_content');
  });

  it('refuses a table that is not an SQL identifier, without showing the password', () => {
    for (const table of ['content;drop', 'a-b', '"quoted"', 'a.b.c', '1abc']) {
      const message = errorOf(`postgresql://turnpike:${SECRET}@localhost/app?table=${encodeURIComponent(table)}`);
      expect(message).toContain('table must be an SQL identifier');
      expect(message).not.toContain(SECRET);
    }
  });

  it('builds an S3 store with its bucket, prefix, endpoint, region and path style', () => {
    const store = contentStoreFromUrl('s3://turns/archive/content?endpoint=http://127.0.0.1:8333&region=eu-west-1&forcePathStyle=true');
    expect(store).toBeInstanceOf(S3ContentStore);
    expect(store).toMatchObject({ bucket: 'turns', prefix: 'archive/content/', description: 's3://turns/archive/content/ at http://127.0.0.1:8333' });
    expect(contentStoreFromUrl('s3://turns')).toMatchObject({ bucket: 'turns', prefix: 'turnpike/content/', description: 's3://turns/turnpike/content/' });
  });

  it('refuses S3 credentials in the URL, unknown parameters and a bad forcePathStyle', () => {
    const withKey = errorOf(`s3://AKIA:${SECRET}@turns/`);
    expect(withKey).toContain('AWS_ACCESS_KEY_ID');
    expect(withKey).not.toContain(SECRET);
    expect(errorOf('s3://turns/?bucket=x')).toContain('unknown parameter bucket');
    expect(errorOf('s3://turns/?forcePathStyle=yes')).toContain('forcePathStyle must be true or false');
  });

  it('refuses other schemes without showing the password', () => {
    const message = errorOf(`redis://turnpike:${SECRET}@cache:6379/0`);
    expect(message).toContain('expected a folder, a file:, postgresql:// or s3:// URL');
    expect(message).not.toContain(SECRET);
  });
});
