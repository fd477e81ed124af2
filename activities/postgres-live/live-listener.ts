/**
 * The listening side of the PostgreSQL live channel: one `LISTEN` connection per instance, opened
 * by the first subscriber, handing each notification to the listeners of its workflow id; one
 * for a turn nobody here reads is dropped before its JSON is parsed. When the connection drops,
 * it reconnects with a back-off and listens again; what was published meanwhile is read from the
 * durable stream.
 */
import { decodeLivePiece, payloadWorkflowId } from './live-delta-payload.js';
import type { LiveDeltaPiece } from '../live-deltas.js';
import { Outage, type PostgresClient, type PostgresConnector } from './postgres-connection.js';

export class LiveListener {
  #closed = false;
  readonly #listeners = new Map<string, Set<(piece: LiveDeltaPiece) => void>>();
  #listening?: Promise<void>;
  #listener?: PostgresClient;
  #listened?: () => void;
  #wake?: () => void;
  readonly #outage: Outage;

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
      if (set.size === 0 && this.#listeners.get(workflowId) === set) this.#listeners.delete(workflowId);
    };
  }

  /** Starts listening if nothing has yet; resolves once the `LISTEN` connection is up (now, or when the database is back). */
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
        client = await this.connector.connect();
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
