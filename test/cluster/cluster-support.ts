/**
 * What the cluster test's parts share: starting a turn on the cluster's task queue, reading
 * visibility listings (SQL visibility is updated asynchronously, so callers poll), and the
 * checks and diagnostics on turns.
 */
import type { Client, WorkflowHandle } from '@temporalio/client';
export { everyCallAnsweredOnce } from '../support/call-pairs.js';
import { turnStateQuery, type agentTurn, type AgentTurnInput, type DocumentPart, type TurnState } from '../../client/index.js';

export const TASK_QUEUE = 'cluster';

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function startTurn(client: Client, workflowId: string, text: string, extra: Partial<AgentTurnInput> = {}, document?: DocumentPart): Promise<WorkflowHandle<typeof agentTurn>> {
  return client.workflow.start<typeof agentTurn>('agentTurn', {
    taskQueue: TASK_QUEUE,
    workflowId,
    args: [{
      model: { provider: 'scripted', model: 'demo' },
      messages: [{ role: 'user', content: document ? [{ type: 'text', text }, document] : text }],
      // A model call whose attempt is lost — its worker SIGKILLed, or the poll reply carrying it
      // lost while the server restarts — is retried only when its start-to-close timeout passes:
      // 5 minutes by default, for slow LLMs. The scripted model answers at once, so 10s here.
      modelCallOptions: { startToCloseTimeout: '10s', retry: { initialInterval: '200ms', maximumAttempts: 20 } },
      ...extra,
    }],
  });
}

export async function pendingOf(handle: WorkflowHandle<typeof agentTurn>, count = 1): Promise<TurnState['pending']> {
  for (let attempt = 0; attempt < 300; attempt++) {
    const state = await handle.query(turnStateQuery).catch(() => undefined);
    if (state && state.pending.length >= count) return state.pending;
    await sleep(100);
  }
  throw new Error(`${handle.workflowId} never parked ${count} call(s)`);
}

/** Workflow ids a visibility query lists. */
export async function listIds(client: Client, query: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const execution of client.workflow.list({ query, pageSize: 500 })) ids.push(execution.workflowId);
  return ids.sort();
}

export async function eventually<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value: T | undefined;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      value = await read();
      if (done(value)) return value;
    } catch (error) {
      lastError = error;
    }
    await sleep(250);
  }
  throw new Error(`never saw ${what}; last: ${JSON.stringify(value)} ${lastError ? String(lastError) : ''}`);
}

/** For a failure message: what the server itself says about turns that visibility does not list. */
export async function diagnose(client: Client, ids: string[], query: string): Promise<string> {
  const listed = new Set(await listIds(client, query).catch(() => []));
  const missing = ids.filter((id) => !listed.has(id)).slice(0, 5);
  const reports = await Promise.all(
    missing.map(async (id) => {
      const handle = client.workflow.getHandle(id);
      const description = await handle.describe().catch((error: unknown) => String(error));
      if (typeof description === 'string') return `${id}: ${description}`;
      const history = await handle.fetchHistory().catch(() => undefined);
      const lastEvents = (history?.events ?? []).slice(-6).map((event) => `${event.eventId}:${event.eventType}`).join(' ');
      const raw = description.raw;
      return `${id}: ${description.status.name}, search attributes ${JSON.stringify(description.searchAttributes)}, pending activities ${JSON.stringify(raw.pendingActivities?.map((activity) => ({ type: activity.activityType?.name, state: activity.state, attempt: activity.attempt, failure: activity.lastFailure?.message })))}, pending workflow task ${JSON.stringify(raw.pendingWorkflowTask ? { state: raw.pendingWorkflowTask.state, attempt: raw.pendingWorkflowTask.attempt } : null)}, last events ${lastEvents}`;
    }),
  );
  return `not listed by ${query}: ${ids.filter((id) => !listed.has(id)).length}\n${reports.join('\n')}`;
}
