/**
 * How the HTTP API sends a person's decision to the turn: the `approveToolCall` update with the
 * approver and groups of the caller (never of the request's body), then a fresh listing for the
 * next reader. The decision route (decision-routes.ts) and Slack's interactions
 * (slack/interactions-route.ts) both send decisions this way, so quorum votes, `AlreadyVoted`,
 * `excludeRequester`, the input hash and the audit treat them alike.
 */
import type { ApproveToolCallResult } from '../workflows/types/index.js';
import type { Caller } from './auth.js';
import type { RouteContext } from './route-context.js';

export interface PersonsDecision {
  approved: boolean;
  reason?: string;
  input?: unknown;
  /** The hash of the input the approver saw; a call whose input changed since refuses the decision. */
  inputHash?: string;
}

export async function sendDecision({ client, listing }: Pick<RouteContext, 'client' | 'listing'>, who: Caller, turnId: string, approvalId: string, decision: PersonsDecision): Promise<ApproveToolCallResult> {
  const result = await client.approveToolCall(turnId, { approvalId, ...decision, approver: who.identity, approverGroups: [...who.groups] });
  listing.changed();
  return result;
}
