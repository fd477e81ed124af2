/**
 * The live channel over PostgreSQL `LISTEN/NOTIFY`, for an HTTP API or client in another process
 * than the workers (docs/streaming.md, "Channels"). Give one to `createWorker({ liveDeltas })`
 * in each worker and one to `new TurnpikeClient({ liveDeltas })` in each API process, all on the
 * same database and channel.
 *
 * Its two sides each keep a connection of their own: publishing (live-publisher.ts: pieces queued
 * and sent in order on each turn's own channel, never waiting, dropped while the database is
 * down) and listening (live-listener.ts: one `LISTEN` connection, on the channels of the turns
 * read in this process only, handing each notification to the readers of its turn). Either side reports an outage once and tries again after a back-off; readers read what
 * was lost from the durable stream.
 *
 * `pg` (node-postgres) is an optional peer of turnpike, loaded on first use.
 */
import { redactConnectionString } from '../../content/postgres-content-store.js';
import type { LiveDeltaChannel, LiveDeltaPiece } from '../live-deltas.js';
import { LiveListener, type LiveReceived } from './live-listener.js';
import { LivePublisher } from './live-publisher.js';
import { PostgresConnector, type PostgresConnectionSettings } from './postgres-connection.js';

export type { PostgresConnectionSettings } from './postgres-connection.js';
export type { LiveReceived } from './live-listener.js';

/** The notification channel pieces go on unless told otherwise. */
export const DEFAULT_LIVE_CHANNEL = 'turnpike_live';
/** The variable `liveDeltasFromEnvironment` reads: `postgresql://user:password@host:5432/db?channel=turnpike_live`. */
export const LIVE_POSTGRES_VARIABLE = 'TURNPIKE_LIVE_POSTGRES_URL';
/** An unquoted SQL identifier: what `LISTEN` takes. */
const CHANNEL_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

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

/** A live channel over PostgreSQL `LISTEN/NOTIFY`, for readers in other processes than the workers (see the file's comment). */
export class PostgresLiveDeltas implements LiveDeltaChannel {
  /** The configured channel: each turn's pieces go on a channel named from it and the turn (turn-channels.ts). */
  readonly channel: string;
  /** Where it is, without the password: `postgresql://user@db:5432/app (channel turnpike_live)`. */
  readonly description: string;
  /** Private fields (#): the connection settings, and so the password, never show in JSON.stringify or console.log of the channel. */
  readonly #publisher: LivePublisher;
  readonly #listener: LiveListener;

  constructor(options: PostgresLiveDeltasOptions) {
    const { connectionString } = options;
    if (connectionString === undefined && !options.connection) {
      throw new TypeError(`PostgresLiveDeltas: give connectionString or connection (liveDeltasFromEnvironment reads ${LIVE_POSTGRES_VARIABLE})`);
    }
    this.channel = options.channel ?? DEFAULT_LIVE_CHANNEL;
    if (!CHANNEL_NAME.test(this.channel)) {
      throw new TypeError(`PostgresLiveDeltas: channel must be an SQL identifier such as turnpike_live (got ${JSON.stringify(this.channel)})`);
    }
    const where = connectionString ? redactConnectionString(connectionString) : `${options.connection?.host ?? 'localhost'}:${options.connection?.port ?? 5432}`;
    this.description = `${where} (channel ${this.channel})`;
    const report = options.onWarning ?? ((message: string) => console.warn(`turnpike: ${message}`));
    const warn = (message: string) => report(`the live channel ${this.description} ${message}`);
    const connector = new PostgresConnector(connectionString, options.connection);
    this.#publisher = new LivePublisher(connector, this.channel, options.maxQueuedPieces ?? 10_000, warn);
    this.#listener = new LiveListener(connector, this.channel, warn);
  }

  /** Queues one piece (or its parts) for the publishing connection; never waits and never throws. */
  publish(workflowId: string, piece: LiveDeltaPiece): void {
    this.#publisher.publish(workflowId, piece);
  }

  /**
   * Calls `listener` with each piece this process's `LISTEN` connection receives for `workflowId`
   * (listening on its channel from the first subscriber to the last); returns the unsubscribe.
   */
  subscribe(workflowId: string, listener: (piece: LiveDeltaPiece) => void): () => void {
    return this.#listener.subscribe(workflowId, listener);
  }

  /**
   * Starts listening if nothing has yet; resolves once the `LISTEN` connection is up (now, or
   * when the database is back) and listens on the channel of every turn subscribed so far.
   * Subscribing does this too; an API process may call it at start, so that its first reader
   * does not wait for the connection.
   */
  ready(): Promise<void> {
    return this.#listener.ready();
  }

  /** What this process's `LISTEN` connection has received: notifications and their characters, of every turn. */
  get received(): LiveReceived {
    return this.#listener.received;
  }

  /** Workflows with a subscriber now (for tests). */
  get size(): number {
    return this.#listener.size;
  }

  /** Ends both connections; pieces still queued are dropped. The channel cannot be used afterwards. */
  async close(): Promise<void> {
    await Promise.all([this.#publisher.close(), this.#listener.close()]);
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
