/**
 * What a `useChat` client sends back on its assistant message to continue a parked turn: tool
 * approval responses (`addToolApprovalResponse` sets the tool part to `approval-responded`), and
 * budget decisions (the app sets the `data-budget` part to `responded`, with `response`, and calls
 * `sendMessage()`; docs/streaming.md).
 */
import { z } from 'zod';
import type { BudgetApprovalInput, TurnBudget } from '../workflows/types/index.js';

export interface ApprovalResponsePart {
  type: string;
  toolCallId: string;
  state: 'approval-responded';
  input: unknown;
  approval: { id: string; approved: boolean; reason?: string };
}

export function isApprovalResponse(part: { type: string }): part is ApprovalResponsePart {
  const candidate = part as Partial<ApprovalResponsePart>;
  return (part.type.startsWith('tool-') || part.type === 'dynamic-tool') && candidate.state === 'approval-responded' && typeof candidate.approval?.id === 'string' && typeof candidate.approval.approved === 'boolean';
}

/** A budget decision: extend (by `extendBy`, else the requested extension) or stop. */
export interface BudgetResponse {
  approvalId: string;
  /** The request's input as the client was shown it; the turn checks its hash. */
  input: BudgetApprovalInput;
  approved: boolean;
  extendBy?: TurnBudget;
  reason?: string;
}

const budgetResponsePart = z.looseObject({
  type: z.literal('data-budget'),
  data: z.looseObject({
    state: z.literal('responded'),
    approvalId: z.string().min(1).max(200),
    input: z.looseObject({}),
    response: z.strictObject({
      approved: z.boolean(),
      extendBy: z.record(z.string(), z.number()).optional(),
      reason: z.string().max(4_000).optional(),
    }),
  }),
});

/**
 * The budget decisions of the message's `data-budget` parts in state `responded`. A part in that
 * state that is not a decision is an error naming what is wrong, not a part skipped.
 */
export function budgetResponses(parts: Array<{ type: string }>): BudgetResponse[] | { invalid: string } {
  const responses: BudgetResponse[] = [];
  for (const part of parts) {
    if (part.type !== 'data-budget' || (part as { data?: { state?: unknown } }).data?.state !== 'responded') continue;
    const parsed = budgetResponsePart.safeParse(part);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return { invalid: `A responded data-budget part is not a budget decision: ${issue.path.join('.')}: ${issue.message}` };
    }
    const { approvalId, input, response } = parsed.data.data;
    responses.push({ approvalId, input: input as unknown as BudgetApprovalInput, ...response });
  }
  return responses;
}
