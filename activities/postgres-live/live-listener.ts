/**
 * The listening side of the PostgreSQL live channel: one `LISTEN` connection per instance, opened
 * by the first subscriber, listening on the channel of each turn someone here reads
 * (turn-channels.ts) and on the configured channel itself (where publishers from before per-turn
 * channels sent every turn's pieces), so the process receives only the turns its readers read. The
 * first reader of a turn adds `LISTEN` for its channel, the last one to leave `UNLISTEN`: one
 * round trip each, serialized on the connection; a piece published before the `LISTEN` took
 * effect is read from the durable stream. Each notification goes to the listeners of its
 * workflow id. When the connection drops, it reconnects with a back-off and listens again to
 * every turn read here; what was published meanwhile is read from the durable stream.
 */
import { decodeLivePiece, payloadWorkflowId } from './live-delta-payload.js';
import type { LiveDeltaPiece } from '../live-deltas.js';
import { Outage, type PostgresClient, type PostgresConnector } from './postgres-connection.js';
import { turnChannel } from './turn-channels.js';

/** `LISTEN`s or `UNLISTEN`s sent in one round trip at most (a reconnect with many readers). */
const STATEMENTS_PER_QUERY = 500;

/** What a listening connection has received (for measuring what each process is sent). */
export interface LiveReceived {
  notifications: number;
  /** The payloads' characters. */
  characters: number;
}

export class LiveListener {
  #closed = false;
  readonly #listeners = new Map<string, Set<(piece: LiveDeltaPiece) => void>>();
  #listening?: Promise<void>;
  #listener?: PostgresClient;
  #listened?: () => void;
  #wake?: () => void;
  readonly #outage: Outage;
  /** The turns' channels the current connection listens on. */
  #listenedOn = new Set<string>();
  /** The last `LISTEN`/`UNLISTEN` round trip queued on the connection. */
  #syncing: Promise<void> = Promise.resolve();
  readonly #received: LiveReceived = { notifications: 0, characters: 0 };

  constructor(
    private readonly connector: PostgresConnector,
    private readonly channel: string,
    warn: (message: string) => void,
  ) {
    this.#outage = new Outage((message) => warn(`cannot listen: ${message}`));
  }

  /** Calls `listener` with each piece received for `workflowId`; returns the unsubscribe. */
  subscribe(workflowId: string, listener: (piece: LiveDeltaPiece) => void): () => void {
    if (this.#closed) return () => {};
    let set = this.#listeners.get(workflowId);
    if (!set) this.#listeners.set(workflowId, (set = new Set()));
    set.add(listener);
    void this.ready();
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.#listeners.get(workflowId) === set) {
        this.#listeners.delete(workflowId);
        void this.#sync();
      }
    };
  }

  /**
   * Starts listening if nothing has yet; resolves once the `LISTEN` connection is up (now, or
   * when the database is back) and listens on the channel of every turn subscribed so far.
   */
  async ready(): Promise<void> {
    await this.#up();
    await this.#sync();
  }

  /** What this connection has received so far, for every turn, read here or not. */
  get received(): LiveReceived {
    return { ...this.#received };
  }

  #up(): Promise<void> {
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

  /** Workflows with a subscriber now. */
  get size(): number {
    return this.#listeners.size;
  }

  /** Ends the connection and the loop that keeps it. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#wake?.();
    this.#listened?.();
    const listener = this.#listener;
    this.#listener = undefined;
    await Promise.all([listener?.end().catch(() => {}), this.#listening]);
  }

  /** Keeps one `LISTEN` connection until `close`, reconnecting with a back-off. */
  async #listen(): Promise<void> {
    while (!this.#closed) {
      let client: PostgresClient | undefined;
      try {
        client = await this.connector.connect('turnpike live listener');
        const ended = new Promise<void>((resolve) => {
          client!.once('end', resolve);
          client!.once('error', resolve);
        });
        client.on('notification', ({ payload }) => {
          if (payload === undefined) return;
          this.#received.notifications++;
          this.#received.characters += payload.length;
          this.#dispatch(payload);
        });
        await client.query(`LISTEN "${this.channel}"`);
        if (this.#closed) break;
        this.#listenedOn = new Set();
        this.#listener = client;
        void this.#sync();
        this.#outage.recovered();
        const listened = this.#listened;
        this.#listened = undefined;
        listened?.();
        await ended;
        if (this.#listener === client) this.#listener = undefined;
        if (!this.#closed) this.#outage.failed('listening', new Error('the connection was closed'));
      } catch (error) {
        if (this.#closed) break;
        this.#outage.failed('listening', error);
      } finally {
        if (client && this.#listener !== client) await client.end().catch(() => {});
      }
      const wait = Math.max(0, this.#outage.retryAt - Date.now());
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, wait);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  /**
   * Brings the connection's channels in line with the turns read here: `LISTEN` for each new one,
   * `UNLISTEN` for each left. Serialized, so a quick subscribe and unsubscribe end as the last
   * one says; a failure leaves it to the reconnect, which listens to every turn again.
   */
  #sync(): Promise<void> {
    this.#syncing = this.#syncing.then(async () => {
      const client = this.#listener;
      if (!client || this.#closed) return;
      const wanted = new Set([...this.#listeners.keys()].map((workflowId) => turnChannel(this.channel, workflowId)));
      const statements = [
        ...[...wanted].filter((channel) => !this.#listenedOn.has(channel)).map((channel) => `LISTEN "${channel}"`),
        ...[...this.#listenedOn].filter((channel) => !wanted.has(channel)).map((channel) => `UNLISTEN "${channel}"`),
      ];
      try {
        for (let at = 0; at < statements.length; at += STATEMENTS_PER_QUERY) {
          await client.query(statements.slice(at, at + STATEMENTS_PER_QUERY).join('; '));
        }
        if (this.#listener === client) this.#listenedOn = wanted;
      } catch {
        // The connection failed: its loop reconnects and listens again.
      }
    });
    return this.#syncing;
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
