/**
 * Appends events to a workflow's event stream (workflows/stream/event-stream.ts) from outside it: one
 * signal per batch, `{ items, publisher_id, sequence }`. The workflow skips a batch whose sequence
 * it has seen from this publisher, so a batch is sent again, with the same sequence, until it is
 * in, or until `maxRetryMs` has passed: then it and every later batch are dropped (a stream
 * never skips a batch and goes on), and `send` rejects. Batches go out one at a time, in order.
 */
import { randomBytes } from 'node:crypto';
import { defaultPayloadConverter } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import { PUBLISH_SIGNAL, type PublishInput } from '../workflows/stream/stream-guard.js';
import { encodePayloadWire } from '../workflows/stream/stream-wire.js';

export class StreamPublisher {
  private readonly publisherId = randomBytes(8).toString('hex');
  private sequence = 0;
  /** The last batch's delivery: once one fails, every later one fails with it. */
  private chain: Promise<void> = Promise.resolve();
  /** Signals sent so far (retries included). */
  signals = 0;

  constructor(
    private readonly client: Client,
    private readonly workflowId: string,
    private readonly topic: string,
    private readonly maxRetryMs = 30_000,
  ) {}

  /** Queues a batch; the promise settles when it is in the workflow's history (or given up on). */
  send(events: readonly unknown[]): Promise<void> {
    if (events.length === 0) return this.chain;
    const input: PublishInput = {
      items: events.map((event) => ({ topic: this.topic, data: encodePayloadWire(defaultPayloadConverter.toPayload(event)) })),
      publisher_id: this.publisherId,
      sequence: ++this.sequence,
    };
    const sent = this.chain.then(() => this.deliver(input));
    this.chain = sent;
    return sent;
  }

  private async deliver(input: PublishInput): Promise<void> {
    const handle = this.client.workflow.getHandle(this.workflowId);
    const giveUpAt = Date.now() + this.maxRetryMs;
    for (let wait = 100; ; wait = Math.min(wait * 2, 2_000)) {
      try {
        this.signals++;
        await handle.signal(PUBLISH_SIGNAL, input);
        return;
      } catch (error) {
        if (Date.now() + wait > giveUpAt || (error as { name?: string }).name === 'WorkflowNotFoundError') throw error;
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  }
}
