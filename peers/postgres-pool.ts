/**
 * A PostgreSQL pool opened on first use, for the stores the fleet shares in PostgreSQL (the tenant
 * usage store, the model token counter): `pg` (node-postgres, an optional peer) is loaded then, the
 * pool's tables are set up once, a failed first use is tried again by the next, and `close()` ends
 * it. Its options and their checks are in postgres-options.ts, which names no type of `pg`: the
 * stores' published typings reach that file, and an application without `pg` type-checks them.
 */
import type { Pool, PoolClient, PoolConfig } from 'pg';
import { importOptional } from './optional-packages.js';
import type { PostgresPoolOptions } from './postgres-options.js';


export class LazyPostgresPool {
  private closed = false;
  /** Private fields (#): the password never shows in JSON.stringify or console.log of the owner. */
  readonly #options: PostgresPoolOptions;
  #ready?: Promise<Pool>;

  /**
   * `what` names the owner in errors ("The PostgreSQL tenant usage store"); `setUp` runs once per
   * pool on a client of its own, in a transaction under an advisory lock of `lockKey`, so workers
   * starting together create the tables one at a time (CREATE ... IF NOT EXISTS alone races);
   * `onConnect` runs on every new connection.
   */
  constructor(
    private readonly what: string,
    options: PostgresPoolOptions,
    private readonly lockKey: string,
    private readonly setUp: (client: PoolClient) => Promise<void>,
    private readonly onConnect?: (client: PoolClient) => void,
  ) {
    this.#options = options;
  }

  /** The pool, once set up. A failed first use is tried again by the next call. */
  get(): Promise<Pool> {
    if (this.closed) return Promise.reject(new Error(`${this.what} is closed`));
    this.#ready ??= this.open().catch((error: unknown) => {
      this.#ready = undefined;
      throw error;
    });
    return this.#ready;
  }

  private async open(): Promise<Pool> {
    const pg = await importOptional(this.what, ['pg'], () => import('pg'));
    // A CommonJS module: Node's ESM loader gives its exports as the default export.
    const { Pool: PoolClass } = (pg as unknown as { default?: typeof pg }).default ?? pg;
    const config: PoolConfig = { connectionString: this.#options.connectionString, max: this.#options.maxConnections ?? 4, connectionTimeoutMillis: 10_000, query_timeout: 10_000 };
    const pool = new PoolClass(config);
    // An idle connection that the server drops must not crash the process; the next query reconnects.
    pool.on('error', () => {});
    if (this.onConnect) pool.on('connect', this.onConnect);
    const client = await pool.connect().catch(async (error: unknown) => {
      await pool.end().catch(() => {});
      throw error;
    });
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [this.lockKey]);
      await this.setUp(client);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      client.release(true);
      await pool.end().catch(() => {});
      throw error;
    }
    client.release();
    return pool;
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
