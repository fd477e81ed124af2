/**
 * The application's own workflow. It asks an agent turn to handle a refund request: the turn
 * runs as a child workflow, parks when the refund needs a person, and returns its typed result
 * here once decided. Then the workflow goes on with its own activity.
 */
import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import { executeAgentTurn, type ModelSettings } from 'turnpike/workflows';
import type * as activities from './activities.js';

const { notifyCustomer } = proxyActivities<typeof activities>({ startToCloseTimeout: '10s' });

export interface RefundRequest {
  orderId: string;
  request: string;
  model: ModelSettings;
}

export interface RefundOutcome {
  orderId: string;
  turnStatus: string;
  refunded: boolean;
  approvedBy?: string;
  answer: string;
}

/** Decisions reach the turn by its id, `<this workflow's id>/agent`. */
export function agentTurnId(orderWorkflowId: string): string {
  return `${orderWorkflowId}/agent`;
}

export async function refundOrder({ orderId, request, model }: RefundRequest): Promise<RefundOutcome> {
  const turn = await executeAgentTurn(
    {
      model,
      system: 'You are the order desk. Look orders up before refunding.',
      messages: [{ role: 'user', content: request }],
      tools: ['lookup_order', 'issue_refund'],
      approvalTimeout: '1h',
    },
    { workflowId: agentTurnId(workflowInfo().workflowId) },
  );
  const refund = turn.toolCalls.find((call) => call.toolName === 'issue_refund');
  const outcome: RefundOutcome = {
    orderId,
    turnStatus: turn.status,
    refunded: refund?.outcome === 'approved' && !refund.isError,
    ...(refund?.approval?.approver ? { approvedBy: refund.approval.approver } : {}),
    answer: turn.text,
  };
  await notifyCustomer({ orderId, text: outcome.refunded ? 'Your refund is on its way.' : 'We could not refund this order.' });
  return outcome;
}
