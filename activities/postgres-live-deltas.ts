/**
 * The live channel over PostgreSQL `LISTEN/NOTIFY`, for an HTTP API or client in another process
 * than the workers (docs/streaming.md, "Channels"). Give one to `createWorker({ liveDeltas })`
 * in each worker and one to `new TurnpikeClient({ liveDeltas })` in each API process, all on the
 * same database and channel.
 *
 * Publishing: every piece becomes one notification (`SELECT pg_notify($1, payload)`, a few pieces
 * a round trip), or several when it is 8,000 bytes or more (live-delta-payload.ts), sent in order
 * over one connection of its own, so a reader gets a step's pieces in the order they were
 * streamed. `publish` only queues: it never waits for the database and never throws. While the
 * database is unreachable, pieces are dropped (readers read them from the durable stream), the
 * outage is reported once, and the connection is tried again after a back-off.
 *
 * Subscribing: one `LISTEN` connection per instance, opened by the first subscriber, handing each
 * notification to the listeners of its workflow id; one for a turn nobody here reads is dropped
 * before its JSON is parsed. When the connection drops, it reconnects with a back-off and listens
 * again; what was published meanwhile is read from the durable stream.
 *
 * `pg` (node-postgres) is an optional peer of turnpike, loaded on first use.
 */
import type { ConnectionOptions } from 'node:tls';
import type { Client, ClientConfig } from 'pg';
import { redactConnectionString } from '../content/postgres-content-store.js';
import { importOptional } from '../peers/optional-packages.js';
import { decodeLivePiece, encodeLivePiece, payloadWorkflowId } from './live-delta-payload.js';
import type { LiveDeltaChannel, LiveDeltaPiece } from './live-deltas.js';

/** The notification channel pieces go on unless told otherwise. */
export const DEFAULT_LIVE_CHANNEL = 'turnpike_live';
/** The variable `liveDeltasFromEnvironment` reads: `postgresql://user:password@host:5432/db?channel=turnpike_live`. */
export const LIVE_POSTGRES_VARIABLE = 'TURNPIKE_LIVE_POSTGRES_URL';
/** An unquoted SQL identifier: what `LISTEN` takes. */
const CHANNEL_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
/** Pieces sent in one round trip at most. */
const BATCH = 200;
const FIRST_RETRY_MS = 250;
const LAST_RETRY_MS = 30_000;

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

/** Where the channel is and how it behaves; `connectionString` or `connection` is required. */
export interface PostgresLiveDeltasOptions {
  /** `postgresql://user:password@host:port/database`, as node-postgres takes it. */
  connectionString?: string;
  /** Or the connection's settings, as node-postgres takes them. */
  connection?: PostgresConnectionSettings;
  /** The notification channel, an SQL identifier. Default `turnpike_live`. */
  channel?: string;
  /** Pieces waiting to be sent at most; more are dropped. Default 10,000. */
  maxQueuedPieces?: number;
  /** Where an outage of the database is reported, once per outage. Default `console.warn`. */
  onWarning?: (message: string) => void;
}

type Pg = typeof import('pg');

const retryDelay = (failures: number) => Math.min(LAST_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.min(failures, 10));

/** One side's state of an outage: reported once, tried again after a back-off. */
class Outage {
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

/** A live channel over PostgreSQL `LISTEN/NOTIFY`, for readers in other processes than the workers (see the file's comment). */
export class PostgresLiveDeltas implements LiveDeltaChannel {
  /** The notification channel. */
  readonly channel: string;
  /** Where it is, without the password: `postgresql://user@db:5432/app (channel turnpike_live)`. */
  readonly description: string;
  /** Private fields (#): the password never shows in JSON.stringify or console.log of the channel. */
  readonly #config: ClientConfig;
  readonly #maxQueued: number;
  #closed = false;
  #pg?: Promise<Pg>;
  // Publishing.
  #queue: string[] = [];
  #sending = false;
  #sender?: Client;
  readonly #sendOutage: Outage;
  // Listening.
  readonly #listeners = new Map<string, Set<(piece: LiveDeltaPiece) => void>>();
  #listening?: Promise<void>;
  #listener?: Client;
  #listened?: () => void;
  #wake?: () => void;
  readonly #listenOutage: Outage;

