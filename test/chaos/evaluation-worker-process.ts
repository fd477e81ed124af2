/**
 * The worker process of the evaluation chaos test (evaluation-crash.test.ts): `runWorker` with
 * the evaluation worker beside it (`evaluation: { safeTools: ['read_stock'] }`), and tools that
 * record every run in CHAOS_RECORDS_DIR, so the test counts effects across worker processes:
 * `ship_parcel` and `refund_order` (approval above 100) append a line to `effects.log`,
 * `read_stock` (safe in evaluation) to `reads.log`; `pick_colour` is a client tool. Env as for
 * worker-process.ts.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { defineClientTool, defineTool } from '../../activities/tools.js';
import { runChaosWorker } from './chaos-worker.js';

/** Appends what ran, with its idempotency key, to `file` in CHAOS_RECORDS_DIR. */
function recordRun(file: string, toolName: string, input: unknown, idempotencyKey: string): void {
  const directory = process.env.CHAOS_RECORDS_DIR!;
  mkdirSync(directory, { recursive: true });
  appendFileSync(path.join(directory, file), `${JSON.stringify({ toolName, input, key: idempotencyKey, pid: process.pid })}\n`);
}

/** A lost attempt is retried after 3 s rather than a minute. */
const activityOptions = { startToCloseTimeout: '3s', retry: { initialInterval: '200ms', maximumAttempts: 20 } };

const shipParcel = defineTool({
  name: 'ship_parcel',
  description: 'Ships a parcel for an order.',
  inputSchema: z.object({ order: z.string(), qty: z.number().int().positive() }),
  activityOptions,
  async execute(input, { idempotencyKey }) {
    recordRun('effects.log', 'ship_parcel', input, idempotencyKey);
    return { shipped: input.order, qty: input.qty };
  },
});

const refundOrder = defineTool({
  name: 'refund_order',
  description: 'Refunds an order; a person approves more than 100.',
  inputSchema: z.object({ order: z.string(), amount: z.number().positive() }),
  approval: ({ amount }) => (amount <= 100 ? 'approved' : { decision: 'user-approval', reason: 'over 100' }),
  activityOptions,
  async execute(input, { idempotencyKey }) {
    recordRun('effects.log', 'refund_order', input, idempotencyKey);
    return { refunded: input.amount };
  },
});

const readStock = defineTool({
  name: 'read_stock',
  description: 'Reads the stock of a SKU.',
  inputSchema: z.object({ sku: z.string() }),
  activityOptions,
  async execute(input, { idempotencyKey }) {
    recordRun('reads.log', 'read_stock', input, idempotencyKey);
    return { sku: input.sku, inStock: 3 };
  },
});

const pickColour = defineClientTool({
  name: 'pick_colour',
  description: 'Asks the user to pick a colour.',
  inputSchema: z.object({ options: z.array(z.string()) }),
});

await runChaosWorker({
  tools: [shipParcel, refundOrder, readStock, pickColour],
  evaluation: { safeTools: ['read_stock'] },
});
