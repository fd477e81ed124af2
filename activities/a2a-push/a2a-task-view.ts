/**
 * A turn seen as an A2A task: its state, the status message that says what waits, and its answer
 * as an artifact, made from what the turn answers (`turnState`, and its result once it ended).
 * Shared by the A2A server (api/a2a/) and the push notifications the worker sends (push-delivery.ts);
 * it loads `@a2a-js/sdk`, so the worker imports it only when it first sends one.
 *
 * | turn status                                            | A2A task state   |
 * | ------------------------------------------------------ | ---------------- |
 * | running                                                | working          |
 * | awaiting-input (approval, budget, client tool, question) | input-required |
 * | completed                                              | completed        |
 * | refused                                                | rejected         |
 * | cancelled                                              | canceled         |
 * | max-steps, max-tokens, invalid-output, budget-exceeded | failed           |
 */
import { Role, TaskState, type Artifact, type Message, type Part, type Task } from '@a2a-js/sdk';
import type { TurnStatus } from '../../workflows/types/turn-statuses.js';
import type { AgentTurnResult, PendingToolCall, TurnState } from '../../workflows/types/index.js';

const STATES: Record<TurnStatus, TaskState> = {
  running: TaskState.TASK_STATE_WORKING,
  'awaiting-input': TaskState.TASK_STATE_INPUT_REQUIRED,
  completed: TaskState.TASK_STATE_COMPLETED,
  refused: TaskState.TASK_STATE_REJECTED,
  cancelled: TaskState.TASK_STATE_CANCELED,
  'max-steps': TaskState.TASK_STATE_FAILED,
  'max-tokens': TaskState.TASK_STATE_FAILED,
  'invalid-output': TaskState.TASK_STATE_FAILED,
  'budget-exceeded': TaskState.TASK_STATE_FAILED,
};

const TERMINAL = new Set([TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_CANCELED, TaskState.TASK_STATE_REJECTED]);
const INTERRUPTED = new Set([TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED]);

export const isTerminal = (task: Task) => TERMINAL.has(task.status!.state);
/** Terminal or interrupted: where a blocking `SendMessage` returns. */
export const isSettled = (task: Task) => isTerminal(task) || INTERRUPTED.has(task.status!.state);

export function textPart(text: string): Part {
  return { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

export function dataPart(value: unknown): Part {
  return { content: { $case: 'data', value }, metadata: undefined, filename: '', mediaType: 'application/json' };
}

export function agentMessage(taskId: string, contextId: string, messageId: string, parts: Part[]): Message {
  return { messageId, contextId, taskId, role: Role.ROLE_AGENT, parts, metadata: undefined, extensions: [], referenceTaskIds: [] };
}

/** One parked call, in words and as data the caller can answer with. */
function describeWait(call: PendingToolCall): string {
  const who = [...(call.approvers ?? []), ...(call.approverGroups ?? []).map((group) => `group ${group}`)];
  const whom = who.length > 0 ? ` by ${who.join(' or ')}` : '';
  switch (call.kind) {
    case 'approval':
      return `${call.toolName} waits for approval${whom} (approvalId ${call.approvalId}, until ${call.expiresAt})`;
    case 'budget':
      return `the turn reached its budget and waits for a decision to extend it${whom} (approvalId ${call.approvalId})`;
    case 'client-tool':
      return `${call.toolName} waits for a client's result (toolCallId ${call.toolCallId})`;
    case 'elicitation':
      return `${call.toolName} asks: ${call.message ?? ''} (toolCallId ${call.toolCallId})`;
  }
}

/** How to answer what waits, by kind: each a data part in a message on the task (api/a2a/a2a-answers.ts). */
function howToAnswer(pending: readonly PendingToolCall[]): string {
  const kinds = new Set(pending.map((call) => call.kind));
  const ways = [
    ...(kinds.has('approval') || kinds.has('budget') ? ['an approval with a data part { "approvalId", "approved", "reason"? }'] : []),
    ...(kinds.has('client-tool') ? ['a client tool with a data part { "toolCallId", "output", "isError"? }'] : []),
    ...(kinds.has('elicitation') ? ['a question with a data part { "toolCallId", "output": { "action": "accept", "content": { … } } or { "action": "decline" } or { "action": "cancel" } }'] : []),
  ];
  return `Answer in a message on this task: ${ways.join('; ')}.`;
}

function waitingMessage(taskId: string, contextId: string, pending: readonly PendingToolCall[]): Message {
  const text = `Waiting: ${pending.map(describeWait).join('; ')}. ${howToAnswer(pending)}`;
  const waits = pending.map((call) => ({
    kind: call.kind,
    toolName: call.toolName,
    toolCallId: call.toolCallId,
    input: call.input,
    expiresAt: call.expiresAt,
    ...(call.approvalId !== undefined ? { approvalId: call.approvalId } : {}),
    ...(call.approvers ? { approvers: call.approvers } : {}),
    ...(call.approverGroups ? { approverGroups: call.approverGroups } : {}),
    ...(call.reason !== undefined ? { reason: call.reason } : {}),
    ...(call.kind === 'elicitation' && call.message !== undefined ? { message: call.message } : {}),
    ...(call.kind === 'elicitation' && call.requestedSchema !== undefined ? { requestedSchema: call.requestedSchema } : {}),
  }));
  return agentMessage(taskId, contextId, `${taskId}/waiting/${pending.map((call) => call.approvalId ?? call.toolCallId).join(',')}`, [textPart(text), dataPart({ waiting: waits })]);
}

function answerArtifact(result: AgentTurnResult): Artifact {
  const parts = [textPart(result.text), ...(result.output !== undefined ? [dataPart(result.output)] : [])];
  return { artifactId: 'answer', name: 'answer', description: `The turn's answer (status ${result.status})`, parts, metadata: undefined, extensions: [] };
}

/** A later task of a context, `<contextId>/turn-<n>` (api/a2a/a2a-contexts.ts). */
const LATER_TASK = /\/turn-\d+$/;

/** The context of a task: its own id for a context's first task (or a task alone), else the first task's. */
export function contextOf(taskId: string): string {
  return taskId.replace(LATER_TASK, '');
}

/**
 * The task as the turn has it now, read the same by the API and by push notifications: its
 * contextId (and its status message's) is its context's, which is its own id unless it is a
 * context's later task.
 */
export function taskFrom(taskId: string, state: TurnState, result?: AgentTurnResult): Task {
  const contextId = contextOf(taskId);
  const status = result?.status ?? state.status;
  const message = status === 'awaiting-input' && state.pending.length > 0 ? waitingMessage(taskId, contextId, state.pending) : result && status !== 'completed' ? agentMessage(taskId, contextId, `${taskId}/ended`, [textPart(`The turn ended ${status}.`)]) : undefined;
  return {
    id: taskId,
    contextId,
    status: { state: STATES[status], message, timestamp: new Date().toISOString() },
    artifacts: result ? [answerArtifact(result)] : [],
    history: [],
    metadata: { turnId: taskId, turnStatus: status, step: state.step },
  };
}

/** What a status shows: the state and the message naming what waits (a stream or a notification goes out when it changes). */
export const shownOf = (task: Task) => JSON.stringify([task.status?.state, task.status?.message?.messageId]);
