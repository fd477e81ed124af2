/**
 * The `TurnpikeApprovers` search attribute from the client's side (workflows/context/approver-values.ts):
 * turns and conversations start with it (`unset`), which tells their workflow that the namespace
 * has it, so the workflow keeps it current with who may decide what it parks; an approver's
 * listing then asks visibility for their turns only.
 *
 * A namespace without the attribute still works as before: its first start that carries it is
 * refused, started again without it, and the client remembers not to send it there; its listings
 * read every parked turn and filter after, as before the attribute existed.
 */
import type { Client } from '@temporalio/client';
import type { SearchAttributePair } from '@temporalio/common';
import { APPROVERS_UNSET } from '../workflows/context/approver-values.js';
import { turnpikeApproversKey } from '../workflows/context/search-attributes.js';
import { errorChainText } from './tenants.js';

/** Temporal clients whose namespace refused `TurnpikeApprovers`. */
const namespacesWithout = new WeakSet<Client>();

/** Whether this client's namespace is known to lack `TurnpikeApprovers`. */
export function knownWithoutApprovers(client: Client): boolean {
  return namespacesWithout.has(client);
}

/** Whether `error` is Temporal's refusal of `TurnpikeApprovers` (not registered); remembered for `client`. */
export function refusedApprovers(client: Client, error: unknown): boolean {
  if (!/TurnpikeApprovers/.test(errorChainText(error))) return false;
  namespacesWithout.add(client);
  return true;
}

/**
 * Runs `start` with the search attributes to start with: `given` plus `TurnpikeApprovers`, unless
 * the namespace lacks it; when the namespace refuses it, starts again with `given` alone.
 */
export async function startWithApprovers<T>(client: Client, given: SearchAttributePair[] | undefined, start: (attributes: SearchAttributePair[] | undefined) => Promise<T>): Promise<T> {
  if (knownWithoutApprovers(client)) return start(given);
  try {
    return await start([...(given ?? []), { key: turnpikeApproversKey, value: [APPROVERS_UNSET] }]);
  } catch (error) {
    if (!refusedApprovers(client, error)) throw error;
    return start(given);
  }
}