  constructor(options: PostgresLiveDeltasOptions) {
    const { connectionString } = options;
    if (connectionString === undefined && !options.connection) {
      throw new TypeError(`PostgresLiveDeltas: give connectionString or connection (liveDeltasFromEnvironment reads ${LIVE_POSTGRES_VARIABLE})`);
    }
    this.channel = options.channel ?? DEFAULT_LIVE_CHANNEL;
    if (!CHANNEL_NAME.test(this.channel)) {
      throw new TypeError(`PostgresLiveDeltas: channel must be an SQL identifier such as turnpike_live (got ${JSON.stringify(this.channel)})`);
    }
    this.#maxQueued = options.maxQueuedPieces ?? 10_000;
    // Keep-alive: a listening connection cut off without a reset is noticed; a query that hangs fails.
    this.#config = { ...options.connection, ...(connectionString ? { connectionString } : {}), keepAlive: true, connectionTimeoutMillis: 10_000, query_timeout: 10_000 };
    const where = connectionString ? redactConnectionString(connectionString) : `${options.connection?.host ?? 'localhost'}:${options.connection?.port ?? 5432}`;
    this.description = `${where} (channel ${this.channel})`;
    const warn = options.onWarning ?? ((message: string) => console.warn(`turnpike: ${message}`));
    this.#sendOutage = new Outage((message) => warn(`the live channel ${this.description} cannot publish: ${message}`));
    this.#listenOutage = new Outage((message) => warn(`the live channel ${this.description} cannot listen: ${message}`));
  }

