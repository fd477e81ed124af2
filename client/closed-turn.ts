/**
 * A decision or a result that reaches a turn as it closes, or after it closed, is answered as the
 * running turn would have answered it, never with Temporal's words.
 *
 * A second decision sent at once after the first (a double click) can reach the server while the
 * turn's last workflow task runs: Temporal then aborts the update ("workflow update was aborted by
 * closing workflow"), and one sent a little later finds the turn completed. Either comes back
 * from `rejections` as `TurnAlreadyEnded`; here the closed turn says what happened to the call:
 * an approval it decided is `ApprovalAlreadyDecided` (or expired, cancelled, superseded, as its
 * decision record says), and a tool call it settled is `ToolCallAlreadySettled`. A turn whose
 * record cannot be read (it failed, or no worker answers its query) stays `TurnAlreadyEnded`.
 */
import { randomUUID } from 'node:crypto';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { turnStateQuery } from '../workflows/messages/definitions.js';
import type { RejectionType } from '../workflows/messages/rejection-types.js';
import type { agentTurn } from '../workflows/registered-workflows.js';
import type { DecisionRecord } from '../workflows/types/index.js';
import { TurnpikeRejectedError } from './errors.js';
import { rejections } from './rejections.js';
import { waitOutTransient } from './transient-wait.js';

type Turn = WorkflowHandle<typeof agentTurn>;

/** What a message to a turn is about: an approval (a decision, vote or delegation) or a tool call (a result or an answer). */
export type TurnMessageTarget = { approvalId: string } | { toolCallId: string };

/** The rejection an approval's decision record stands for, as the turn's validator gives it. */
const SETTLED_APPROVAL: Record<DecisionRecord['outcome'], [RejectionType, (approvalId: string) => string]> = {
  approved: ['ApprovalAlreadyDecided', (id) => `Approval ${id} was already decided`],
  denied: ['ApprovalAlreadyDecided', (id) => `Approval ${id} was already decided`],
  expired: ['ApprovalExpired', (id) => `Approval ${id} expired before this decision arrived`],
  cancelled: ['ApprovalCancelled', (id) => `Approval ${id} belongs to a cancelled turn`],
  superseded: ['ApprovalSuperseded', (id) => `Approval ${id} was superseded by a newer user message`],
};

/**
 * Sends an update to a turn through `rejections`; one that met the turn closing or closed is
 * answered from the turn's record. `send(updateId)` is asked again, with the same update id, while
 * Temporal fails for a reason that passes (transient-wait.ts): the server answers a repeated id
 * with the update it already holds, so the message reaches the turn at most once.
 */
export async function turnUpdate<T>(turn: Turn, target: TurnMessageTarget, send: (updateId: string) => Promise<T>, patience: { what: string; patienceMs: number; client: Client }): Promise<T> {
  const updateId = randomUUID();
  try {
    return await waitOutTransient(patience.what, patience.patienceMs, () => rejections(send(updateId)), patience.client);
  } catch (error) {
    if (!(error instanceof TurnpikeRejectedError) || error.type !== 'TurnAlreadyEnded') throw error;
    throw (await settledRejection(turn, target)) ?? error;
  }
}

async function settledRejection(turn: Turn, target: TurnMessageTarget): Promise<TurnpikeRejectedError | undefined> {
  if ('approvalId' in target) {
    // Best effort: a record that cannot be read now leaves the rejection as `TurnAlreadyEnded`.
    const state = await turn.query(turnStateQuery).catch(() => undefined);
    const decision = state?.decisions?.find((record) => record.approvalId === target.approvalId);
    if (!decision) return undefined;
    const [type, message] = SETTLED_APPROVAL[decision.outcome];
    return new TurnpikeRejectedError(message(target.approvalId), type);
  }
  const result = await turn.result().catch(() => undefined);
  if (!result?.toolCalls.some((call) => call.toolCallId === target.toolCallId)) return undefined;
  return new TurnpikeRejectedError(`Tool call ${target.toolCallId} is already settled (the turn has ended)`, 'ToolCallAlreadySettled');
}
