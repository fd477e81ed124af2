/**
 * An agent turn inside a user's own workflow: the turn runs as a child `agentTurn`, with its
 * own workflow id, history and search attributes, so approvals and client results reach it by
 * that id exactly as they reach a turn started by a client, and the parent gets its typed result.
 *
 *   import { executeAgentTurn } from 'turnpike/workflows';
 *
 *   export async function refundOrder(order: Order): Promise<string> {
 *     const turn = await executeAgentTurn(
 *       { model: { provider: 'openai', model: 'gpt-4.1-mini' }, messages: [{ role: 'user', content: `refund order ${order.id}` }] },
 *       { workflowId: `${order.id}/refund-turn` },
 *     );
 *     return turn.status === 'completed' ? turn.text : 'needs a person';
 *   }
 *
 * Why a child workflow rather than the turn loop inlined into the parent: update and query
 * handlers are registered per workflow, so two turns in one workflow would share one
 * `approveToolCall` handler and one `turnState`; the parent's history would grow with every
 * model step of every turn; and operators could no longer find a parked turn by
 * `AgentTurnStatus` (the parent's search attributes are the user's). A child costs one extra
 * workflow and keeps every guarantee of a standalone turn.
 */
import * as wf from '@temporalio/workflow';
import { agentTurn } from './agent-turn.js';
import { childPlacement } from '../context/tenant-placement.js';
import type { AgentTurnInput, AgentTurnResult } from '../types/index.js';

/** Child workflow options for a turn; `workflowId` defaults to `<parent id>/turn-<uuid>`. */
export type AgentTurnChildOptions = Omit<wf.ChildWorkflowOptions, 'args' | 'typeInfo'>;

function childOptions(input: AgentTurnInput, options: AgentTurnChildOptions): AgentTurnChildOptions & { args: [AgentTurnInput] } {
  return {
    // wf.uuid4() is seeded from the workflow's history: the same id on every replay.
    workflowId: `${wf.workflowInfo().workflowId}/turn-${wf.uuid4()}`,
    // The parent's tenant and priority, when it has them (context/tenant-placement.ts).
    ...childPlacement(),
    ...options,
    // The parent awaits the child's result; the conversation's turnFinished signal is not for it.
    args: [{ ...input, notifyParent: false }],
  };
}

/** Starts a turn as a child workflow and returns its handle (its `workflowId` is the turn id decisions go to). */
export async function startAgentTurn(input: AgentTurnInput, options: AgentTurnChildOptions = {}): Promise<wf.ChildWorkflowHandle<typeof agentTurn>> {
  return wf.startChild(agentTurn, childOptions(input, options));
}

/** Runs a turn as a child workflow and returns its result once it ends (parks included). */
export async function executeAgentTurn(input: AgentTurnInput, options: AgentTurnChildOptions = {}): Promise<AgentTurnResult> {
  return wf.executeChild(agentTurn, childOptions(input, options));
}
