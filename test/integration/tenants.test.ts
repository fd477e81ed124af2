/**
 * Tenants and task priority, read from the turns' histories on the dev server: a turn started
 * with a tenant and a priority carries Temporal's `priority` (priority key by name, fairness key =
 * the tenant, the client's weight) on its start, on every activity it schedules and on every child
 * turn it starts, and the `TurnpikeTenant` search attribute on itself, its child turns (of a
 * conversation and of an agent tool), the runs of its hand-overs and its forks. Listings of one
 * tenant list only its turns, through `TurnpikeClient` and through the HTTP API, where a caller
 * bound to a tenant sees only that tenant's; bad input is refused with nothing started.
 */
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgentTool } from '../../activities/agent-tools.js';
import { parseTenantMap, parseTokenMap } from '../../api/auth.js';
import { TurnpikeClient, TurnpikeRejectedError } from '../../client/turnpike-client.js';
import { turnpikeTenantKey } from '../../workflows/context/search-attributes.js';
import { noteStarted, saveRuns } from '../support/history-recorder.js';
import { executionsOf, testTools, use } from '../support/test-tools.js';
import { useTurnpikeApiWithFakes } from '../support/api-server.js';
import { waitForPending } from '../support/turnpike-harness.js';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const { EventType } = temporal.api.enums.v1;

const research = defineAgentTool({
  name: 'research_tenant',
  description: 'Researches a target.',
  inputSchema: z.object({ target: z.string() }),
  agent: { model: { provider: 'openai', model: 'gpt-4.1-mini' }, tools: ['record_action'] },
});

const suite = useTurnpikeApiWithFakes(
  { tools: [...testTools, research] },
  {
    tokens: parseTokenMap('alice-token:alice,bob-token:bob,ops-token:ops'),
    tenants: parseTenantMap('alice:acme,bob:globex'),
    access: { admins: ['ops'] },
  },
);

const WEIGHTS = { acme: 2, globex: 0.5 };

/** The client of this file's task queue, with the weights table. */
function weighted(): TurnpikeClient {
  return new TurnpikeClient({ client: suite.turnpike.client, taskQueue: suite.turnpike.taskQueue, tenantWeights: WEIGHTS });
}

async function historyOf(workflowId: string, runId?: string): Promise<HistoryEvent[]> {
  const history = await suite.turnpike.client.workflow.getHandle(workflowId, runId).fetchHistory();
  return history.events ?? [];
}

/** An event's priority as plain fields (protobuf defaults left out). */
function plain(priority: temporal.api.common.v1.IPriority | null | undefined): Record<string, unknown> {
  return {
    ...(priority?.priorityKey ? { priorityKey: priority.priorityKey } : {}),
    ...(priority?.fairnessKey ? { fairnessKey: priority.fairnessKey } : {}),
    ...(priority?.fairnessWeight ? { fairnessWeight: priority.fairnessWeight } : {}),
  };
}

function startedPriority(events: HistoryEvent[]) {
  return plain(events[0]?.workflowExecutionStartedEventAttributes?.priority);
}

async function tenantOf(workflowId: string, runId?: string): Promise<string | undefined> {
  return (await suite.turnpike.client.workflow.getHandle(workflowId, runId).describe()).typedSearchAttributes.get(turnpikeTenantKey);
}

