/**
 * Where a turn's tasks queue: the tenant it runs for and its task priority, passed on to every
 * task it makes. A turn or a conversation is started with both by its client (client/tenants.ts):
 * the `TurnpikeTenant` search attribute, and Temporal's `priority` (`priorityKey`, `fairnessKey`
 * = the tenant, `fairnessWeight`). Here the workflow hands them on, read from `workflowInfo()`:
 *
 * - its activities (model steps, tools, nudges, agent tool prompts) carry the priority, so the
 *   matching service orders and shares their tasks as it does the turn's own;
 * - its child turns (a conversation's turns, agent tool calls, `startAgentTurn`) carry the
 *   priority and the tenant search attribute, so they are listed and dispatched as the tenant's.
 *
 * Temporal would already give activities and children the workflow's priority when their commands
 * carry none; they carry it here so that the history shows it on every task, and so that a later
 * change (a queue of model calls of its own, docs/production.md) has one place to set it. A turn
 * started without a tenant or priority sends the same commands as before: nothing is added.
 * Not a patch: replay compares an activity's id and type and a child's id and type, not these
 * attributes (docs/versioning.md).
 */
import * as wf from '@temporalio/workflow';
import type { Priority, SearchAttributePair } from '@temporalio/common';
import { APPROVERS_UNSET } from './approver-values.js';
import { NEXT_EXPIRY_NONE } from './next-expiry.js';
import { turnpikeApproversKey, turnpikeNextExpiryKey, turnpikeTenantKey } from './search-attributes.js';

/** The turn's tenant (its `TurnpikeTenant` search attribute), or undefined. */
export function currentTenant(): string | undefined {
  const tenant = wf.workflowInfo().typedSearchAttributes.get(turnpikeTenantKey);
  return typeof tenant === 'string' && tenant.length > 0 ? tenant : undefined;
}

/** The workflow's own priority, when it was started with one. */
function currentPriority(): Priority | undefined {
  const priority = wf.workflowInfo().priority;
  if (!priority) return undefined;
  const { priorityKey, fairnessKey, fairnessWeight } = priority;
  const given: Priority = {
    ...(priorityKey ? { priorityKey } : {}),
    ...(fairnessKey ? { fairnessKey } : {}),
    ...(fairnessWeight ? { fairnessWeight } : {}),
  };
  return Object.keys(given).length > 0 ? given : undefined;
}

/** Activity options that queue an activity as the turn is queued: its priority, or nothing. */
export function activityPlacement(): Pick<wf.ActivityOptions, 'priority'> {
  const priority = currentPriority();
  return priority ? { priority } : {};
}

/**
 * Child workflow options that start a child turn as the tenant's: the priority and the tenant
 * search attribute, or nothing; and `TurnpikeApprovers` (approver-values.ts) and
 * `TurnpikeNextExpiry` (next-expiry.ts) when the workflow carries them, so that the child, too,
 * knows the namespace has them and keeps them current.
 */
export function childPlacement(): Pick<wf.ChildWorkflowOptions, 'priority' | 'typedSearchAttributes'> {
  const priority = currentPriority();
  const tenant = currentTenant();
  const carried = wf.workflowInfo().typedSearchAttributes;
  const approvers = carried.get(turnpikeApproversKey) !== undefined;
  const expiry = carried.get(turnpikeNextExpiryKey) !== undefined;
  const attributes: SearchAttributePair[] = [
    ...(tenant ? [{ key: turnpikeTenantKey, value: tenant }] : []),
    ...(approvers ? [{ key: turnpikeApproversKey, value: [APPROVERS_UNSET] }] : []),
    ...(expiry ? [{ key: turnpikeNextExpiryKey, value: new Date(NEXT_EXPIRY_NONE) }] : []),
  ];
  return {
    ...(priority ? { priority } : {}),
    ...(attributes.length > 0 ? { typedSearchAttributes: attributes } : {}),
  };
}
