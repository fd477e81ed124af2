/**
 * When the soonest of a turn's parked decisions expires, as its `TurnpikeNextExpiry` search
 * attribute (Datetime), so that an approver's listing reads their queue soonest-expiring first, a
 * window of expiry at a time (client/expiry-pages.ts), instead of reading the whole queue to sort
 * it (docs/capacity.md).
 *
 * - the earliest `expiresAt` among the parked calls a person decides (an approval, a budget
 *   approval): the calls `TurnpikeApprovers` names approvers for;
 * - `NEXT_EXPIRY_NONE`, a far-future instant, when no such call is parked (nothing parked, or
 *   only client-tool calls and questions, which whoever may read the turn answers). It is also what
 *   a client starts a turn with. Like `TurnpikeApprovers` the attribute is never removed once set:
 *   its presence is how a turn (and a hand-over's next run, and a child turn) knows the namespace
 *   has it. A turn run by a worker from before keeps `NEXT_EXPIRY_NONE`, so listings read those turns
 *   last, with the turns that carry no attribute at all.
 *
 * Side-effect free: imported by workflows, the client and the API.
 */
import type { PendingToolCall } from '../types/index.js';

/** The value of a turn with no decision parked: sorts after every real expiry. */
export const NEXT_EXPIRY_NONE = '9999-12-31T00:00:00.000Z';

/**
 * Behind `patched(NEXT_EXPIRY_PATCH)`: an upsert of `TurnpikeNextExpiry` alone, when the soonest
 * expiry changes while nothing else a turn upserts does (one of two parked calls of the same tool
 * decided); turns recorded before it made no such upsert. Everywhere else the value rides on the
 * upserts turns made before it existed.
 */
export const NEXT_EXPIRY_PATCH = '0.5.0-next-expiry-attribute';

/** The value a turn publishes for its parked calls: an ISO instant. */
export function nextExpiry(parked: readonly Pick<PendingToolCall, 'kind' | 'expiresAt'>[]): string {
  let soonest = NEXT_EXPIRY_NONE;
  for (const call of parked) {
    if (call.kind !== 'approval' && call.kind !== 'budget') continue;
    const at = new Date(call.expiresAt).toISOString();
    if (at < soonest) soonest = at;
  }
  return soonest;
}
