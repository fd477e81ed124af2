/**
 * A namespace without the `TurnpikeApprovers` search attribute (every other turnpike attribute
 * registered; test/support/namespace-without.ts): a client's start there is refused for it and
 * started again without it, so the turn never upserts it; turns start, park, are listed for an
 * approver (read, then filtered) and are decided as before, and no workflow task fails.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { turnpikeApproversKey } from '../../workflows/context/search-attributes.js';
import type { AgentTurnInput } from '../../workflows/types/turn.js';
import { useNamespaceWithout } from '../support/namespace-without.js';
import { testTools, use } from '../support/test-tools.js';
import { useTurnpikeWithFakes, waitForPending } from '../support/turnpike-harness.js';

const suite = useTurnpikeWithFakes({ tools: testTools });
const namespaceWithout = useNamespaceWithout('TurnpikeApprovers', 'no-approvers');

const turnOf = (...calls: string[]): AgentTurnInput => ({ model: { provider: 'scripted', model: 'demo' }, messages: [{ role: 'user', content: calls.join(' and ') }] });
const guarded = (target: string) => use('guarded_action', { target, count: 1 });

describe('TurnpikeApprovers missing from the namespace', () => {
  it('is left out in a namespace without it: turns start, park and are listed as before, and no workflow task fails', async () => {
    const client = await namespaceWithout(suite.turnpike.client.connection);
    const turnId = `no-approvers-${randomUUID()}`;
    await client.startTurn(turnOf(guarded('plain')), { turnId });
    const handle = client.turn(turnId);
    expect((await handle.describe()).typedSearchAttributes.get(turnpikeApproversKey)).toBeUndefined();
    const [call] = await waitForPending(handle, 1);
    const deadline = Date.now() + 30_000;
    let listed = await client.listParkedCalls({ approver: { identity: 'bob' } });
    while (listed.length === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      listed = await client.listParkedCalls({ approver: { identity: 'bob' } });
    }
    expect(listed.map((parked) => parked.turnWorkflowId)).toEqual([turnId]);
    expect(await client.listParkedCalls({ approver: { identity: 'mallory' } })).toEqual([]);
    await client.approveToolCall(turnId, { approvalId: call!.approvalId!, approved: true, approver: 'bob' });
    expect((await client.turnResult(turnId)).status).toBe('completed');
    const { events } = await handle.fetchHistory();
    expect(events?.filter((event) => event.workflowTaskFailedEventAttributes)).toEqual([]);
  });
});
