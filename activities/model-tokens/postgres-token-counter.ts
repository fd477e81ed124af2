/**
 * The token counter every worker of a fleet shares (`modelCapacity.tokenLimit`): one table in
 * PostgreSQL, a row per booking (key, id, when, tokens).
 *
 * A booking is one transaction under an advisory lock of its key, sent in one round trip, so
 * bookings of a key are placed one at a time in the order they reach the database, by the
 * database's clock (one clock for the whole fleet): one statement reads the key's bookings of the
 * last window, places the new one by the rule of `earliestBooking` (token-counter.ts) and inserts
 * it. The rows that have left the window are deleted by the next booking of their key. Settling a
 * booking is one update of its row.
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
    // A booking's commit does not wait for its WAL to reach the disk, so the key's lock is not held
    // through a flush: a database that crashes may lose its last fraction of a second of bookings,
    // and the windows just after hold that much more than the limit.
    pool.on('connect', (client) => {
      client.query('SET synchronous_commit TO off').catch(() => {});
    });
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
    if (tokens > limit) earliestBooking([], 0, tokens, limit, windowMs);
    const pool = await this.pool();
    const client = await pool.connect();
    try {
      // One round trip: the lock is held only while the database places the booking.
      const results = (await client.query(`BEGIN; SELECT pg_advisory_xact_lock(${lockOf(this.table, key)}); ${this.placing(client, { key, id, tokens, limit, windowMs })}; COMMIT`)) as unknown as Array<{
        rows: Array<{ at_ms?: number; now_ms?: number }>;
      }>;
      client.release();
      const placed = results.find((result) => result.rows[0]?.at_ms !== undefined)?.rows[0];
      if (!placed) throw new Error(`The token counter placed no booking for ${tokens} tokens under a limit of ${limit}`);
      return { waitMs: Number(placed.at_ms) - Number(placed.now_ms) };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      client.release(true);
      throw error;
    }
  }

  /**
   * The statement that places a booking, as `earliestBooking` does: the candidates are the time
   * after every booking (not before now) and each later time at which a booking leaves the window;
   * the earliest at which the window holds the call is taken. `upto` is the tokens booked at or
   * before a booking's time, so the window after it holds `total - upto`. The values are literals
   * (escaped), since a statement of several takes no parameters.
   */
  private placing(client: import('pg').PoolClient, { key, id, tokens, limit, windowMs }: TokenBookingRequest): string {
    const k = client.escapeLiteral(key);
    const number = (value: number) => {
      if (!Number.isFinite(value)) throw new TypeError(`not a finite number: ${value}`);
      return String(value);
    };
    const [w, t, l] = [number(windowMs), number(tokens), number(limit)];
    return `WITH now AS (SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms),
      gone AS (DELETE FROM ${this.quoted} WHERE key = ${k} AND at_ms <= (SELECT ms FROM now) - ${w}),
      booked AS (
        SELECT at_ms, sum(tokens) OVER (ORDER BY at_ms RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS upto
        FROM ${this.quoted} WHERE key = ${k} AND id <> ${client.escapeLiteral(id)} AND at_ms > (SELECT ms FROM now) - ${w}
      ),
      total AS (SELECT coalesce(max(upto), 0) AS tokens, greatest((SELECT ms FROM now), coalesce(max(at_ms), 0)) AS first FROM booked),
      candidate AS (
        SELECT first AS at, tokens - coalesce((SELECT max(upto) FROM booked WHERE at_ms <= first - ${w}), 0) AS held FROM total
        UNION ALL
        SELECT booked.at_ms + ${w}, total.tokens - booked.upto FROM booked, total WHERE booked.at_ms + ${w} > total.first
      )
      INSERT INTO ${this.quoted} (key, id, at_ms, tokens)
        SELECT ${k}, ${client.escapeLiteral(id)}, min(at), ${t} FROM candidate WHERE held + ${t} <= ${l} HAVING min(at) IS NOT NULL
      ON CONFLICT (key, id) DO UPDATE SET at_ms = EXCLUDED.at_ms, tokens = EXCLUDED.tokens
      RETURNING at_ms, (SELECT ms FROM now) AS now_ms`;
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
