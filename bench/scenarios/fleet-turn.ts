/** One turn of the fleet figure: a question of a tenant's to the fake provider's model, no tools. */
import type { TurnpikeClient } from '../../client/turnpike-client.js';

export const FLEET_MODEL = { provider: 'openai', model: 'gpt-4.1-mini' } as const;

export function startFleetTurn(turnpike: TurnpikeClient, tenant: string, priority: 'interactive' | 'batch', index: number, turnId: string) {
  return turnpike.startTurn({ model: FLEET_MODEL, messages: [{ role: 'user', content: `${tenant} question ${index}` }], tools: [] }, { turnId, tenant, priority });
}
