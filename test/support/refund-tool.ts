/**
 * The four-eyes tool of the approval tests: `refund_order`, decided by a quorum of two from
 * finance, never by the requester. Each instance records its own runs, by idempotency key.
 */
import { z } from 'zod';
import { defineTool } from '../../activities/tools.js';

export function financeRefundTool() {
  const runs: Array<{ key: string; input: unknown }> = [];
  const tool = defineTool({
    name: 'refund_order',
    description: 'Refunds an order; two people from finance decide, never the requester.',
    inputSchema: z.object({ order: z.string().min(1), amount: z.number().positive() }),
    approval: { quorum: 2, approverGroups: ['finance'], excludeRequester: true },
    async execute(input, { idempotencyKey }) {
      runs.push({ key: idempotencyKey, input });
      return { refunded: input.amount };
    },
  });
  /** The runs of one turn's calls. */
  const runsOf = (turnId: string) => runs.filter((run) => run.key.startsWith(`${turnId}/`));
  return { tool, runsOf };
}
