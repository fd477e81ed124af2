/**
 * A turn seen as an MCP task (specification 2025-11-25): its status, the status message that
 * says what waits and for whom, and its answer as a tool result. Everything is read from the turn
 * through the TurnpikeClient, so any API process answers for any task, after a restart too.
 *
 * | turn status                                            | MCP task status  |
 * | ------------------------------------------------------ | ---------------- |
 * | running                                                | working          |
 * | awaiting-input: approvals and budget approvals only    | working (status message: what waits, for whom) |
 * | awaiting-input: a client tool or an MCP question waits | input_required (status message: the question) |
 * | completed                                              | completed        |
 * | cancelled                                              | cancelled        |
 * | refused, max-steps, max-tokens, invalid-output, budget-exceeded | failed  |
 *
 * An approval is `working`: in the specification `input_required` means that the receiver needs
 * input from the requestor, who should then call `tasks/result` to receive the input requests;
 * an approval is decided by its approvers through turnpike, and no request waits for the MCP
 * client in `tasks/result` (a client that knows tasks would call it and block there).
 */
import type { CallToolResult, Task } from '@modelcontextprotocol/sdk/types.js';
import type { TurnpikeClient } from '../../client/turnpike-client.js';
import { isTurnEnded, type TurnStatus } from '../../workflows/types/turn-statuses.js';
import type { AgentTurnResult, PendingToolCall, TurnState } from '../../workflows/types/index.js';

type TaskStatus = Task['status'];

function endedStatus(status: TurnStatus): TaskStatus {
  if (status === 'completed') return 'completed';
  if (status === 'cancelled') return 'cancelled';
  return 'failed';
}

/** One parked call in words: what waits, for whom, until when. */
export function describeWait(call: PendingToolCall): string {
  const who = [...(call.approvers ?? []), ...(call.approverGroups ?? []).map((group) => `group ${group}`)];
  const whom = who.length > 0 ? ` from ${who.join(' or ')}` : '';
  switch (call.kind) {
    case 'approval':
      return `${call.toolName} (call ${call.toolCallId}) waits for approval${whom} until ${call.expiresAt}`;
    case 'budget':
      return `the turn reached its budget and waits for a decision to extend it${whom}`;
    case 'client-tool':
      return `${call.toolName} (call ${call.toolCallId}) waits for the client's result`;
    case 'elicitation':
      return `${call.toolName} (call ${call.toolCallId}) asks: ${call.message ?? ''}`;
  }
}

/** What the task's status and message are while the turn has not ended. */
function liveStatus(state: TurnView): { status: TaskStatus; statusMessage?: string } {
  if (state.status !== 'awaiting-input' || state.pending.length === 0) return { status: 'working' };
  const forTheUser = state.pending.some((call) => call.kind === 'client-tool' || call.kind === 'elicitation');
  const answer = forTheUser ? ' Answer through turnpike: POST /api/turns/<task id>/tool-results/<call>.' : ' Decided through turnpike (the dashboard, Slack or POST /api/turns/<task id>/approvals/<approvalId>).';
  return { status: forTheUser ? 'input_required' : 'working', statusMessage: `Waiting: ${state.pending.map(describeWait).join('; ')}.${answer}` };
}

/** What a task's status is made of: the turn's status and its parked calls (`turnState`, or a listing's memo). */
export type TurnView = Pick<TurnState, 'status' | 'pending'>;

export interface TaskTimes {
  createdAt: Date;
  /** When the turn ended, if it did. */
  closedAt?: Date;
}

/** The task as the turn has it now. `ttl` is null: an ended turn lasts for the namespace's retention. */
export function taskFrom(taskId: string, times: TaskTimes, state: TurnView, pollInterval: number): Task {
  const ended = isTurnEnded(state.status);
  const { status, statusMessage } = ended ? { status: endedStatus(state.status), statusMessage: state.status === 'completed' ? undefined : `The turn ended ${state.status}.` } : liveStatus(state);
  return {
    taskId,
    status,
    ...(statusMessage !== undefined ? { statusMessage } : {}),
    createdAt: times.createdAt.toISOString(),
    lastUpdatedAt: (times.closedAt ?? new Date()).toISOString(),
    ttl: null,
    ...(ended ? {} : { pollInterval }),
  };
}

/** The turn's answer as the tool's result: its text, and a typed answer that is an object as structured content. */
export function toolResultFrom(turnId: string, result: AgentTurnResult): CallToolResult {
  const output = result.output;
  const structured = output !== null && typeof output === 'object' && !Array.isArray(output) ? (output as Record<string, unknown>) : undefined;
  const text = result.status === 'completed' ? result.text : `The turn ended ${result.status}.${result.text ? ` ${result.text}` : ''}`;
  return {
    content: [{ type: 'text', text }],
    ...(structured ? { structuredContent: structured } : {}),
    ...(result.status !== 'completed' ? { isError: true } : {}),
    _meta: { 'turnpike/turn': { turnId, status: result.status, steps: result.steps } },
  };
}

/** Reads the task of a turn: its times from the workflow's description, its state by query. */
export async function readTask(client: TurnpikeClient, taskId: string, pollInterval: number): Promise<Task> {
  const description = await client.turn(taskId).describe();
  const state = await client.turnState(taskId);
  return taskFrom(taskId, { createdAt: description.startTime, ...(description.closeTime ? { closedAt: description.closeTime } : {}) }, state, pollInterval);
}
