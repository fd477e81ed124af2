/**
 * `?tenant=` on the HTTP API's listings, on the dev server: the parked calls (`GET /api/approvals`
 * and the dashboards' live `GET /api/approvals/events`) and the audit trail (`GET /api/decisions`, JSON and JSON lines) of one tenant's turns, for an
 * admin and for a caller bound to no tenant. A caller bound to a tenant may name its own; naming
 * another is refused with 400 (the same for a tenant that exists or not), and so is a value no
 * turn could carry. Another tenant's decided call is not there for a bound caller who could have
 * decided it (404, not 409).
 */
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { parseTenantMap, parseTokenMap } from '../../api/auth.js';
import { useTurnpikeApiWithFakes } from '../support/api-server.js';
import { noteStarted } from '../support/history-recorder.js';
import { readSseFrom } from '../support/sse-reader.js';
import { testTools, use } from '../support/test-tools.js';
import { waitForPending } from '../support/turnpike-harness.js';

const suite = useTurnpikeApiWithFakes(
  { tools: testTools },
  {
    tokens: parseTokenMap('alice-token:alice,bob-token:bob,ops-token:ops'),
    tenants: parseTenantMap('alice:acme'),
    access: { admins: ['ops'] },
  },
);

const scripted = { provider: 'scripted', model: 'demo' } as const;

/** A turn of `tenant` parked on guarded_action, which alice and bob may decide; alice started acme's. */
async function parkedTurn(tenant: string): Promise<WorkflowHandle> {
  const handle = await suite.client.startTurn({ model: scripted, messages: [{ role: 'user', content: use('guarded_action', { target: `for-${tenant}`, count: 1 }) }] }, { turnId: `tenant-filter-${tenant}-${randomUUID()}`, tenant, ...(tenant === 'acme' ? { startedBy: 'alice' } : {}) });
  noteStarted(handle);
  await waitForPending(handle);
  return handle;
}