  /** Queues one piece (or its parts) for the publishing connection; never waits and never throws. */
  publish(workflowId: string, piece: LiveDeltaPiece): void {
    try {
      if (this.#closed || Date.now() < this.#sendOutage.retryAt) return;
      const payloads = encodeLivePiece(workflowId, piece);
      if (this.#queue.length + payloads.length > this.#maxQueued) return;
      this.#queue.push(...payloads);
      if (!this.#sending) void this.#send();
    } catch {
      // Never into the model step: a piece lost is read from the durable stream.
    }
  }

  /** Calls `listener` with each piece this process's `LISTEN` connection receives for `workflowId`; returns the unsubscribe. */
  subscribe(workflowId: string, listener: (piece: LiveDeltaPiece) => void): () => void {
    if (this.#closed) return () => {};
    let set = this.#listeners.get(workflowId);
    if (!set) this.#listeners.set(workflowId, (set = new Set()));
    set.add(listener);
    void this.ready();
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.#listeners.get(workflowId) === set) this.#listeners.delete(workflowId);
    };
  }

  /**
   * Starts listening if nothing has yet; resolves once the `LISTEN` connection is up (now, or
   * when the database is back). Subscribing does this too; an API process may call it at start so
   * its first reader misses no piece.
   */
  ready(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    if (this.#listener) return Promise.resolve();
    const up = new Promise<void>((resolve) => {
      const before = this.#listened;
      this.#listened = () => {
        before?.();
        resolve();
      };
    });
    this.#listening ??= this.#listen();
    return up;
  }

  /** Workflows with a subscriber now (for tests). */
  get size(): number {
    return this.#listeners.size;
  }

  /** Ends both connections; pieces still queued are dropped. The channel cannot be used afterwards. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#queue = [];
    this.#wake?.();
    this.#listened?.();
    const ending = [this.#sender, this.#listener].map((client) => client?.end().catch(() => {}));
    this.#sender = this.#listener = undefined;
    await Promise.all([...ending, this.#listening]);
  }

  #client(): Promise<Client> {
    this.#pg ??= importOptional('The PostgreSQL live channel', ['pg'], () => import('pg')).catch((error: unknown) => {
      this.#pg = undefined;
      throw error;
    });
    return this.#pg.then(async (pg) => {
      // A CommonJS module: Node's ESM loader gives its exports as the default export.
      const { Client: ClientClass } = (pg as unknown as { default?: Pg }).default ?? pg;
      const client = new ClientClass(this.#config);
      // A connection the server drops must not crash the process: its user notices (`end`).
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

  /** Sends what is queued, in order, a batch per round trip, over the one publishing connection. */
  async #send(): Promise<void> {
    this.#sending = true;
    try {
      while (this.#queue.length > 0 && !this.#closed) {
        if (!this.#sender) {
          const sender = await this.#client();
          if (this.#closed) {
            await sender.end().catch(() => {});
            return;
          }
          sender.once('end', () => {
            if (this.#sender === sender) this.#sender = undefined;
          });
          this.#sender = sender;
        }
        const batch = this.#queue.splice(0, BATCH);
        // In array order: the subquery's order is the order pg_notify is called, and so delivered.
        await this.#sender.query({
          text: 'SELECT count(pg_notify($1, payload)) FROM (SELECT payload FROM unnest($2::text[]) WITH ORDINALITY AS p(payload, n) ORDER BY n) ordered',
          values: [this.channel, batch],
        });
        this.#sendOutage.recovered();
      }
    } catch (error) {
      // Down, or a refusal: what is queued goes too, so a reader is never shown pieces after a gap.
      this.#queue = [];
      this.#sendOutage.failed('sending', error);
      const sender = this.#sender;
      this.#sender = undefined;
      await sender?.end().catch(() => {});
    } finally {
      this.#sending = false;
    }
  }

  /** Keeps one `LISTEN` connection until `close`, reconnecting with a back-off. */
  async #listen(): Promise<void> {
    while (!this.#closed) {
      let client: Client | undefined;
      try {
        client = await this.#client();
        const ended = new Promise<void>((resolve) => {
          client!.once('end', resolve);
          client!.once('error', resolve);
        });
        client.on('notification', ({ channel, payload }) => {
          if (channel === this.channel && payload !== undefined) this.#dispatch(payload);
        });
        await client.query(`LISTEN "${this.channel}"`);
        if (this.#closed) break;
        this.#listener = client;
        this.#listenOutage.recovered();
        const listened = this.#listened;
        this.#listened = undefined;
        listened?.();
        await ended;
        if (this.#listener === client) this.#listener = undefined;
        if (!this.#closed) this.#listenOutage.failed('listening', new Error('the connection was closed'));
      } catch (error) {
        if (this.#closed) break;
        this.#listenOutage.failed('listening', error);
      } finally {
        if (client && this.#listener !== client) await client.end().catch(() => {});
      }
      const wait = Math.max(0, this.#listenOutage.retryAt - Date.now());
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, wait);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  #dispatch(payload: string): void {
    const workflowId = payloadWorkflowId(payload);
    const listeners = workflowId === undefined ? undefined : this.#listeners.get(workflowId);
    if (!listeners) return;
    const piece = decodeLivePiece(payload, workflowId!);
    if (!piece) return;
    for (const listener of [...listeners]) {
      try {
        listener(piece);
      } catch {
        // A reader's failure is the reader's.
      }
    }
  }
}

/** The channel `TURNPIKE_LIVE_POSTGRES_URL` names (`?channel=` picks the channel), or undefined when it is unset. */
export function liveDeltasFromEnvironment(environment: NodeJS.ProcessEnv = process.env): PostgresLiveDeltas | undefined {
  const url = environment[LIVE_POSTGRES_VARIABLE]?.trim();
  if (!url) return undefined;
  if (!URL.canParse(url)) throw new TypeError(`${LIVE_POSTGRES_VARIABLE}: ${JSON.stringify(redactConnectionString(url))} is not a postgresql:// URL`);
  const parsed = new URL(url);
  const channel = parsed.searchParams.get('channel') ?? undefined;
  parsed.searchParams.delete('channel');
  return new PostgresLiveDeltas({ connectionString: parsed.toString(), ...(channel ? { channel } : {}) });
}
