/**
 * A model step that did not finish: its reply was cut off by the output token limit or the
 * context window (`length`), or the model refused / a content filter stopped it
 * (`content-filter`). Pure helpers for what the turn does with such a step.
 *
 * The turn ends there, with status `max-tokens` or `refused`, and **none of the step's tool calls
 * runs or parks**, complete-looking or not (hosted calls the provider already ran are recorded and
 * shown as in any step):
 * - a call the limit cut in half may still parse and even pass its schema (Anthropic returns the
 *   partial `input` object of a `tool_use` block; a string value cut short is still a string), so
 *   "the input validates" does not prove the call is whole;
 * - the calls before it may be the first half of a plan the model never finished writing.
 * Each call is answered with a `cancelled` result saying why, so the history the turn returns
 * still has exactly one result per call and is valid input for the next turn, where the model can
 * see what happened and call again.
 *
 * The turn does not continue the reply by itself: a caller that wants more raises
 * `model.maxTokens` or sends a follow-up message.
 */
import type { AssistantMessage, EndedTurnStatus, FinishReason, ToolCallPart } from '../types/index.js';
import { errorSettlement, type Settlement } from '../calls/tool-results.js';

/** The status a turn ends with after a step with this finish reason, if the step was cut off. */
export function cutOffStatus(finishReason: FinishReason): Extract<EndedTurnStatus, 'max-tokens' | 'refused'> | undefined {
  switch (finishReason) {
    case 'length':
      return 'max-tokens';
    case 'content-filter':
      return 'refused';
    default:
      return undefined;
  }
}

/** The result of a tool call in a cut-off step: it never ran, and the model is told why. */
export function cutOffSettlement(status: 'max-tokens' | 'refused', call: Pick<ToolCallPart, 'toolName'>): Settlement {
  return errorSettlement(
    'cancelled',
    status === 'max-tokens'
      ? `The reply was cut off by the output token limit while it held this call to "${call.toolName}", so the call may be incomplete; it did not run.`
      : `The reply was stopped by a refusal or content filter while it held this call to "${call.toolName}"; it did not run.`,
  );
}

/**
 * Whether a reply carries anything for the history. A refusal or content filter may return no
 * content at all; an empty assistant message tells the next turn nothing (and Anthropic refuses
 * empty turns), so it is left out of the history. A hosted tool the provider ran (or began: a
 * call cut off before its result is a failed `provider-tool` part) is content: it was billed, and
 * the turn records it like the hosted calls of any other step.
 */
export function hasContent(message: AssistantMessage): boolean {
  // Reasoning alone is no reply: nothing was said or called, and the turn's text would be empty.
  return message.content.some((part) => part.type === 'tool-call' || part.type === 'provider-tool' || (part.type === 'text' && part.text.trim() !== ''));
}
