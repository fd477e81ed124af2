/**
 * The token counter every worker of a fleet shares (`modelCapacity.tokenLimit`): one table in
 * PostgreSQL, a row per booking (key, id, when, tokens).
 *
 * A booking is one transaction under an advisory lock of its key, sent in one round trip, so
 * bookings of a key are placed one at a time in the order they reach the database, by the
 * database's clock (one clock for the whole fleet): one statement reads the key's bookings of the
 * last window, places the new one by the rule of `placeBooking` (token-counter.ts: `earliestBooking`
 * in each lane the call may use) and inserts it. The rows that have left the window are deleted by the next booking of their key. Settling a
 * booking is one update of its row.
 *
 * `pg` (node-postgres) is an optional peer of turnpike, loaded on first use.
 */
import { createHash } from 'node:crypto';
import type { PoolClient } from 'pg';
import { LazyPostgresPool } from '../../peers/postgres-pool.js';
import { checkedPostgresOptions, type PostgresPoolOptions } from '../../peers/postgres-options.js';
import { redactConnectionString } from '../../content/postgres-content-store.js';
import { lanesOf, type ModelTokenCounter, type TokenBookingRequest } from './token-counter.js';

export const DEFAULT_MODEL_TOKENS_TABLE = 'turnpike_model_tokens';

export interface PostgresModelTokenCounterOptions extends PostgresPoolOptions {
  /** The bookings' table, optionally `schema.table`. Created when missing. Default `turnpike_model_tokens`. */
  table?: string;
}

/** The advisory lock of a key: 64 bits of its SHA-256, as a literal (a statement of several takes no parameters). */
function lockOf(table: string, key: string): string {
  return BigInt.asIntN(64, createHash('sha256').update(`${table}\u0000${key}`).digest().readBigUInt64BE(0)).toString();
}

export class PostgresModelTokenCounter implements ModelTokenCounter {
  readonly description: string;
  readonly table: string;
  private readonly quoted: string;
  readonly #pool: LazyPostgresPool;

  constructor(options: PostgresModelTokenCounterOptions) {
    const { table, quoted } = checkedPostgresOptions('PostgresModelTokenCounter', options, DEFAULT_MODEL_TOKENS_TABLE);
    this.table = table;
    this.quoted = quoted;
    this.description = `${redactConnectionString(options.connectionString)} (table ${table})`;
    this.#pool = new LazyPostgresPool(
      'The PostgreSQL model token counter',
      options,
      table,
      async (client) => {
        await client.query(`CREATE TABLE IF NOT EXISTS ${this.quoted} (key text NOT NULL, id text NOT NULL, at_ms double precision NOT NULL, tokens bigint NOT NULL, reserved boolean NOT NULL DEFAULT false, PRIMARY KEY (key, id))`);
        // A table made before the reserve existed gains its lane column.
        await client.query(`ALTER TABLE ${this.quoted} ADD COLUMN IF NOT EXISTS reserved boolean NOT NULL DEFAULT false`);
        await client.query(`CREATE INDEX IF NOT EXISTS "${table.split('.').pop()}_key_at" ON ${this.quoted} (key, at_ms)`);
      },
      // A booking's commit does not wait for its WAL to reach the disk, so the key's lock is not
      // held through a flush: a database that crashes may lose its last fraction of a second of
      // bookings, and the windows just after hold that much more than the limit.
      (client) => {
        client.query('SET synchronous_commit TO off').catch(() => {});
      },
    );
  }

  async book(request: TokenBookingRequest): Promise<{ waitMs: number }> {
    const { key, tokens, limit } = request;
    const lanes = lanesOf(request);
    const pool = await this.#pool.get();
    const client = await pool.connect();
    try {
      // One round trip: the lock is held only while the database places the booking.
      const results = (await client.query(`BEGIN; SELECT pg_advisory_xact_lock(${lockOf(this.table, key)}); ${this.placing(client, request, lanes)}; COMMIT`)) as unknown as Array<{
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
   * The statement that places a booking, as `placeBooking` does. In each lane the call may use,
   * the candidates are the time after every booking of the lane (not before now) and each later
   * time at which one of them leaves the window; the earliest at which the window holds the call
   * is the lane's; the earliest lane's is taken, the shared lane's on a tie. `upto` is the tokens
   * booked in the lane at or before a booking's time, so the window after it holds `total - upto`.
   * The values are literals (escaped), since a statement of several takes no parameters.
   */
  private placing(client: PoolClient, { key, id, tokens, windowMs }: TokenBookingRequest, lanes: ReturnType<typeof lanesOf>): string {
    const k = client.escapeLiteral(key);
    const number = (value: number) => {
      if (!Number.isFinite(value)) throw new TypeError(`not a finite number: ${value}`);
      return String(value);
    };
    const [w, t] = [number(windowMs), number(tokens)];
    const lane = (name: string, reserved: boolean, limit: number) => `
      ${name}_booked AS (
        SELECT at_ms, sum(tokens) OVER (ORDER BY at_ms RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS upto
        FROM ${this.quoted} WHERE key = ${k} AND reserved = ${reserved} AND id <> ${client.escapeLiteral(id)} AND at_ms > (SELECT ms FROM now) - ${w}
      ),
      ${name}_total AS (SELECT coalesce(max(upto), 0) AS tokens, greatest((SELECT ms FROM now), coalesce(max(at_ms), 0)) AS first FROM ${name}_booked),
      ${name}_candidate AS (
        SELECT first AS at, tokens - coalesce((SELECT max(upto) FROM ${name}_booked WHERE at_ms <= first - ${w}), 0) AS held FROM ${name}_total
        UNION ALL
        SELECT ${name}_booked.at_ms + ${w}, ${name}_total.tokens - ${name}_booked.upto FROM ${name}_booked, ${name}_total WHERE ${name}_booked.at_ms + ${w} > ${name}_total.first
      ),
      ${name}_at AS (SELECT min(at) AS at, ${reserved} AS reserved FROM ${name}_candidate WHERE held + ${t} <= ${number(limit)})`;
    const names = lanes.map((each) => (each.reserved ? 'reserve' : 'shared'));
    return `WITH now AS (SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms),
      gone AS (DELETE FROM ${this.quoted} WHERE key = ${k} AND at_ms <= (SELECT ms FROM now) - ${w}),
      ${lanes.map((each, index) => lane(names[index]!, each.reserved, each.limit)).join(',')},
      placed AS (SELECT at, reserved FROM (${names.map((name) => `SELECT * FROM ${name}_at`).join(' UNION ALL ')}) AS lanes WHERE at IS NOT NULL ORDER BY at, reserved LIMIT 1)
      INSERT INTO ${this.quoted} (key, id, at_ms, tokens, reserved)
        SELECT ${k}, ${client.escapeLiteral(id)}, at, ${t}, reserved FROM placed
      ON CONFLICT (key, id) DO UPDATE SET at_ms = EXCLUDED.at_ms, tokens = EXCLUDED.tokens, reserved = EXCLUDED.reserved
      RETURNING at_ms, (SELECT ms FROM now) AS now_ms`;
  }

  async settle(key: string, id: string, tokens: number): Promise<void> {
    const pool = await this.#pool.get();
    await pool.query(`UPDATE ${this.quoted} SET tokens = $3 WHERE key = $1 AND id = $2`, [key, id, tokens]);
  }

  async close(): Promise<void> {
    await this.#pool.close();
  }
}
