/**
 * The `TurnpikeApprovers` and `TurnpikeNextExpiry` search attributes from the client's side
 * (workflows/context/approver-values.ts, workflows/context/next-expiry.ts): turns and
 * conversations start with them (`unset`, and the far-future `NEXT_EXPIRY_NONE`), which tells
 * their workflow that the namespace has them, so the workflow keeps them current with who may
 * decide what it parks and when the soonest of it expires; an approver's listing then asks
 * visibility for their turns only, soonest-expiring first.
 *
 * A namespace without one of them still works as before: its first start that carries it is
 * refused, started again without it, and the client remembers not to send it there; its listings
 * do without it (read every parked turn and filter after; read the queue up to a limit and sort
 * after), as before the attribute existed.
 */
import type { Client } from '@temporalio/client';
import type { SearchAttributePair } from '@temporalio/common';
import { APPROVERS_UNSET } from '../workflows/context/approver-values.js';
import { NEXT_EXPIRY_NONE } from '../workflows/context/next-expiry.js';
import { turnpikeApproversKey, turnpikeNextExpiryKey } from '../workflows/context/search-attributes.js';
import { errorChainText } from './tenants.js';

type Optional = 'TurnpikeApprovers' | 'TurnpikeNextExpiry';

/** Per optional attribute: the Temporal clients whose namespace refused it. */
const namespacesWithout: Record<Optional, WeakSet<Client>> = { TurnpikeApprovers: new WeakSet(), TurnpikeNextExpiry: new WeakSet() };

/** Whether this client's namespace is known to lack `TurnpikeApprovers`. */
export function knownWithoutApprovers(client: Client): boolean {
  return namespacesWithout.TurnpikeApprovers.has(client);
}

/** Whether this client's namespace is known to lack `TurnpikeNextExpiry`. */
export function knownWithoutNextExpiry(client: Client): boolean {
  return namespacesWithout.TurnpikeNextExpiry.has(client);
}

/** Whether `error` is Temporal's refusal of `attribute` (not registered); remembered for `client`. */
function refused(attribute: Optional, client: Client, error: unknown): boolean {
  if (!new RegExp(attribute).test(errorChainText(error))) return false;
  namespacesWithout[attribute].add(client);
  return true;
}

/** Whether `error` is Temporal's refusal of `TurnpikeApprovers` (not registered); remembered for `client`. */
export function refusedApprovers(client: Client, error: unknown): boolean {
  return refused('TurnpikeApprovers', client, error);
}

/** Whether `error` is Temporal's refusal of `TurnpikeNextExpiry` (not registered); remembered for `client`. */
export function refusedNextExpiry(client: Client, error: unknown): boolean {
  return refused('TurnpikeNextExpiry', client, error);
}

/**
 * Runs `start` with the search attributes to start with: `given` plus `TurnpikeApprovers` and
 * `TurnpikeNextExpiry`, less those the namespace lacks; when the namespace refuses one, starts
 * again without it.
 */
export async function startWithApprovers<T>(client: Client, given: SearchAttributePair[] | undefined, start: (attributes: SearchAttributePair[] | undefined) => Promise<T>): Promise<T> {
  for (;;) {
    const added: SearchAttributePair[] = [
      ...(knownWithoutApprovers(client) ? [] : [{ key: turnpikeApproversKey, value: [APPROVERS_UNSET] }]),
      ...(knownWithoutNextExpiry(client) ? [] : [{ key: turnpikeNextExpiryKey, value: new Date(NEXT_EXPIRY_NONE) }]),
    ];
    if (added.length === 0) return start(given);
    try {
      return await start([...(given ?? []), ...added]);
    } catch (error) {
      // Each refusal removes one attribute for good, so this ends.
      const approvers = !knownWithoutApprovers(client) && refusedApprovers(client, error);
      if (!approvers && !(!knownWithoutNextExpiry(client) && refusedNextExpiry(client, error))) throw error;
    }
  }
}
