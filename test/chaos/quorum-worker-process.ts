/**
 * The chaos tests' worker process (worker-process.ts) with `refund_order`, a tool two people from
 * finance approve, never the requester. Each run of it appends a line to `refunds.log` in
 * CHAOS_RECORDS_DIR, so a test counts the refunds across worker processes.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { defineTool } from '../../activities/tools.js';
import { chaosTools } from './chaos-tools.js';
import { runChaosWorker } from './chaos-worker.js';

const refundOrder = defineTool({
  name: 'refund_order',
  description: 'Refunds an order; two people from finance decide, never the requester.',
  inputSchema: z.object({ order: z.string().min(1), amount: z.number().positive() }),
  approval: { quorum: 2, approverGroups: ['finance'], excludeRequester: true },
  async execute(input, { idempotencyKey }) {
    const directory = process.env.CHAOS_RECORDS_DIR!;
    mkdirSync(directory, { recursive: true });
    appendFileSync(path.join(directory, 'refunds.log'), `${JSON.stringify({ key: idempotencyKey, input, pid: process.pid })}\n`);
    return { refunded: input.amount };
  },
});

await runChaosWorker({
  tools: [...chaosTools, refundOrder],
});
