/**
 * The demo tool set that `npm start` runs with the `scripted` demo model: one server tool,
 * one approval-gated tool and one client tool, around a shop's refunds.
 */
import { z } from 'zod';
import { defineClientTool, defineTool } from '../index.js';

const ORDERS: Record<string, { item: string; total: number; status: string }> = {
  '1001': { item: 'Espresso machine', total: 499, status: 'delivered' },
  '1002': { item: 'Coffee grinder', total: 129, status: 'delivered' },
  '1003': { item: 'Milk jug', total: 19, status: 'shipped' },
};

/** Refunds up to this amount are approved automatically; larger ones wait for a person. */
export const AUTOMATIC_REFUND_LIMIT = 100;
/** Refunds above this amount are denied outright. */
export const MAXIMUM_REFUND = 5_000;

export const lookupOrder = defineTool({
  name: 'lookup_order',
  description: 'Look up an order by its id: item, total and delivery status.',
  inputSchema: z.object({ orderId: z.string().min(1).describe('The order id, e.g. "1001"') }),
  async execute({ orderId }) {
    const order = ORDERS[orderId];
    return order ? { orderId, found: true, ...order } : { orderId, found: false };
  },
});

export const issueRefund = defineTool({
  name: 'issue_refund',
  description: `Refund an amount in USD on an order. Refunds above $${AUTOMATIC_REFUND_LIMIT} need a person's approval.`,
  inputSchema: z.object({
    orderId: z.string().min(1),
    amount: z.number().positive().describe('Amount in USD'),
  }),
  approval: ({ amount }) => {
    if (amount <= AUTOMATIC_REFUND_LIMIT) return { decision: 'approved', reason: `within the automatic limit of $${AUTOMATIC_REFUND_LIMIT}` };
    if (amount > MAXIMUM_REFUND) return { decision: 'denied', reason: `above the maximum refund of $${MAXIMUM_REFUND}` };
    return { decision: 'user-approval', reason: `refunds above $${AUTOMATIC_REFUND_LIMIT} need a person` };
  },
  async execute({ orderId, amount }, { idempotencyKey }) {
    // A real payment API would take the idempotency key, so a retried call refunds once.
    return { refunded: true, orderId, amount, reference: `rf-${idempotencyKey}` };
  },
});

export const askUser = defineClientTool({
  name: 'ask_user',
  description: 'Ask the user a question and wait for the answer.',
  inputSchema: z.object({ question: z.string().min(1) }),
  outputSchema: z.object({ answer: z.string() }),
});

export const demoTools = [lookupOrder, issueRefund, askUser];