async function get(path: string, token: string) {
  const response = await fetch(`${suite.base}${path}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: response.status, text: await response.text() };
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const value = await read();
    if (done(value) || attempt >= 150) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('listings of one tenant through the HTTP API', () => {
  it('filter parked calls and decisions by ?tenant=, and refuse a bound caller naming another tenant or a tenant no turn could carry', async () => {
    const acme = await parkedTurn('acme');
    const globex = await parkedTurn('globex');
    const ids = [acme.workflowId, globex.workflowId];
    const ours = (items: Array<{ turnWorkflowId: string }>) => items.map((item) => item.turnWorkflowId).filter((id) => ids.includes(id)).sort();

    const approvals = async (query: string, token: string) => {
      const { status, text } = await get(`/api/approvals${query}`, token);
      expect(status).toBe(200);
      return ours((JSON.parse(text) as { calls: Array<{ turnWorkflowId: string }> }).calls);
    };
    // bob, bound to no tenant, may decide both: all of them, or one tenant's.
    expect(await until(() => approvals('', 'bob-token'), (listed) => listed.length === 2)).toEqual([...ids].sort());
    expect(await approvals('?tenant=globex', 'bob-token')).toEqual([globex.workflowId]);
    expect(await approvals('?tenant=acme&tool=guarded_action', 'bob-token')).toEqual([acme.workflowId]);
    expect(await approvals('?tenant=initech', 'bob-token')).toEqual([]);
    expect(await approvals('?tenant=acme', 'alice-token')).toEqual([acme.workflowId]);
    // The dashboards' live listing takes the same filter.
    const live = async (query: string, token: string) => {
      const { status, messages } = await readSseFrom(`${suite.base}/api/approvals/events${query}`, { authorization: `Bearer ${token}` }, (message) => message.event === 'message');
      expect(status).toBe(200);
      return ours((JSON.parse(messages.at(-1)!.data) as { calls: Array<{ turnWorkflowId: string }> }).calls);
    };
    expect(await live('', 'bob-token')).toEqual([...ids].sort());
    expect(await live('?tenant=globex', 'bob-token')).toEqual([globex.workflowId]);
    expect(await live('?tenant=acme', 'alice-token')).toEqual([acme.workflowId]);

    const calls = new Map<string, { approvalId?: string; inputHash?: string }>();
    for (const handle of [acme, globex]) {
      const [pending] = await waitForPending(handle);
      calls.set(handle.workflowId, pending);
      const decided = await fetch(`${suite.base}/api/turns/${encodeURIComponent(handle.workflowId)}/approvals/${pending.approvalId}`, {
        method: 'POST',
        headers: { authorization: 'Bearer bob-token', 'content-type': 'application/json' },
        body: JSON.stringify({ approved: true, inputHash: pending.inputHash }),
      });
      expect(decided.status).toBe(200);
      await handle.result();
    }

    // alice may decide guarded_action, but globex's decided call is not there for her: 404, not 409.
    const late = await fetch(`${suite.base}/api/turns/${encodeURIComponent(globex.workflowId)}/approvals/${calls.get(globex.workflowId)!.approvalId}`, {
      method: 'POST',
      headers: { authorization: 'Bearer alice-token', 'content-type': 'application/json' },
      body: JSON.stringify({ approved: false, reason: 'too late', inputHash: calls.get(globex.workflowId)!.inputHash }),
    });
    expect(late.status).toBe(404);

    const decisions = async (query: string, token: string) => {
      const { status, text } = await get(`/api/decisions${query}`, token);
      expect(status).toBe(200);
      return ours((JSON.parse(text) as { decisions: Array<{ turnWorkflowId: string }> }).decisions);
    };
    // ops, an admin, reads every tenant's: all, or one tenant's; bob the turns he decided.
    expect(await until(() => decisions('?tool=guarded_action', 'ops-token'), (listed) => listed.length === 2)).toEqual([...ids].sort());
    expect(await decisions('?tenant=globex', 'ops-token')).toEqual([globex.workflowId]);
    expect(await decisions('?tenant=acme&tool=guarded_action', 'ops-token')).toEqual([acme.workflowId]);
    expect(await decisions('?tenant=globex', 'bob-token')).toEqual([globex.workflowId]);
    expect(await decisions('?tenant=acme', 'alice-token')).toEqual([acme.workflowId]);
    const lines = await get('/api/decisions?tenant=acme&format=jsonl', 'ops-token');
    expect(ours(lines.text.trim().split('\n').map((line) => JSON.parse(line) as { turnWorkflowId: string }))).toEqual([acme.workflowId]);

    // alice is bound to acme: another tenant, existing or not, is refused alike; so is a bad value.
    const refusals = [
      { path: '/api/decisions?tenant=globex', token: 'alice-token', message: /tenant "globex" may not be listed: this caller is bound to tenant "acme"/ },
      { path: '/api/decisions?tenant=initech&format=jsonl', token: 'alice-token', message: /tenant "initech" may not be listed/ },
      { path: '/api/approvals?tenant=globex', token: 'alice-token', message: /tenant "globex" may not be listed/ },
      { path: '/api/approvals/events?tenant=globex', token: 'alice-token', message: /tenant "globex" may not be listed/ },
      { path: `/api/approvals/events?tenant=${'x'.repeat(65)}`, token: 'ops-token', message: /tenant is 65 bytes long/ },
      { path: `/api/decisions?tenant=${'x'.repeat(65)}`, token: 'ops-token', message: /tenant is 65 bytes long; Temporal's fairness keys take at most 64 bytes/ },
      { path: '/api/approvals?tenant=', token: 'ops-token', message: /tenant/ },
    ];
    for (const { path, token, message } of refusals) {
      const { status, text } = await get(path, token);
      expect(status, path).toBe(400);
      const { error } = JSON.parse(text) as { error: { type: string; message: string } };
      expect(error.type).toBe('InvalidRequest');
      expect(error.message).toMatch(message);
    }
  });
});
