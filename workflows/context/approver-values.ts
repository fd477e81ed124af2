/**
 * Who may decide what a turn has parked, as the values of its `TurnpikeApprovers` search
 * attribute (KeywordList), so that an approver's listing asks visibility for the turns they may
 * decide instead of reading every parked turn and filtering after (docs/capacity.md: at 10,000
 * parked turns that read was the first limit to fall).
 *
 * - `user:<identity>` and `group:<name>` for a parked approval that names approvers or groups;
 * - `anyone` for one that names neither (anyone may decide it, `mayDecide`);
 * - `reader` for a parked client-tool call or question: those are listed to whoever may read
 *   the turn, which only the API knows, so the listing reads them and filters after;
 * - `none` when nothing is parked. The attribute is never removed once set: a hand-over's new run
 *   inherits its values, and their presence is how a turn knows the namespace has the attribute;
 * - `unset`, what a client starts a turn with: the workflow replaces it with the values above when
 *   it publishes. A turn run by a worker from before never replaces it, so listings read it too.
 *
 * Side-effect free: imported by workflows, the client and the API.
 */
import type { PendingToolCall } from '../types/index.js';

export const APPROVERS_UNSET = 'unset';
const NOTHING_PARKED = 'none';
const ANYONE = 'anyone';
const READER = 'reader';

/** Values are cut to this length (Temporal's Keyword limit is larger; identities are short). */
const MAX_VALUE_LENGTH = 255;
/** Characters that visibility's query language quotes or escapes, differently per store: never sent. */
const UNQUOTABLE = /['"\\\p{Cc}]/gu;

/**
 * Behind `patched(APPROVERS_PATCH)`: an upsert of `TurnpikeApprovers` alone, when who may decide
 * changes while nothing else a turn upserts does (an escalation, a delegation); turns recorded
 * before it made no such upsert. Everywhere else the values ride on the upserts turns made before.
 */
export const APPROVERS_PATCH = '0.5.0-approvers-attribute';

/** The values a turn publishes for its parked calls (sorted, without repeats). */
export function approverValues(parked: readonly Pick<PendingToolCall, 'kind' | 'approvers' | 'approverGroups'>[]): string[] {
  const values = new Set<string>();
  for (const call of parked) {
    if (call.kind !== 'approval' && call.kind !== 'budget') values.add(READER);
    else if (!call.approvers && !call.approverGroups) values.add(ANYONE);
    else {
      for (const approver of call.approvers ?? []) values.add(keyword(`user:${approver}`));
      for (const group of call.approverGroups ?? []) values.add(keyword(`group:${group}`));
    }
  }
  return values.size > 0 ? [...values].sort() : [NOTHING_PARKED];
}

/**
 * The values a caller's listing asks for: every turn where they may decide something, every turn
 * with a client-side call (filtered by reading rights after), and every turn that has not
 * published its approvers (started before, or run by a worker from before).
 */
export function callerValues(caller: { identity?: string; groups?: readonly string[] }): string[] {
  return [
    APPROVERS_UNSET,
    ANYONE,
    READER,
    ...(caller.identity !== undefined ? [keyword(`user:${caller.identity}`)] : []),
    ...(caller.groups ?? []).map((group) => keyword(`group:${group}`)),
  ];
}

/**
 * A visibility clause for `callerValues`: the turns that carry one of them, or none at all (turns
 * started without the attribute). `keyword` left nothing in them that needs escaping.
 */
export function approversClause(values: readonly string[]): string {
  return `(TurnpikeApprovers IN (${values.map((value) => `'${value}'`).join(', ')}) OR TurnpikeApprovers IS NULL)`;
}

/**
 * A value as published and as asked for: quotes, backslashes and control characters become `_`,
 * and a long one is cut. Two identities may then share a value; the listing reads a few turns too
 * many for them, never too few, since the check after reading is exact.
 */
function keyword(value: string): string {
  const plain = value.replace(UNQUOTABLE, '_');
  return plain.length > MAX_VALUE_LENGTH ? plain.slice(0, MAX_VALUE_LENGTH) : plain;
}
