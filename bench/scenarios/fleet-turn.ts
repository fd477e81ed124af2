/** One turn of the fleet figure: a question of a tenant's to the fake provider's model, no tools. */
import type { BatchTurn } from '../../client/turn-batch.js';
import type { TurnpikeClient } from '../../client/turnpike-client.js';

export const FLEET_MODEL = { provider: 'openai', model: 'gpt-4.1-mini' } as const;

export function fleetTurn(tenant: string, priority: 'interactive' | 'batch', index: number, turnId: string): BatchTurn {
  return { input: { model: FLEET_MODEL, messages: [{ role: 'user', content: `${tenant} question ${index}` }], tools: [] }, options: { turnId, tenant, priority } };
}

export function startFleetTurn(turnpike: TurnpikeClient, tenant: string, priority: 'interactive' | 'batch', index: number, turnId: string) {
  const { input, options } = fleetTurn(tenant, priority, index, turnId);
  return turnpike.startTurn(input, options);
}
