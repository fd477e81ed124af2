/**
 * Every update, signal and query of turnpike's workflows, defined once. The workflows, the
 * client and the tests import these; nothing sends a message by a string literal.
 * Side-effect free, so Node code can import it as well as workflow code.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type {
  ApproveToolCallInput,
  ApproveToolCallResult,
  SubmitToolResultInput,
  SubmitToolResultResult,
  TurnState,
} from './types.js';

/** Workflow type names, as operators see them in the Temporal CLI and Web UI. */
export const AGENT_TURN_WORKFLOW = 'agentTurn';
export const DEFAULT_TASK_QUEUE = 'turnpike';

/**
 * An update, not only a signal, because a dashboard must learn at once whether its
 * decision was accepted (unknown id, already decided, input edited into something invalid).
 */
export const approveToolCallUpdate = defineUpdate<ApproveToolCallResult, [ApproveToolCallInput]>('approveToolCall');
/** The same decision fire-and-forget, for `temporal workflow signal`. Invalid ones are logged and ignored. */
export const approveToolCallSignal = defineSignal<[ApproveToolCallInput]>('approveToolCall');

export const submitToolResultUpdate = defineUpdate<SubmitToolResultResult, [SubmitToolResultInput]>('submitToolResult');
export const submitToolResultSignal = defineSignal<[SubmitToolResultInput]>('submitToolResult');

export const turnStateQuery = defineQuery<TurnState>('turnState');
