/**
 * A start with a tenant in a namespace that lacks the `TurnpikeTenant` search attribute (every
 * other turnpike attribute registered, so its turns run): `startTurn` and `sendMessage` are
 * refused with the command that registers it, and nothing is started; without a tenant a turn
 * starts and runs as before. The namespace is made for this file
 * (test/support/namespace-without.ts), with a worker of its own.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { TurnpikeRejectedError } from '../../client/turnpike-client.js';
import { useNamespaceWithout } from '../support/namespace-without.js';
import { testTools } from '../support/test-tools.js';
import { useTurnpikeWithFakes } from '../support/turnpike-harness.js';

const suite = useTurnpikeWithFakes({ tools: testTools });
const namespaceWithout = useNamespaceWithout('TurnpikeTenant', 'no-tenant');

describe('a tenant without the TurnpikeTenant search attribute', () => {
  it('is refused with the command that registers it, and starts nothing', async () => {
    const { turnpike } = suite;
    const client = await namespaceWithout(turnpike.client.connection);

    const turnId = `no-tenant-${randomUUID()}`;
    const input = { model: { provider: 'scripted' as const, model: 'demo' }, messages: [{ role: 'user' as const, content: 'look up order 1001' }] };
    const error = await client.startTurn(input, { turnId, tenant: 'acme' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TurnpikeRejectedError);
    expect((error as TurnpikeRejectedError).type).toBe('InvalidRequest');
    expect((error as Error).message).toContain('temporal operator search-attribute create --name TurnpikeTenant --type Keyword');
    expect(await client.turn(turnId).describe().then(() => 'started', () => 'not started')).toBe('not started');

    const conversationId = `no-tenant-conversation-${randomUUID()}`;
    const refused = await client.sendMessage({ conversationId, conversation: { model: input.model }, text: 'hello', tenant: 'acme' }).catch((caught: unknown) => caught);
    expect((refused as Error).message).toContain('--name TurnpikeTenant --type Keyword');
    expect(await client.conversation(conversationId).describe().then(() => 'started', () => 'not started')).toBe('not started');

    // Without a tenant the namespace runs turns as before.
    await client.startTurn(input, { turnId });
    expect((await client.turnResult(turnId)).status).toBe('completed');
  });
});
