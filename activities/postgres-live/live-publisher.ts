/**
 * The publishing side of the PostgreSQL live channel: every piece becomes one notification on
 * its turn's channel (turn-channels.ts; `pg_notify(channel, payload)`, a few pieces a round
 * trip), or several when it is 8,000 bytes or more (live-delta-payload.ts), sent in order over
 * one connection of its own, so a reader gets a step's pieces in the order they were streamed. `publish` only queues: it never waits for the
 * database and never throws. While the database is unreachable, pieces are dropped (readers read
 * them from the durable stream), the outage is reported once, and the connection is tried again
 * after a back-off.
 */
import { encodeLivePiece } from './live-delta-payload.js';
import type { LiveDeltaPiece } from '../live-deltas.js';
import { Outage, type PostgresClient, type PostgresConnector } from './postgres-connection.js';
import { turnChannel } from './turn-channels.js';

/** Pieces sent in one round trip at most. */
const BATCH = 200;

export class LivePublisher {
  #closed = false;
  /** Notifications waiting to be sent, in order: each one's channel and payload. */
  #queue: Array<{ channel: string; payload: string }> = [];
  #sending = false;
  #sender?: PostgresClient;
  readonly #outage: Outage;

  constructor(
    private readonly connector: PostgresConnector,
    private readonly channel: string,
    private readonly maxQueued: number,
    warn: (message: string) => void,
  ) {
    this.#outage = new Outage((message) => warn(`cannot publish: ${message}`));
  }

  /** Queues one piece (or its parts); never waits and never throws. */
  publish(workflowId: string, piece: LiveDeltaPiece): void {
    try {
      if (this.#closed || Date.now() < this.#outage.retryAt) return;
      const payloads = encodeLivePiece(workflowId, piece);
      if (this.#queue.length + payloads.length > this.maxQueued) return;
      const channel = turnChannel(this.channel, workflowId);
      for (const payload of payloads) this.#queue.push({ channel, payload });
      if (!this.#sending) void this.#send();
    } catch {
      // Never into the model step: a piece lost is read from the durable stream.
    }
  }

  /** Ends the connection; pieces still queued are dropped. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#queue = [];
    const sender = this.#sender;
    this.#sender = undefined;
    await sender?.end().catch(() => {});
  }

  /** Sends what is queued, in order, a batch per round trip, over the one publishing connection. */
  async #send(): Promise<void> {
    this.#sending = true;
    try {
      while (this.#queue.length > 0 && !this.#closed) {
        if (!this.#sender) {
          const sender = await this.connector.connect('turnpike live publisher');
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
          text: 'SELECT count(pg_notify(channel, payload)) FROM (SELECT channel, payload FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS p(channel, payload, n) ORDER BY n) ordered',
          values: [batch.map((item) => item.channel), batch.map((item) => item.payload)],
        });
        this.#outage.recovered();
      }
    } catch (error) {
      // Down, or a refusal: what is queued goes too, so a reader is never shown pieces after a gap.
      this.#queue = [];
      this.#outage.failed('sending', error);
      const sender = this.#sender;
      this.#sender = undefined;
      await sender?.end().catch(() => {});
    } finally {
      this.#sending = false;
    }
  }
}
