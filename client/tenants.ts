/**
 * Tenants and task priority at a turn's or a conversation's start. The caller names the tenant a
 * turn runs for and how urgent it is; the client turns them into what Temporal dispatches by:
 *
 * - the `TurnpikeTenant` search attribute (listings filter by it; child turns, hand-overs and
 *   forks carry it on);
 * - Temporal's task `priority`: `priorityKey` from the priority's name (`interactive` goes before
 *   `normal`, which goes before `batch`), `fairnessKey` = the tenant, and `fairnessWeight` from the
 *   client's table of weights by tenant (default 1). The turn passes the same priority to its
 *   activities and child turns (workflows/context/tenant-placement.ts).
 *
 * Priority needs the matching service's new matcher and fairness its fairness mode; without them
 * a task queue is first in, first out, and these settings are recorded but change nothing
 * (docs/tenants-and-capacity.md).
 */
import type { Priority, SearchAttributePair } from '@temporalio/common';
import { turnpikeTenantKey } from '../workflows/context/search-attributes.js';
import { TurnpikeRejectedError } from './errors.js';

/** The priorities a turn may be started with, and the `priorityKey` each is (1 goes first, 5 last). */
export const TURN_PRIORITIES = { interactive: 1, normal: 3, batch: 5 } as const;

export type TurnPriority = keyof typeof TURN_PRIORITIES;

/** Who a turn runs for and how urgent it is; both optional. */
export interface TenantPlacement {
  /** The tenant: the `TurnpikeTenant` search attribute and the fairness key of every task. At most 64 bytes (UTF-8). */
  tenant?: string;
  /** `interactive`, `normal` (Temporal's default) or `batch`. */
  priority?: TurnPriority;
}

/** Temporal's limit on a fairness key, in bytes. */
export const MAX_TENANT_BYTES = 64;

/** Temporal clamps weights to this range; a weight outside it is a mistake in the table. */
const WEIGHT_RANGE = { min: 0.001, max: 1_000 } as const;

/** The start options a placement adds: the tenant search attribute and the priority. */
export interface StartPlacement {
  typedSearchAttributes?: SearchAttributePair[];
  priority?: Priority;
}

/** What is wrong with a placement, or undefined. */
export function placementProblem(placement: TenantPlacement): string | undefined {
  const { tenant, priority } = placement;
  if (tenant !== undefined) {
    if (typeof tenant !== 'string' || tenant.trim().length === 0) return 'tenant must be a non-empty string';
    const bytes = Buffer.byteLength(tenant, 'utf8');
    if (bytes > MAX_TENANT_BYTES) return `tenant is ${bytes} bytes long; Temporal's fairness keys take at most ${MAX_TENANT_BYTES} bytes`;
  }
  if (priority !== undefined && !Object.hasOwn(TURN_PRIORITIES, priority as string)) {
    return `unknown priority ${JSON.stringify(priority)}; use one of ${Object.keys(TURN_PRIORITIES).join(', ')}`;
  }
  return undefined;
}

/** What is wrong with a table of fairness weights by tenant, or undefined. */
export function weightsProblem(weights: Readonly<Record<string, number>>): string | undefined {
  for (const [tenant, weight] of Object.entries(weights)) {
    if (typeof weight !== 'number' || !Number.isFinite(weight) || weight < WEIGHT_RANGE.min || weight > WEIGHT_RANGE.max) {
      return `tenant ${JSON.stringify(tenant)} has weight ${String(weight)}; a fairness weight is a number from ${WEIGHT_RANGE.min} to ${WEIGHT_RANGE.max}`;
    }
  }
  return undefined;
}

/** `TURNPIKE_TENANT_WEIGHTS="acme:2,globex:0.5"` → fairness weights by tenant, checked. */
export function parseTenantWeights(value: string | undefined): Record<string, number> {
  const weights: Record<string, number> = {};
  for (const entry of (value ?? '').split(',').map((part) => part.trim()).filter(Boolean)) {
    const separator = entry.lastIndexOf(':');
    if (separator <= 0) throw new Error(`TURNPIKE_TENANT_WEIGHTS entries look like tenant:weight (got "${entry}")`);
    weights[entry.slice(0, separator)] = Number(entry.slice(separator + 1));
  }
  const problem = weightsProblem(weights);
  if (problem) throw new Error(`TURNPIKE_TENANT_WEIGHTS: ${problem}`);
  return weights;
}

/**
 * The start options for a placement, checked: refused as `InvalidRequest` (naming `what`, the
 * call) before anything starts. Nothing is added for an empty placement.
 */
export function startPlacement(what: string, placement: TenantPlacement, weights: Readonly<Record<string, number>> = {}): StartPlacement {
  const problem = placementProblem(placement);
  if (problem) throw new TurnpikeRejectedError(`Invalid ${what}: ${problem}`, 'InvalidRequest');
  const { tenant, priority } = placement;
  const weight = tenant !== undefined && Object.hasOwn(weights, tenant) ? weights[tenant] : undefined;
  const given: Priority = {
    ...(priority !== undefined ? { priorityKey: TURN_PRIORITIES[priority] } : {}),
    ...(tenant !== undefined ? { fairnessKey: tenant } : {}),
    ...(weight !== undefined ? { fairnessWeight: weight } : {}),
  };
  return {
    ...(tenant !== undefined ? { typedSearchAttributes: [{ key: turnpikeTenantKey, value: tenant }] } : {}),
    ...(Object.keys(given).length > 0 ? { priority: given } : {}),
  };
}

/**
 * A start refused because the namespace lacks `TurnpikeTenant` becomes a clear refusal naming the
 * command that registers it; any other error is thrown as it is.
 */
export function refuseWithoutTenantAttribute(what: string): (error: unknown) => never {
  return (error: unknown) => {
    // The SDK says "Failed to start Workflow"; the server's reason (no mapping for TurnpikeTenant) is in its cause.
    if (/TurnpikeTenant/.test(errorChainText(error))) {
      throw new TurnpikeRejectedError(
        `Invalid ${what}: the namespace has no search attribute TurnpikeTenant; register it with \`temporal operator search-attribute create --name TurnpikeTenant --type Keyword\` (docs/operators.md)`,
        'InvalidRequest',
      );
    }
    throw error;
  };
}

/** The messages (and gRPC details) of an error and its causes. */
export function errorChainText(error: unknown): string {
  const parts: string[] = [];
  for (let cause = error as { message?: unknown; details?: unknown; cause?: unknown } | undefined, depth = 0; cause && depth < 5; cause = cause.cause as typeof cause, depth++) {
    parts.push(String(cause.message ?? ''), String(cause.details ?? ''));
  }
  return parts.join('\n');
}

/** A visibility query's clause for one tenant: ` AND TurnpikeTenant="…"`, or nothing. */
export function tenantClause(tenant: string | undefined): string {
  if (tenant === undefined) return '';
  return ` AND TurnpikeTenant="${tenant.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}
