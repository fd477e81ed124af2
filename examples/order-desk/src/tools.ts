/**
 * The order desk's tools: defined with `turnpike`, run by turnpike's activities on this
 * application's worker. The input types come from the zod schemas.
 */
import { defineClientTool, defineTool } from 'turnpike';
import { z } from 'zod';

const ORDERS: Record<string, { item: string; total: number }> = {
  '1001': { item: 'Espresso machine', total: 499 },
  '1002': { item: 'Coffee grinder', total: 129 },
};

/** Every refund this process made: a real payment API would be called with the idempotency key. */
export const refundsMade: Array<{ orderId: string; amount: number; idempotencyKey: string }> = [];

export const lookupOrder = defineTool({
  name: 'lookup_order',
  description: 'Look up an order by id: item and total.',
  inputSchema: z.object({ orderId: z.string().min(1) }),
  execute: async ({ orderId }) => ({ orderId, ...(ORDERS[orderId] ?? { found: false }) }),
});

export const issueRefund = defineTool({
  name: 'issue_refund',
  description: 'Refund an amount in USD on an order. Refunds above $100 wait for a person.',
  inputSchema: z.object({ orderId: z.string().min(1), amount: z.number().positive() }),
  approval: ({ amount }) => (amount <= 100 ? 'approved' : { decision: 'user-approval', reason: 'refunds above $100 need a lead' }),
  approvers: ['lead@orders.example'],
  execute: async ({ orderId, amount }, { idempotencyKey }) => {
    if (!refundsMade.some((refund) => refund.idempotencyKey === idempotencyKey)) refundsMade.push({ orderId, amount, idempotencyKey });
    return { refunded: true, orderId, amount };
  },
});

/** Answered by the customer's browser, not the worker: the turn parks until it submits the result. */
export const confirmAddress = defineClientTool({
  name: 'confirm_address',
  description: "Ask the customer to confirm the order's delivery address.",
  inputSchema: z.object({ orderId: z.string().min(1) }),
  outputSchema: z.object({ confirmed: z.boolean(), address: z.string() }),
});

export const orderDeskTools = [lookupOrder, issueRefund, confirmAddress];
