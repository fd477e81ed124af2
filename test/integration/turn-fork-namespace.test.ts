/**
 * forkTurn in a namespace that lacks the `TurnpikeForkOf` search attribute (every other turnpike
 * attribute registered, so its turns run): the fork is refused with the command that registers
 * it, and nothing is started. The namespace is made for this file
 * (test/support/namespace-without.ts), with a worker of its own.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { TurnpikeRejectedError } from '../../client/turnpike-client.js';
import { useNamespaceWithout } from '../support/namespace-without.js';
import { executionsOf, testTools } from '../support/test-tools.js';
import { useTurnpikeWithFakes } from '../support/turnpike-harness.js';

const suite = useTurnpikeWithFakes({ tools: testTools });
const namespaceWithout = useNamespaceWithout('TurnpikeForkOf', 'no-fork-of');

describe('forkTurn without the TurnpikeForkOf search attribute', () => {
  it('is refused with the command that registers it, and starts nothing', async () => {
    const { fake, turnpike } = suite;
    const client = await namespaceWithout(turnpike.client.connection);

    const turnId = `no-fork-of-${randomUUID()}`;
    fake.script('openai', [{ toolCalls: [{ name: 'record_action', input: { action: 'ns-step-1' } }] }, { text: 'done' }]);
    await client.startTurn({ model: { provider: 'openai', model: 'gpt-4.1-mini' }, messages: [{ role: 'user', content: 'One step.' }] }, { turnId });
    expect((await client.turnResult(turnId)).steps).toBe(2);

    const asked = fake.requests.length;
    const error = await client.forkTurn(turnId, { atStep: 1, turnId: `${turnId}/fork` }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TurnpikeRejectedError);
    expect((error as TurnpikeRejectedError).type).toBe('InvalidRequest');
    expect((error as Error).message).toContain('temporal operator search-attribute create --name TurnpikeForkOf --type Keyword');
    expect(await client.turn(`${turnId}/fork`).describe().then(() => 'started', () => 'not started')).toBe('not started');
    expect(fake.requests.length).toBe(asked);
    expect(executionsOf(`${turnId}/fork`)).toEqual([]);
  });
});
