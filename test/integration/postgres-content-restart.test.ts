/**
 * The PostgreSQL content store while its database restarts under it (scripts/postgres.ts's
 * restart, as the cluster chaos test does it): reads and writes keep going through both a fast
 * shutdown (an operator's restart) and an immediate one (a crash, WAL replayed on start).
 *
 * During the outage every operation either does what it says or rejects: a read never answers
 * "not there" (which a model step would report as ContentMissing) nor other bytes, and every
 * write that resolved is there afterwards. After the restart the same store object (its pool)
 * works again without being reopened.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentKey, readVerified, storeContent } from '../../content/content-store.js';
import { PostgresContentStore } from '../../content/postgres-content-store.js';
import { startPostgres, type Postgres, type PostgresShutdown } from '../../scripts/postgres.js';
import { freeLowPort } from '../support/free-port.js';

const directory = mkdtempSync(path.join(tmpdir(), 'turnpike-pg-restart-'));
// PostgreSQL runs as the postgres user when we are root: it must reach <directory>/pg.
chmodSync(directory, 0o755);

let postgres: Postgres;
let store: PostgresContentStore;

beforeAll(async () => {
  postgres = await startPostgres({ dataDirectory: path.join(directory, 'pg'), port: await freeLowPort(), user: 'turnpike', password: 'restart-test', logFile: path.join(directory, 'postgres.log') });
  store = new PostgresContentStore({ connectionString: `postgresql://${postgres.user}:${postgres.password}@${postgres.host}:${postgres.port}/postgres`, table: 'restart_content' });
});

afterAll(async () => {
  await store?.close();
  await postgres?.stop();
  rmSync(directory, { recursive: true, force: true });
});

interface Outcome {
  op: 'get' | 'put';
  key: string;
  result: 'ok' | 'missing' | 'other bytes' | 'rejected';
  error?: string;
}

describe.each<PostgresShutdown>(['fast', 'immediate'])('the PostgreSQL content store through a %s restart', (mode) => {
  it('rejects or succeeds, never reads content as missing, and keeps every write that resolved', async () => {
    const before = Array.from({ length: 20 }, () => randomBytes(64 * 1024));
    for (const bytes of before) await storeContent(store, bytes);

    const outcomes: Outcome[] = [];
    const written = new Map<string, Buffer>();
    let restarting = true;
    // Four loops, each a read of an object stored before and a write of a new one, as fast as
    // they go, from before the shutdown until the database answers again.
    const traffic = Array.from({ length: 4 }, async (_, loop) => {
      for (let round = 0; restarting; round++) {
        const old = before[(loop * 5 + round) % before.length]!;
        const oldKey = contentKey(old);
        const got = await store.get(oldKey).then(
          (bytes): Outcome['result'] => (bytes === undefined ? 'missing' : Buffer.from(bytes).equals(old) ? 'ok' : 'other bytes'),
          (error: unknown) => {
            outcomes.push({ op: 'get', key: oldKey, result: 'rejected', error: String(error) });
            return undefined;
          },
        );
        if (got) outcomes.push({ op: 'get', key: oldKey, result: got });
        const fresh = randomBytes(16 * 1024);
        const freshKey = contentKey(fresh);
        await storeContent(store, fresh).then(
          () => {
            written.set(freshKey, fresh);
            outcomes.push({ op: 'put', key: freshKey, result: 'ok' });
          },
          (error: unknown) => outcomes.push({ op: 'put', key: freshKey, result: 'rejected', error: String(error) }),
        );
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const { downMs } = await postgres.restart(mode);
    // A little traffic after it is back, through the same pool.
    await new Promise((resolve) => setTimeout(resolve, 500));
    restarting = false;
    await Promise.all(traffic);

    const rejected = outcomes.filter((outcome) => outcome.result === 'rejected');
    console.log(`${mode} restart: down ${downMs} ms; ${outcomes.length} operations, ${rejected.length} rejected: ${[...new Set(rejected.map((outcome) => outcome.error!.replace(/\d+/g, 'N')))].join(' | ')}`);
    // The outage was seen, and only as rejections.
    expect(rejected.length).toBeGreaterThan(0);
    expect(outcomes.filter((outcome) => outcome.result === 'missing' || outcome.result === 'other bytes')).toEqual([]);
    // Both kinds of operation succeeded again after the restart.
    expect(outcomes.slice(-8).filter((outcome) => outcome.result === 'ok').length).toBeGreaterThan(0);

    // Nothing stored before, and nothing whose write resolved, is lost.
    for (const bytes of [...before, ...written.values()]) expect(Buffer.from(await readVerified(store, contentKey(bytes))).equals(bytes)).toBe(true);
    expect(written.size).toBeGreaterThan(0);
  });
});
