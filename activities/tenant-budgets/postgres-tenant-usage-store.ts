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
import type { Pool } from 'pg';
import { LazyPostgresPool } from '../../peers/postgres-pool.js';
import { checkedPostgresOptions, quotedTable, type PostgresPoolOptions } from '../../peers/postgres-options.js';
import { redactConnectionString } from '../../content/postgres-content-store.js';
import type { TenantSpend } from '../../workflows/types/index.js';
import { NO_TENANT_SPEND, type TenantUsageRecord, type TenantUsageStore } from './tenant-usage-store.js';

export const DEFAULT_TENANT_USAGE_TABLE = 'turnpike_tenant_usage';

export interface PostgresTenantUsageStoreOptions extends PostgresPoolOptions {
  /** The totals' table, optionally `schema.table`; the steps' is the same name with `_steps`. Created when missing. Default `turnpike_tenant_usage`. */
  table?: string;
}

export class PostgresTenantUsageStore implements TenantUsageStore {
  readonly description: string;
  readonly table: string;
  private readonly totals: string;
  private readonly steps: string;
  readonly #pool: LazyPostgresPool;

  constructor(options: PostgresTenantUsageStoreOptions) {
    const { table, quoted } = checkedPostgresOptions('PostgresTenantUsageStore', options, DEFAULT_TENANT_USAGE_TABLE);
    this.table = table;
    this.totals = quoted;
    this.steps = quotedTable(`${table}_steps`);
    this.description = `${redactConnectionString(options.connectionString)} (table ${table})`;
    this.#pool = new LazyPostgresPool('The PostgreSQL tenant usage store', options, table, async (client) => {
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${this.totals} (tenant text NOT NULL, period text NOT NULL, input_tokens bigint NOT NULL DEFAULT 0, output_tokens bigint NOT NULL DEFAULT 0, cost_usd numeric NOT NULL DEFAULT 0, steps bigint NOT NULL DEFAULT 0, updated_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (tenant, period))`,
      );
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${this.steps} (step text PRIMARY KEY, tenant text NOT NULL, period text NOT NULL, input_tokens bigint NOT NULL, output_tokens bigint NOT NULL, cost_usd numeric, recorded_at timestamptz NOT NULL DEFAULT now())`,
      );
    });
  }

  private pool(): Promise<Pool> {
    return this.#pool.get();
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
    await this.#pool.close();
  }
}
