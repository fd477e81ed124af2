/**
 * A namespace without the `TurnpikeNextExpiry` search attribute (every other turnpike attribute
 * registered; test/support/namespace-without.ts): a client's start there is refused for it and
 * started again without it, so the turn never upserts it; an approver's pages are read up to 5,000
 * turns and ordered in memory, soonest-expiring first, and no workflow task fails.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { turnpikeApproversKey, turnpikeNextExpiryKey } from '../../workflows/context/search-attributes.js';
import type { AgentTurnInput } from '../../workflows/types/turn.js';
import { useNamespaceWithout } from '../support/namespace-without.js';
import { testTools, use } from '../support/test-tools.js';
import { useTurnpikeWithFakes, waitForPending } from '../support/turnpike-harness.js';

const suite = useTurnpikeWithFakes({ tools: testTools });
const namespaceWithout = useNamespaceWithout('TurnpikeNextExpiry', 'no-next-expiry');

const turnOf = (approvalTimeout: string, target: string): AgentTurnInput => ({
  model: { provider: 'scripted', model: 'demo' },
  messages: [{ role: 'user', content: use('guarded_action', { target, count: 1 }) }],
  approvalTimeout,
});

describe('TurnpikeNextExpiry missing from the namespace', () => {
  it('is left out in a namespace without it: turns start, park, are paged soonest-expiring first and decided, and no workflow task fails', async () => {
    const client = await namespaceWithout(suite.turnpike.client.connection);
    const later = `no-next-expiry-later-${randomUUID()}`;
    const sooner = `no-next-expiry-sooner-${randomUUID()}`;
    await client.startTurn(turnOf('2h', 'later'), { turnId: later });
    await client.startTurn(turnOf('1h', 'sooner'), { turnId: sooner });
    const described = await client.turn(later).describe();
    expect(described.typedSearchAttributes.get(turnpikeNextExpiryKey)).toBeUndefined();
    // The other one is still carried.
    expect(described.typedSearchAttributes.get(turnpikeApproversKey)).toEqual(expect.any(Array));
    await waitForPending(client.turn(later), 1);
    const [call] = await waitForPending(client.turn(sooner), 1);

    const deadline = Date.now() + 30_000;
    let first = await client.listParkedPage({ approver: { identity: 'bob' }, limit: 1 });
    while (first.next === undefined && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      first = await client.listParkedPage({ approver: { identity: 'bob' }, limit: 1 });
    }
    expect(first.calls.map((parked) => parked.turnWorkflowId)).toEqual([sooner]);
    const second = await client.listParkedPage({ approver: { identity: 'bob' }, limit: 1, after: first.next! });
    expect(second.calls.map((parked) => parked.turnWorkflowId)).toEqual([later]);
    expect(second.next).toBeUndefined();
    expect((await client.listParkedPage({ approver: { identity: 'mallory' } })).calls).toEqual([]);

    await client.approveToolCall(sooner, { approvalId: call!.approvalId!, approved: true, approver: 'bob' });
    expect((await client.turnResult(sooner)).status).toBe('completed');
    for (const turnId of [sooner, later]) {
      const { events } = await client.turn(turnId).fetchHistory();
      expect(events?.filter((event) => event.workflowTaskFailedEventAttributes)).toEqual([]);
    }
  });
});
