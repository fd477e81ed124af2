/**
 * The token counter every worker of a fleet shares (`modelCapacity.tokenLimit`): one table in
 * PostgreSQL, a row per booking (key, id, when, tokens).
 *
 * A booking is one transaction under an advisory lock of its key, so bookings of a key are placed
 * one at a time in the order they reach the database, by the database's clock (one clock for the
 * whole fleet): it reads the key's bookings of the last window, places the new one by
 * `earliestBooking` (token-counter.ts) and inserts it. The rows that have left the window are
 * deleted by the next booking of their key. Settling a booking is one update of its row.
 *
 * `pg` (node-postgres) is an optional peer of turnpike, loaded on first use.
 */
import { createHash } from 'node:crypto';
import type { Pool, PoolConfig } from 'pg';
import { importOptional } from '../../peers/optional-packages.js';
import { redactConnectionString } from '../../content/postgres-content-store.js';
import { earliestBooking, type ModelTokenCounter, type TokenBookingRequest } from './token-counter.js';

export const DEFAULT_MODEL_TOKENS_TABLE = 'turnpike_model_tokens';
/** An unquoted SQL identifier, optionally qualified by a schema. */
const TABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,55}(\.[A-Za-z_][A-Za-z0-9_]{0,55})?$/;

export interface PostgresModelTokenCounterOptions {
  /** `postgresql://user:password@host:port/database`, as node-postgres takes it. */
  connectionString: string;
  /** The bookings' table, optionally `schema.table`. Created when missing. Default `turnpike_model_tokens`. */
  table?: string;
  /** Most connections the counter opens at once. Default 4. */
  maxConnections?: number;
}

/** The advisory lock of a key: 63 bits of its SHA-256, as a literal (the lock statement takes no parameters beside BEGIN). */
function lockOf(table: string, key: string): string {
  return BigInt.asIntN(64, createHash('sha256').update(`${table}\u0000${key}`).digest().readBigUInt64BE(0)).toString();
}

export class PostgresModelTokenCounter implements ModelTokenCounter {
  readonly description: string;
  readonly table: string;
  private readonly quoted: string;
  private closed = false;
  /** Private fields (#): the password never shows in JSON.stringify or console.log of the counter. */
  readonly #options: PostgresModelTokenCounterOptions;
  #ready?: Promise<Pool>;

  constructor(options: PostgresModelTokenCounterOptions) {
    if (!options || typeof options.connectionString !== 'string' || options.connectionString.trim() === '') {
      throw new TypeError('PostgresModelTokenCounter: connectionString must be a PostgreSQL URL such as postgresql://user:password@host:5432/database');
    }
    this.#options = options;
    this.table = options.table ?? DEFAULT_MODEL_TOKENS_TABLE;
    if (!TABLE_NAME.test(this.table)) {
      throw new TypeError(`PostgresModelTokenCounter: table must be an SQL identifier such as turnpike_model_tokens or schema.table (got ${JSON.stringify(this.table)})`);
    }
    const maxConnections = options.maxConnections ?? 4;
    if (!Number.isInteger(maxConnections) || maxConnections < 1) {
      throw new TypeError(`PostgresModelTokenCounter: maxConnections must be a whole number of at least 1 (got ${String(options.maxConnections)})`);
    }
    this.quoted = this.table
      .split('.')
      .map((part) => `"${part}"`)
      .join('.');
    this.description = `${redactConnectionString(options.connectionString)} (table ${this.table})`;
  }

  /** The pool, once the table exists. A failed first use is tried again by the next call. */
  private pool(): Promise<Pool> {
    if (this.closed) return Promise.reject(new Error('The PostgreSQL model token counter is closed'));
    this.#ready ??= this.open().catch((error: unknown) => {
      this.#ready = undefined;
      throw error;
    });
    return this.#ready;
  }

  private async open(): Promise<Pool> {
    const pg = await importOptional('The PostgreSQL model token counter', ['pg'], () => import('pg'));
    // A CommonJS module: Node's ESM loader gives its exports as the default export.
    const { Pool: PoolClass } = (pg as unknown as { default?: typeof pg }).default ?? pg;
    const config: PoolConfig = { connectionString: this.#options.connectionString, max: this.#options.maxConnections ?? 4, connectionTimeoutMillis: 10_000, query_timeout: 10_000 };
    const pool = new PoolClass(config);
    // An idle connection that the server drops must not crash the process; the next query reconnects.
    pool.on('error', () => {});
    try {
      // Workers starting together create the table one at a time (CREATE ... IF NOT EXISTS alone races).
      await this.transaction(pool, `SELECT pg_advisory_xact_lock(${lockOf(this.table, '')})`, async (client) => {
        await client.query(`CREATE TABLE IF NOT EXISTS ${this.quoted} (key text NOT NULL, id text NOT NULL, at_ms double precision NOT NULL, tokens bigint NOT NULL, PRIMARY KEY (key, id))`);
        await client.query(`CREATE INDEX IF NOT EXISTS "${this.table.split('.').pop()}_key_at" ON ${this.quoted} (key, at_ms)`);
      });
    } catch (error) {
      await pool.end().catch(() => {});
      throw error;
    }
    return pool;
  }

  /** Runs `body` in a transaction that first runs `lock`; rolled back on any failure. */
  private async transaction<T>(pool: Pool, lock: string, body: (client: import('pg').PoolClient) => Promise<T>): Promise<T> {
    const client = await pool.connect();
    try {
      await client.query(`BEGIN; ${lock}`);
      const result = await body(client);
      await client.query('COMMIT');
      client.release();
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      client.release(true);
      throw error;
    }
  }

  async book({ key, id, tokens, limit, windowMs }: TokenBookingRequest): Promise<{ waitMs: number }> {
    const pool = await this.pool();
    return this.transaction(pool, `SELECT pg_advisory_xact_lock(${lockOf(this.table, key)})`, async (client) => {
      // The database's clock, and the key's bookings still in the window; older ones are deleted.
      const { rows } = await client.query<{ now_ms: number; bookings: Array<{ atMs: number; tokens: number }> | null }>(
        `WITH now AS (SELECT extract(epoch FROM clock_timestamp()) * 1000 AS ms),
              gone AS (DELETE FROM ${this.quoted} WHERE key = $1 AND at_ms <= (SELECT ms FROM now) - $2)
         SELECT (SELECT ms FROM now)::float8 AS now_ms,
                (SELECT json_agg(json_build_object('atMs', at_ms, 'tokens', tokens)) FROM ${this.quoted}
                  WHERE key = $1 AND at_ms > (SELECT ms FROM now) - $2 AND id <> $3) AS bookings`,
        [key, windowMs, id],
      );
      const nowMs = Number(rows[0]!.now_ms);
      const atMs = earliestBooking(rows[0]!.bookings ?? [], nowMs, tokens, limit, windowMs);
      await client.query(
        `INSERT INTO ${this.quoted} (key, id, at_ms, tokens) VALUES ($1, $2, $3, $4) ON CONFLICT (key, id) DO UPDATE SET at_ms = EXCLUDED.at_ms, tokens = EXCLUDED.tokens`,
        [key, id, atMs, tokens],
      );
      return { waitMs: atMs - nowMs };
    });
  }

  async settle(key: string, id: string, tokens: number): Promise<void> {
    const pool = await this.pool();
    await pool.query(`UPDATE ${this.quoted} SET tokens = $3 WHERE key = $1 AND id = $2`, [key, id, tokens]);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const ready = this.#ready;
    this.#ready = undefined;
    const pool = await ready?.catch(() => undefined);
    await pool?.end();
  }
}
