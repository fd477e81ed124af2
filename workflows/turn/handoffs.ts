/**
 * Handoffs in a turn: the model hands the conversation to another agent by calling its
 * `transfer_to_<agent>` tool (`handoff-tools.ts`). The turn settles that call itself, never as an
 * activity: its result is "Transferred to <agent>.", every other call of the step settles as
 * usual, and the turn then ends with `handoff: { to }` without calling the model again. The
 * conversation runs its next turn with that agent (`conversation-agents.ts`).
 *
 * Only the first handoff call of a step (in the model's call order) is followed; the others get
 * an error result. A turn whose conversation handed off too often in a row without a user
 * message is given `handoffsRefused`: each handoff call then gets that error result, and the
 * turn goes on.
 */
import * as wf from '@temporalio/workflow';
import { HANDOFF_TOOL_PREFIX, HANDOFFS_PATCH } from '../agents/handoff-tools.js';
import { errorSettlement, type Settlement } from '../calls/tool-results.js';
import { finish } from './turn-endings.js';
import type { TurnContext } from '../context/turn-context.js';
import type { AgentTurnResult, ToolCallPart } from '../types/index.js';

/** Whether the call is of one of the turn's handoff tools. */
export function isHandoffCall(turn: TurnContext, call: ToolCallPart): boolean {
  return turn.specs.get(call.toolName)?.kind === 'handoff';
}

/**
 * Settles a handoff call, synchronously: calls are settled in the model's call order up to
 * their first await, so the first handoff call of a step is the one followed.
 */
export function settleHandoff(turn: TurnContext, call: ToolCallPart): Settlement {
  if (!wf.patched(HANDOFFS_PATCH)) return errorSettlement('error', `Unknown tool "${call.toolName}".`);
  const to = call.toolName.slice(HANDOFF_TOOL_PREFIX.length);
  if (turn.input.handoffsRefused) return errorSettlement('error', turn.input.handoffsRefused);
  if (turn.handoff) {
    return errorSettlement('error', `Only one handoff per step is followed: the conversation goes to ${turn.handoff.to}, not to ${to}.`);
  }
  turn.handoff = { to };
  return { outcome: 'executed', output: `Transferred to ${to}.`, isError: false };
}

/**
 * Ends a turn whose step handed off: `completed`, or `cancelled` when a newer user message
 * superseded it meanwhile (the conversation then runs that message, with the new agent).
 */
export async function finishHandoff(turn: TurnContext, text: string): Promise<AgentTurnResult> {
  const to = turn.handoff!.to;
  const result = await finish(turn, turn.superseded ? 'cancelled' : 'completed', text);
  return { ...result, handoff: { to } };
}
