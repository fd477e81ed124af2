/**
 * The tenant usage store every worker of a fleet shares: two tables in PostgreSQL.
 *
 * - `<table>` holds each tenant's totals per period (primary key `tenant, period`);
 * - `<table>_steps` holds one row per model step recorded (primary key: the step's activity,
 *   `<workflowId>/<runId>/<activityId>`, the same for every attempt).
 *
 * A step is recorded by one statement: the insert into `_steps` (`ON CONFLICT DO NOTHING`) feeds
 * the upsert of the totals, so a step's usage is added once, and only when its row is new: a
 * retried attempt that records the same step again adds nothing, and two workers adding at once
 * are serialised by the totals row's lock. `_steps` grows by a row per model step: delete old
 * rows (`DELETE FROM turnpike_tenant_usage_steps WHERE recorded_at < now() - interval '7 days'`)
 * once no activity of theirs can still be retried.
 *
 * `pg` (node-postgres) is an optional peer of turnpike, loaded on first use.
 */
import type { Pool, PoolConfig } from 'pg';
import { importOptional } from '../../peers/optional-packages.js';
import { redactConnectionString } from '../../content/postgres-content-store.js';
import type { TenantSpend } from '../../workflows/types/index.js';
import { NO_TENANT_SPEND, type TenantUsageRecord, type TenantUsageStore } from './tenant-usage-store.js';

export const DEFAULT_TENANT_USAGE_TABLE = 'turnpike_tenant_usage';
/** An unquoted SQL identifier, optionally qualified by a schema. */
const TABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,55}(\.[A-Za-z_][A-Za-z0-9_]{0,55})?$/;

export interface PostgresTenantUsageStoreOptions {
  /** `postgresql://user:password@host:port/database`, as node-postgres takes it. */
  connectionString: string;
  /** The totals' table, optionally `schema.table`; the steps' is the same name with `_steps`. Created when missing. Default `turnpike_tenant_usage`. */
  table?: string;
  /** Most connections the store opens at once. Default 4. */
  maxConnections?: number;
}

const quoted = (table: string) =>
  table
    .split('.')
    .map((part) => `"${part}"`)
    .join('.');

export class PostgresTenantUsageStore implements TenantUsageStore {
  readonly description: string;
  readonly table: string;
  private readonly totals: string;
  private readonly steps: string;
  private closed = false;
  /** Private fields (#): the password never shows in JSON.stringify or console.log of the store. */
  readonly #options: PostgresTenantUsageStoreOptions;
  #ready?: Promise<Pool>;

  constructor(options: PostgresTenantUsageStoreOptions) {
    if (!options || typeof options.connectionString !== 'string' || options.connectionString.trim() === '') {
      throw new TypeError('PostgresTenantUsageStore: connectionString must be a PostgreSQL URL such as postgresql://user:password@host:5432/database');
    }
    this.#options = options;
    this.table = options.table ?? DEFAULT_TENANT_USAGE_TABLE;
    if (!TABLE_NAME.test(this.table)) {
      throw new TypeError(`PostgresTenantUsageStore: table must be an SQL identifier such as turnpike_tenant_usage or schema.table (got ${JSON.stringify(this.table)})`);
    }
    const maxConnections = options.maxConnections ?? 4;
    if (!Number.isInteger(maxConnections) || maxConnections < 1) {
      throw new TypeError(`PostgresTenantUsageStore: maxConnections must be a whole number of at least 1 (got ${String(options.maxConnections)})`);
    }
    this.totals = quoted(this.table);
    this.steps = quoted(`${this.table}_steps`);
    this.description = `${redactConnectionString(options.connectionString)} (table ${this.table})`;
  }

  /** The pool, once the tables exist. A failed first use is tried again by the next call. */
  private pool(): Promise<Pool> {
    if (this.closed) return Promise.reject(new Error('The PostgreSQL tenant usage store is closed'));
    this.#ready ??= this.open().catch((error: unknown) => {
      this.#ready = undefined;
      throw error;
    });
    return this.#ready;
  }

  private async open(): Promise<Pool> {
    const pg = await importOptional('The PostgreSQL tenant usage store', ['pg'], () => import('pg'));
    // A CommonJS module: Node's ESM loader gives its exports as the default export.
    const { Pool: PoolClass } = (pg as unknown as { default?: typeof pg }).default ?? pg;
    const config: PoolConfig = { connectionString: this.#options.connectionString, max: this.#options.maxConnections ?? 4, connectionTimeoutMillis: 10_000, query_timeout: 10_000 };
    const pool = new PoolClass(config);
    // An idle connection that the server drops must not crash the process; the next query reconnects.
    pool.on('error', () => {});
    const client = await pool.connect().catch(async (error: unknown) => {
      await pool.end().catch(() => {});
      throw error;
    });
    try {
      // Workers starting together create the tables one at a time (CREATE ... IF NOT EXISTS alone races).
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [this.table]);
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${this.totals} (tenant text NOT NULL, period text NOT NULL, input_tokens bigint NOT NULL DEFAULT 0, output_tokens bigint NOT NULL DEFAULT 0, cost_usd numeric NOT NULL DEFAULT 0, steps bigint NOT NULL DEFAULT 0, updated_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (tenant, period))`,
      );
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${this.steps} (step text PRIMARY KEY, tenant text NOT NULL, period text NOT NULL, input_tokens bigint NOT NULL, output_tokens bigint NOT NULL, cost_usd numeric, recorded_at timestamptz NOT NULL DEFAULT now())`,
      );
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

  async spent(tenant: string, period: string): Promise<TenantSpend> {
    const pool = await this.pool();
    const { rows } = await pool.query<{ input_tokens: string; output_tokens: string; cost_usd: string; steps: string }>(
      `SELECT input_tokens, output_tokens, cost_usd, steps FROM ${this.totals} WHERE tenant = $1 AND period = $2`,
      [tenant, period],
    );
    const row = rows[0];
    if (!row) return { ...NO_TENANT_SPEND };
    return { inputTokens: Number(row.input_tokens), outputTokens: Number(row.output_tokens), costUsd: Number(row.cost_usd), steps: Number(row.steps) };
  }

  async record(step: TenantUsageRecord): Promise<boolean> {
    const pool = await this.pool();
    // One statement: the totals grow only by a step row that this statement inserted.
    const { rowCount } = await pool.query(
      `WITH step AS (
         INSERT INTO ${this.steps} (step, tenant, period, input_tokens, output_tokens, cost_usd) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (step) DO NOTHING
         RETURNING tenant, period, input_tokens, output_tokens, coalesce(cost_usd, 0) AS cost_usd
       )
       INSERT INTO ${this.totals} AS total (tenant, period, input_tokens, output_tokens, cost_usd, steps)
       SELECT tenant, period, input_tokens, output_tokens, cost_usd, 1 FROM step
       ON CONFLICT (tenant, period) DO UPDATE SET
         input_tokens = total.input_tokens + EXCLUDED.input_tokens,
         output_tokens = total.output_tokens + EXCLUDED.output_tokens,
         cost_usd = total.cost_usd + EXCLUDED.cost_usd,
         steps = total.steps + 1,
         updated_at = now()`,
      [step.key, step.tenant, step.period, step.inputTokens, step.outputTokens, step.costUsd ?? null],
    );
    return (rowCount ?? 0) > 0;
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
