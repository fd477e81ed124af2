/**
 * What a follow-up message on a parked A2A task answers, and how each answer reaches the turn:
 * a data part `{ approvalId, approved, reason? }` decides an approval (the way the decision route
 * sends one, api/send-decision.ts); a data part `{ toolCallId, output, isError? }` answers a client
 * tool or an MCP server's question (the way `POST /api/turns/:id/tool-results/:toolCallId` does,
 * with `TurnpikeClient.submitToolResult`). Every part is read, and every result checked against
 * what the turn has parked, before anything is sent: a malformed part, an unknown `toolCallId` or
 * one whose call waits for something else refuses the whole message and changes nothing.
 */
import type { Message } from '@a2a-js/sdk';
import { RequestMalformedError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import { TurnpikeNotFoundError, TurnpikeRejectedError } from '../../client/errors.js';
import type { PendingToolCall } from '../../workflows/types/index.js';
import type { Caller } from '../auth.js';
import type { RouteContext } from '../route-context.js';
import { sendDecision } from '../send-decision.js';

export type A2aAnswer = { approvalId: string; approved: boolean; reason?: string } | { toolCallId: string; output: unknown; isError?: boolean };

const DECISION_SHAPE = '{ "approvalId": string, "approved": boolean, "reason"?: string }';
const RESULT_SHAPE = '{ "toolCallId": string, "output": <JSON>, "isError"?: boolean }';
/** The kinds of parked call a `{ toolCallId, output }` answers; the others are decided by `approvalId`. */
const ANSWERED_BY_RESULT = new Set<PendingToolCall['kind']>(['client-tool', 'elicitation']);

/** The answers a follow-up's data parts carry, in order; other parts are not read. */
export function answersOf(message: Message, taskId: string): A2aAnswer[] {
  const answers = message.parts.map((part) => (part.content?.$case === 'data' ? answerOf(part.content.value) : undefined)).filter((answer) => answer !== undefined);
  if (answers.length === 0) throw new RequestMalformedError({ message: `Task ${taskId} takes answers only: send a data part ${DECISION_SHAPE} for an approval, or ${RESULT_SHAPE} for a client tool or a question` });
  const results = answers.filter((answer) => 'toolCallId' in answer).map((answer) => answer.toolCallId);
  const twice = results.find((toolCallId, index) => results.indexOf(toolCallId) !== index);
  if (twice !== undefined) throw new RequestMalformedError({ message: `The message answers toolCallId ${JSON.stringify(twice)} twice` });
  return answers;
}

/** Refuses a result for a call the turn has not parked as a client tool or a question. */
export function checkResults(answers: readonly A2aAnswer[], pending: readonly PendingToolCall[], taskId: string): void {
  for (const answer of answers) {
    if (!('toolCallId' in answer)) continue;
    const call = pending.find((waiting) => waiting.toolCallId === answer.toolCallId);
    if (!call) throw new RequestMalformedError({ message: `No client tool or question with toolCallId ${JSON.stringify(answer.toolCallId)} waits in task ${taskId}` });
    if (!ANSWERED_BY_RESULT.has(call.kind)) throw new RequestMalformedError({ message: `Call ${JSON.stringify(answer.toolCallId)} waits for a decision (kind ${call.kind}): answer it with ${DECISION_SHAPE}` });
  }
}

/** Sends each answer to the turn in order; a turn's refusal is the protocol's error, with its type. */
export async function sendAnswers(routes: Pick<RouteContext, 'client' | 'listing'>, caller: Caller, taskId: string, answers: readonly A2aAnswer[]): Promise<void> {
  for (const answer of answers) {
    try {
      if ('approvalId' in answer) {
        const { approvalId, ...decision } = answer;
        await sendDecision(routes, caller, taskId, approvalId, decision);
      } else {
        await routes.client.submitToolResult(taskId, answer);
        routes.listing.changed();
      }
    } catch (error) {
      if (error instanceof TurnpikeRejectedError) throw new UnsupportedOperationError({ message: `${error.type}: ${error.message}`, metadata: { type: error.type } });
      if (error instanceof TurnpikeNotFoundError) throw new RequestMalformedError({ message: error.message });
      throw error;
    }
  }
}

/** A decision (it names an `approvalId`), a result (it names a `toolCallId`), or no answer. */
function answerOf(value: unknown): A2aAnswer | undefined {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const fields = value as Record<string, unknown>;
  if ('approvalId' in fields) {
    const { approvalId, approved, reason } = fields;
    if (typeof approvalId !== 'string' || approvalId === '' || typeof approved !== 'boolean' || (reason !== undefined && typeof reason !== 'string')) {
      throw new RequestMalformedError({ message: `A decision is ${DECISION_SHAPE}` });
    }
    return { approvalId, approved, ...(reason !== undefined ? { reason } : {}) };
  }
  if ('toolCallId' in fields) {
    const { toolCallId, output, isError, ...rest } = fields;
    if (typeof toolCallId !== 'string' || toolCallId === '' || !('output' in fields) || output === undefined || (isError !== undefined && typeof isError !== 'boolean') || Object.keys(rest).length > 0) {
      throw new RequestMalformedError({ message: `A client tool's result or a question's answer is ${RESULT_SHAPE}` });
    }
    return { toolCallId, output, ...(isError !== undefined ? { isError } : {}) };
  }
  return undefined;
}
