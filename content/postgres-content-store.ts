/**
 * A content store in a PostgreSQL table, for deployments that already run PostgreSQL (for
 * Temporal, say) and want every worker, client and API process to reach the same content
 * without a shared volume or an object store.
 *
 * One row per object:
 *
 *   key text primary key, bytes bytea not null, size integer not null,
 *   stored_at timestamptz not null default now()
 *
 * The table (default `turnpike_content`) is created on first use when it is missing. `pg`
 * (node-postgres) is an optional peer of turnpike, loaded on first use, so an application that
 * keeps its content elsewhere need not install it.
 */
import type { Pool, PoolConfig } from 'pg';
import { importOptional } from '../peers/optional-packages.js';
import { isContentKey, type ContentStore, type StoredObject } from './content-store.js';

export const DEFAULT_CONTENT_TABLE = 'turnpike_content';
const DEFAULT_PAGE_SIZE = 1000;
/** An unquoted SQL identifier, optionally qualified by a schema: `turnpike_content`, `app.content`. */
const TABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}(\.[A-Za-z_][A-Za-z0-9_]{0,62})?$/;

export interface PostgresContentStoreOptions {
  /** `postgresql://user:password@host:port/database`, as node-postgres takes it. */
  connectionString: string;
  /** The table, optionally `schema.table`; created when missing. Default `turnpike_content`. */
  table?: string;
  /** Rows per query while listing (keyset pagination by key). Default 1000. */
  pageSize?: number;
  /** Most connections the store opens at once. Default 10 (node-postgres's default). */
  maxConnections?: number;
}

/** The connection string with its password left out, for messages. */
export function redactConnectionString(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    if (url.password) url.password = '';
    return url.toString().replace(/:@/, '@');
  } catch {
    return connectionString.replace(/\/\/[^@/]*@/, '//…@');
  }
}

function quoteTable(table: string): string {
  if (!TABLE_NAME.test(table)) {
    throw new TypeError(`PostgresContentStore: table must be an SQL identifier such as turnpike_content or schema.table (got ${JSON.stringify(table)})`);
  }
  return table
    .split('.')
    .map((part) => `"${part}"`)
    .join('.');
}

function checkKey(key: string): void {
  if (!isContentKey(key)) throw new Error(`Not a content key: ${JSON.stringify(key)}`);
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** PostgreSQL's `unique_violation` and `duplicate_table`: two processes created the table at once. */
const CREATED_CONCURRENTLY = new Set(['23505', '42P07']);

export class PostgresContentStore implements ContentStore {
  readonly description: string;
  readonly kind = 'postgresql';
  readonly table: string;
  private readonly quotedTable: string;
  private readonly pageSize: number;
  private closed = false;
  /** Private fields (#): the password never shows in JSON.stringify or console.log of the store. */
  readonly #options: PostgresContentStoreOptions;
  #ready?: Promise<Pool>;
  /** Connections open (connected and not yet closed), so close() can wait for the last. */
  #connections = 0;
  #allClosed?: () => void;

  constructor(options: PostgresContentStoreOptions) {
    this.#options = options;
    this.table = options.table ?? DEFAULT_CONTENT_TABLE;
    this.quotedTable = quoteTable(this.table);
    this.pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
    if (!Number.isInteger(this.pageSize) || this.pageSize < 1) {
      throw new TypeError(`PostgresContentStore: pageSize must be a positive integer (got ${String(options.pageSize)})`);
    }
    this.description = `${redactConnectionString(options.connectionString)} (table ${this.table})`;
  }

  /** The pool, once the table exists. A failed first use is tried again by the next call. */
  private pool(): Promise<Pool> {
    if (this.closed) return Promise.reject(new Error(`The ${this.kind} content store is closed`));
    this.#ready ??= this.open().catch((error: unknown) => {
      this.#ready = undefined;
      throw error;
    });
    return this.#ready;
  }

  private async open(): Promise<Pool> {
    const pg = await importOptional('The PostgreSQL content store', ['pg'], () => import('pg'));
    // A CommonJS module: Node's ESM loader gives its exports as the default export.
    const { Pool: PoolClass } = (pg as unknown as { default?: typeof pg }).default ?? pg;
    const config: PoolConfig = { connectionString: this.#options.connectionString, max: this.#options.maxConnections ?? 10 };
    const pool = new PoolClass(config);
    // An idle connection that the server drops must not crash the process; the next query reconnects.
    pool.on('error', () => {});
    pool.on('connect', () => this.#connections++);
    pool.on('remove', () => {
      this.#connections--;
      if (this.#connections === 0) this.#allClosed?.();
    });
    try {
      await pool.query(
        `CREATE TABLE IF NOT EXISTS ${this.quotedTable} (key text PRIMARY KEY, bytes bytea NOT NULL, size integer NOT NULL, stored_at timestamptz NOT NULL DEFAULT now())`,
      );
    } catch (error) {
      if (!CREATED_CONCURRENTLY.has((error as { code?: string }).code ?? '')) {
        await pool.end().catch(() => {});
        throw error;
      }
    }
    return pool;
  }

  async put(key: string, bytes: Uint8Array): Promise<void> {
    checkKey(key);
    const pool = await this.pool();
    // Content already stored only has its time refreshed, without sending its bytes again.
    const refreshed = await pool.query(`UPDATE ${this.quotedTable} SET stored_at = now() WHERE key = $1`, [key]);
    if (refreshed.rowCount) return;
    await pool.query(`INSERT INTO ${this.quotedTable} (key, bytes, size) VALUES ($1, $2, $3) ON CONFLICT (key) DO UPDATE SET stored_at = now()`, [
      key,
      asBuffer(bytes),
      bytes.byteLength,
    ]);
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    checkKey(key);
    const pool = await this.pool();
    const result = await pool.query<{ bytes: Buffer }>(`SELECT bytes FROM ${this.quotedTable} WHERE key = $1`, [key]);
    return result.rows[0]?.bytes;
  }

  /** Every object by key, a page at a time: each page starts after the last key of the one before. */
  async *list(): AsyncIterable<StoredObject> {
    const pool = await this.pool();
    let after = '';
    for (;;) {
      const page = await pool.query<{ key: string; size: number; stored_at: Date }>(
        `SELECT key, size, stored_at FROM ${this.quotedTable} WHERE key > $1 ORDER BY key LIMIT $2`,
        [after, this.pageSize],
      );
      for (const row of page.rows) {
        if (isContentKey(row.key)) yield { key: row.key, bytes: row.size, storedAt: row.stored_at };
      }
      if (page.rows.length < this.pageSize) return;
      after = page.rows[page.rows.length - 1]!.key;
    }
  }

  async delete(key: string): Promise<void> {
    checkKey(key);
    const pool = await this.pool();
    await pool.query(`DELETE FROM ${this.quotedTable} WHERE key = $1`, [key]);
  }

  /** Ends the connection pool, resolving once every connection is closed; the store cannot be used afterwards. */
  async close(): Promise<void> {
    this.closed = true;
    const pool = await this.#ready?.catch(() => undefined);
    this.#ready = undefined;
    if (!pool) return;
    // pool.end() resolves once no connection is in use, before their sockets have closed.
    const closed = new Promise<void>((resolve) => (this.#allClosed = resolve));
    await pool.end();
    if (this.#connections > 0) await closed;
  }
}
