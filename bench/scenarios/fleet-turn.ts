/** One turn of the fleet figure: a question of a tenant's to the fake provider's model, no tools. */
import type { BatchTurn } from '../../client/turn-batch.js';
import type { TurnpikeClient } from '../../client/turnpike-client.js';

export const FLEET_MODEL = { provider: 'openai', model: 'gpt-4.1-mini' } as const;

export function fleetTurn(tenant: string, priority: 'interactive' | 'batch', index: number, turnId: string): BatchTurn {
  return { input: { model: FLEET_MODEL, messages: [{ role: 'user', content: `${tenant} question ${index}` }], tools: [] }, options: { turnId, tenant, priority } };
}

/** Tenant A's batch: `count` turns with the ids `<prefix>-<index>`, `concurrency` starts in flight; throws if any was refused. */
export async function startTenantA(turnpike: TurnpikeClient, count: number, prefix: string, concurrency: number) {
  const turns = Array.from({ length: count }, (_, index) => fleetTurn('tenant-a', 'batch', index, `${prefix}-${index}`));
  const starts = await turnpike.startTurns(turns, { concurrency });
  const refused = starts.find((started) => started.error);
  if (refused) throw new Error(`A's turn ${refused.turnId} was not started: ${refused.error!.message}`);
  return starts.map((started) => started.handle!);
}

export function startFleetTurn(turnpike: TurnpikeClient, tenant: string, priority: 'interactive' | 'batch', index: number, turnId: string) {
  const { input, options } = fleetTurn(tenant, priority, index, turnId);
  return turnpike.startTurn(input, options);
}
