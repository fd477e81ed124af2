/**
 * `tasks/list`: the caller's own MCP tasks (turns it started through this endpoint's agents),
 * in the visibility store's order, at most `MAX_LISTED_TASKS`, in one page. Made from the visibility listing alone
 * (the turn's `AgentTurnStatus` search attribute, who started it and its parked calls from its
 * memo): no query per turn, so a listing costs the same whatever the turns are doing.
 */
import type { Task } from '@modelcontextprotocol/sdk/types.js';
import { STARTED_BY_MEMO_KEY } from '../../client/listings.js';
import { AGENT_TURN_WORKFLOW } from '../../workflows/messages/definitions.js';
import { PENDING_MEMO_KEY, readPendingMemo } from '../../workflows/context/pending-memo.js';
import { agentTurnStatusKey } from '../../workflows/context/search-attributes.js';
import { TURN_STATUSES, type TurnStatus } from '../../workflows/types/turn-statuses.js';
import type { PendingToolCall } from '../../workflows/types/index.js';
import type { Caller } from '../auth.js';
import type { RouteContext } from '../route-context.js';
import { mcpTaskPrefix } from './mcp-agents.js';
import { taskFrom } from './mcp-task-view.js';

export const MAX_LISTED_TASKS = 100;

export async function listCallersTasks(routes: RouteContext, caller: Caller, agents: string[], pollInterval: number): Promise<Task[]> {
  const prefixes = agents.map((name) => `WorkflowId STARTS_WITH "${mcpTaskPrefix(name)}"`).join(' OR ');
  const query = `WorkflowType="${AGENT_TURN_WORKFLOW}" AND TaskQueue="${routes.client.taskQueue}" AND (${prefixes})`;
  const tasks: Task[] = [];
  for await (const execution of routes.client.client.workflow.list({ query, pageSize: 1_000 })) {
    if (execution.memo?.[STARTED_BY_MEMO_KEY] !== caller.identity) continue;
    const attribute = execution.typedSearchAttributes.get(agentTurnStatusKey);
    const status: TurnStatus = attribute && Object.hasOwn(TURN_STATUSES, attribute) ? (attribute as TurnStatus) : execution.status.name === 'RUNNING' ? 'running' : 'cancelled';
    const pending = (readPendingMemo(execution.memo?.[PENDING_MEMO_KEY])?.calls ?? []) as PendingToolCall[];
    tasks.push(taskFrom(execution.workflowId, { createdAt: execution.startTime, ...(execution.closeTime ? { closedAt: execution.closeTime } : {}) }, { status, pending: status === 'awaiting-input' ? pending : [] }, pollInterval));
    if (tasks.length >= MAX_LISTED_TASKS) break;
  }
  return tasks;
}