/** Every run of a workflow, first to last, by the continue-as-new events of their histories. */
async function runsOf(workflowId: string): Promise<string[]> {
  const first = await historyOf(workflowId);
  const runs = [first[0]!.workflowExecutionStartedEventAttributes!.firstExecutionRunId!];
  for (;;) {
    const events = await historyOf(workflowId, runs.at(-1));
    const next = events.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
    if (!next) return runs;
    runs.push(next);
  }
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const value = await read();
    if (done(value) || attempt >= 150) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const scripted = { provider: 'scripted', model: 'demo' } as const;

describe('a turn started for a tenant', () => {
  it('carries the priority on its start and on every activity, and the tenant on itself and its fork', async () => {
    const client = weighted();
    const turnId = `tenant-turn-${randomUUID()}`;
    const handle = await client.startTurn({ model: scripted, messages: [{ role: 'user', content: 'look up order 1001 then look up order 1002' }] }, { turnId, tenant: 'acme', priority: 'interactive' });
    noteStarted(handle);
    expect((await handle.result()).status).toBe('completed');
    const expected = { priorityKey: 1, fairnessKey: 'acme', fairnessWeight: 2 };
    const events = await historyOf(turnId);
    expect(startedPriority(events)).toEqual(expected);
    const scheduled = events.filter((event) => event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED);
    expect(scheduled.map((event) => event.activityTaskScheduledEventAttributes?.activityType?.name)).toEqual(['callModel', 'executeTool', 'callModel', 'executeTool', 'callModel']);
    for (const event of scheduled) expect(plain(event.activityTaskScheduledEventAttributes?.priority)).toEqual(expected);
    expect(await tenantOf(turnId)).toBe('acme');
    expect((await client.describeStart(turnId))?.tenant).toBe('acme');

    // A fork runs for the original's tenant, at its priority unless asked for another.
    const fork = await client.forkTurn(turnId, { atStep: 1, turnId: `${turnId}/fork` });
    noteStarted(client.turn(fork.turnId));
    await client.turnResult(fork.turnId);
    expect(await tenantOf(fork.turnId)).toBe('acme');
    expect(startedPriority(await historyOf(fork.turnId))).toEqual(expected);
    const batch = await client.forkTurn(turnId, { atStep: 1, turnId: `${turnId}/fork-batch`, priority: 'batch' });
    noteStarted(client.turn(batch.turnId));
    await client.turnResult(batch.turnId);
    expect(startedPriority(await historyOf(batch.turnId))).toEqual({ ...expected, priorityKey: 5 });
  });

  it('keeps its tenant and priority on every run of its hand-overs', async () => {
    const client = weighted();
    const turnId = `tenant-hand-over-${randomUUID()}`;
    const text = Array.from({ length: 24 }, (_, index) => `look up order ${1000 + (index % 3)}`).join(' then ');
    const handle = await client.startTurn({ model: scripted, messages: [{ role: 'user', content: text }], maxSteps: 30, historyLimit: { events: 100 } }, { turnId, tenant: 'globex', priority: 'batch' });
    noteStarted(handle);
    expect((await handle.result()).status).toBe('completed');
    const runs = await runsOf(turnId);
    expect(runs.length).toBeGreaterThan(1);
    await saveRuns(handle, runs);
    for (const runId of runs) {
      expect(await tenantOf(turnId, runId)).toBe('globex');
      const events = await historyOf(turnId, runId);
      expect(startedPriority(events)).toEqual({ priorityKey: 5, fairnessKey: 'globex', fairnessWeight: 0.5 });
      for (const event of events.filter((candidate) => candidate.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)) {
        expect(plain(event.activityTaskScheduledEventAttributes?.priority)).toEqual({ priorityKey: 5, fairnessKey: 'globex', fairnessWeight: 0.5 });
      }
    }
  });

  it("passes the tenant and priority to an agent tool's child turn", async () => {
    const { fake } = suite;
    const client = weighted();
    const turnId = `tenant-agent-${randomUUID()}`;
    fake.script('openai', [{ toolCalls: [{ name: 'research_tenant', input: { target: 'pumps' } }] }, { text: 'the child answers' }, { text: 'the parent answers' }]);
    const handle = await client.startTurn({ model: { provider: 'openai', model: 'gpt-4.1-mini' }, tools: ['research_tenant'], messages: [{ role: 'user', content: 'Research pumps.' }] }, { turnId, tenant: 'acme' });
    noteStarted(handle);
    expect((await handle.result()).status).toBe('completed');
    const expected = { fairnessKey: 'acme', fairnessWeight: 2 };
    const initiated = (await historyOf(turnId)).filter((event) => event.eventType === EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED);
    expect(initiated).toHaveLength(1);
    const child = initiated[0]!.startChildWorkflowExecutionInitiatedEventAttributes!;
    expect(plain(child.priority)).toEqual(expected);
    expect(Object.keys(child.searchAttributes?.indexedFields ?? {})).toContain('TurnpikeTenant');
    noteStarted(suite.turnpike.client.workflow.getHandle(child.workflowId!));
    expect(await tenantOf(child.workflowId!)).toBe('acme');
    const childEvents = await historyOf(child.workflowId!);
    expect(startedPriority(childEvents)).toEqual(expected);
    for (const event of childEvents.filter((candidate) => candidate.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)) {
      expect(plain(event.activityTaskScheduledEventAttributes?.priority)).toEqual(expected);
    }
  });

  it("passes a conversation's tenant and priority to its turns", async () => {
    const client = weighted();
    const conversationId = `tenant-conversation-${randomUUID()}`;
    const sent = await client.sendMessage({ conversationId, conversation: { model: scripted }, text: 'look up order 1001', tenant: 'globex', priority: 'interactive' });
    noteStarted(client.conversation(conversationId));
    noteStarted(client.turn(sent.turnWorkflowId));
    expect((await client.turnResult(sent.turnWorkflowId, { waitForStart: true })).status).toBe('completed');
    const expected = { priorityKey: 1, fairnessKey: 'globex', fairnessWeight: 0.5 };
    expect(startedPriority(await historyOf(conversationId))).toEqual(expected);
    expect(await tenantOf(conversationId)).toBe('globex');
    const initiated = (await historyOf(conversationId)).find((event) => event.eventType === EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED);
    expect(plain(initiated?.startChildWorkflowExecutionInitiatedEventAttributes?.priority)).toEqual(expected);
    expect(await tenantOf(sent.turnWorkflowId)).toBe('globex');
    expect(startedPriority(await historyOf(sent.turnWorkflowId))).toEqual(expected);
  });
});

describe('listings by tenant', () => {
  /** A turn of `tenant` parked on guarded_action, which alice and bob may decide. */
  async function parkedTurn(client: TurnpikeClient, tenant: string): Promise<WorkflowHandle> {
    const handle = await client.startTurn({ model: scripted, messages: [{ role: 'user', content: use('guarded_action', { target: `for-${tenant}`, count: 1 }) }] }, { turnId: `tenant-parked-${tenant}-${randomUUID()}`, tenant });
    noteStarted(handle);
    await waitForPending(handle);
    return handle;
  }

  it('lists one tenant\'s parked calls through the client and, for a caller bound to a tenant, through the HTTP API', async () => {
    const client = weighted();
    const acme = await parkedTurn(client, 'acme');
    const globex = await parkedTurn(client, 'globex');
    const ours = (calls: Array<{ turnWorkflowId: string }>) => calls.filter((call) => [acme.workflowId, globex.workflowId].includes(call.turnWorkflowId)).map((call) => call.turnWorkflowId);

    const all = await until(() => client.listParkedCalls(), (calls) => ours(calls).length === 2);
    expect(ours(all).sort()).toEqual([acme.workflowId, globex.workflowId].sort());
    const onlyAcme = await client.listParkedCalls({ tenant: 'acme' });
    expect(ours(onlyAcme)).toEqual([acme.workflowId]);
    expect(onlyAcme.find((call) => call.turnWorkflowId === acme.workflowId)?.tenant).toBe('acme');

    // alice (bound to acme) and bob (bound to globex) may both decide guarded_action; each sees their own tenant's.
    const listed = async (token: string) => {
      const response = await fetch(`${suite.base}/api/approvals`, { headers: { authorization: `Bearer ${token}` } });
      expect(response.status).toBe(200);
      return ours(((await response.json()) as { calls: Array<{ turnWorkflowId: string }> }).calls);
    };
    expect(await listed('alice-token')).toEqual([acme.workflowId]);
    expect(await listed('bob-token')).toEqual([globex.workflowId]);
    // A turn of another tenant is not found for a bound caller.
    const read = await fetch(`${suite.base}/api/turns/${encodeURIComponent(globex.workflowId)}`, { headers: { authorization: 'Bearer alice-token' } });
    expect(read.status).toBe(404);

    for (const handle of [acme, globex]) await handle.terminate('done with the listing');
  });

  it('starts a turn through the HTTP API for the caller\'s tenant, and for the body\'s only from an admin', async () => {
    const start = (token: string, body: Record<string, unknown>) =>
      fetch(`${suite.base}/api/turns`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const input = { model: scripted, messages: [{ role: 'user', content: 'look up order 1001' }] };

    const mine = `tenant-http-${randomUUID()}`;
    expect((await start('alice-token', { turnId: mine, input, priority: 'interactive' })).status).toBe(201);
    noteStarted(suite.client.turn(mine));
    expect(await tenantOf(mine)).toBe('acme');
    expect(startedPriority(await historyOf(mine))).toEqual({ priorityKey: 1, fairnessKey: 'acme' });

    const forOther = `tenant-http-${randomUUID()}`;
    expect((await start('ops-token', { turnId: forOther, input, tenant: 'initech' })).status).toBe(201);
    noteStarted(suite.client.turn(forOther));
    expect(await tenantOf(forOther)).toBe('initech');
  });
});

describe('bad input', () => {
  it('refuses an unknown priority and an over-long tenant through the client, and starts nothing', async () => {
    const client = weighted();
    const input = { model: scripted, messages: [{ role: 'user' as const, content: 'look up order 1001' }] };
    const cases = [
      { options: { priority: 'urgent' as never }, message: /unknown priority "urgent"; use one of interactive, normal, batch/ },
      { options: { tenant: 'é'.repeat(33) }, message: /tenant is 66 bytes long; Temporal's fairness keys take at most 64 bytes/ },
    ];
    for (const { options, message } of cases) {
      const turnId = `tenant-bad-${randomUUID()}`;
      const error = await client.startTurn(input, { turnId, ...options }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(TurnpikeRejectedError);
      expect((error as TurnpikeRejectedError).type).toBe('InvalidRequest');
      expect((error as Error).message).toMatch(message);
      expect(await client.turn(turnId).describe().then(() => 'started', () => 'not started')).toBe('not started');

      const conversationId = `tenant-bad-conversation-${randomUUID()}`;
      const refused = await client.sendMessage({ conversationId, conversation: { model: scripted }, text: 'hello', ...options }).catch((caught: unknown) => caught);
      expect((refused as Error).message).toMatch(message);
      expect(await client.conversation(conversationId).describe().then(() => 'started', () => 'not started')).toBe('not started');
    }
    expect(() => new TurnpikeClient({ client: suite.turnpike.client, tenantWeights: { acme: 0 } })).toThrow(/weight 0; a fairness weight is a number from 0.001 to 1000/);
  });

  it('refuses through the HTTP API a body\'s tenant from a caller who may not set it, an unknown priority and an over-long tenant, and starts nothing', async () => {
    const input = { model: scripted, messages: [{ role: 'user', content: 'look up order 1001' }] };
    const cases = [
      { token: 'alice-token', body: { tenant: 'globex' }, message: /tenant may not be set in the request body: this caller is bound to tenant "acme"/ },
      { token: 'ops-token', body: { priority: 'urgent' }, message: /unknown priority "urgent"/ },
      { token: 'ops-token', body: { tenant: 'x'.repeat(65) }, message: /tenant is 65 bytes long/ },
    ];
    for (const { token, body, message } of cases) {
      const turnId = `tenant-http-bad-${randomUUID()}`;
      const response = await fetch(`${suite.base}/api/turns`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ turnId, input, ...body }) });
      expect(response.status).toBe(400);
      const { error } = (await response.json()) as { error: { type: string; message: string } };
      expect(error.type).toBe('InvalidRequest');
      expect(error.message).toMatch(message);
      expect(await suite.client.turn(turnId).describe().then(() => 'started', () => 'not started')).toBe('not started');
      expect(executionsOf(turnId)).toEqual([]);
    }
    const conversationId = `tenant-http-bad-${randomUUID()}`;
    const response = await fetch(`${suite.base}/api/conversations/${conversationId}/messages`, { method: 'POST', headers: { authorization: 'Bearer bob-token', 'content-type': 'application/json' }, body: JSON.stringify({ text: 'hello', tenant: 'acme' }) });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(/bound to tenant "globex"/);
    expect(await suite.client.conversation(conversationId).describe().then(() => 'started', () => 'not started')).toBe('not started');
  });
});
