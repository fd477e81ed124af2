/**
 * The PostgreSQL connections of the live channel (postgres-live-deltas.ts): how one is opened,
 * with what settings, and how an outage of the database is reported and backed off from.
 *
 * `pg` (node-postgres) is an optional peer of turnpike, loaded on first use.
 */
import type { ConnectionOptions } from 'node:tls';
import type { ClientConfig } from 'pg';
import { importOptional } from '../../peers/optional-packages.js';

/** Where PostgreSQL is, when not given as a connection string. */
export interface PostgresConnectionSettings {
  /** Default localhost. */
  host?: string;
  /** Default 5432. */
  port?: number;
  user?: string;
  password?: string;
  /** Default: the user's name. */
  database?: string;
  /** `true`, or Node's TLS options (a CA, a client certificate). */
  ssl?: boolean | ConnectionOptions;
}

type Pg = typeof import('pg');

/**
 * What the channel uses of a node-postgres `Client`, declared here so that turnpike's published
 * types do not need `pg` (an optional peer) installed.
 */
export interface PostgresClient {
  query(query: string | { text: string; values: unknown[] }): Promise<unknown>;
  on(event: 'notification', listener: (message: { channel: string; payload?: string }) => void): unknown;
  once(event: 'end' | 'error', listener: () => void): unknown;
  end(): Promise<void>;
}

const FIRST_RETRY_MS = 250;
const LAST_RETRY_MS = 30_000;

const retryDelay = (failures: number) => Math.min(LAST_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.min(failures, 10));

/** One side's state of an outage: reported once, tried again after a back-off. */
export class Outage {
  failures = 0;
  retryAt = 0;
  constructor(private readonly report: (message: string) => void) {}
  failed(what: string, error: unknown): void {
    this.retryAt = Date.now() + retryDelay(this.failures);
    if (this.failures++ > 0) return;
    try {
      this.report(`${what}: ${String((error as Error)?.message ?? error)}; readers fall back to the durable stream until it is back`);
    } catch {
      // A warning that fails must not stop the channel.
    }
  }
  recovered(): void {
    this.failures = 0;
    this.retryAt = 0;
  }
}

/**
 * Opens connections with one set of settings. The settings are a private field (#): the password
 * never shows in JSON.stringify or console.log of whatever holds them.
 */
export class PostgresConnector {
  readonly #config: ClientConfig;
  #pg?: Promise<Pg>;

  constructor(connectionString: string | undefined, connection: PostgresConnectionSettings | undefined) {
    // Keep-alive: a listening connection cut off without a reset is noticed; a query that hangs fails.
    this.#config = { ...connection, ...(connectionString ? { connectionString } : {}), keepAlive: true, connectionTimeoutMillis: 10_000, query_timeout: 10_000 };
  }

  /**
   * A connected client; one the server drops later ends (`end`) instead of crashing the process.
   * `applicationName` names it in `pg_stat_activity` (which side of the channel it is).
   */
  connect(applicationName?: string): Promise<PostgresClient> {
    this.#pg ??= importOptional('The PostgreSQL live channel', ['pg'], () => import('pg')).catch((error: unknown) => {
      this.#pg = undefined;
      throw error;
    });
    return this.#pg.then(async (pg) => {
      // A CommonJS module: Node's ESM loader gives its exports as the default export.
      const { Client: ClientClass } = (pg as unknown as { default?: Pg }).default ?? pg;
      const client = new ClientClass({ ...this.#config, ...(applicationName ? { application_name: applicationName } : {}) });
      client.on('error', () => {});
      try {
        await client.connect();
      } catch (error) {
        await client.end().catch(() => {});
        throw error;
      }
      return client;
    });
  }
}
