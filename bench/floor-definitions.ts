/**
 * Messages of the floor workflow, importable by the client side as well as by workflow code
 * (like turnpike's workflows/messages/definitions.ts).
 */
import { defineQuery, defineUpdate } from '@temporalio/workflow';

/** Same request shape as turnpike's `approveToolCall`, so both send the same bytes to resume. */
export interface FloorApproveInput {
  approvalId: string;
  approved: boolean;
  approver?: string;
}

export const floorApproveUpdate = defineUpdate<{ approvalId: string; approved: boolean }, [FloorApproveInput]>('approve');

/** Whether the turn waits on the update; lets the client wait for the park as it does with turnpike's `turnState`. */
export const floorParkedQuery = defineQuery<boolean>('parked');

export const FLOOR_WORKFLOW = 'floorTurn';

export interface FloorTurnInput {
  /** Tool steps before the answer: a turn of `toolSteps + 1` model calls. */
  toolSteps: number;
  /** Park on the update before the first tool step's tool runs. */
  approval?: boolean;
  /**
   * Park the way a hand-written workflow must to give what turnpike's contract gives: the
   * `AgentTurnStatus` / `AgentPendingTools` search attributes set at the park and again at the
   * resume ("kept current"), and the approval's expiry (`approvalTimeout`, 24 h by default) as
   * the SDK's idiom has it, `condition(…, '24h')`, whose timer the decision cancels (an event
   * turnpike saves by leaving its timer to run out). Without it the park is only the update round trip.
   */
  contractPark?: boolean;
  /**
   * The conversation, ending with the turn's user message. When given, every `callModel`
   * carries it, grown by each step's tool call and result, as any workflow that calls a model
   * must; absent, `callModel` gets only the step number (the per-step figures).
   */
  messages?: unknown[];
}

export interface FloorTurnResult {
  steps: number;
}
