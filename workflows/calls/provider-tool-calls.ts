/**
 * Hosted tools the provider ran itself within a model step (`ProviderToolPart`): the turn never
 * runs or parks them, but records each in `toolCalls` and shows it on its stream like any other
 * call. Pure helpers: no commands.
 */
import type { AssistantMessage, ProviderToolPart, ToolCallRecord } from '../types/index.js';
import type { TurnEvent } from '../types/turn-events.js';

/** The step's hosted tool calls, in the order the model made them. */
export function providerToolParts(message: AssistantMessage): ProviderToolPart[] {
  return message.content.filter((part): part is ProviderToolPart => part.type === 'provider-tool');
}

/** A hosted call as the turn's result reports it: run by the provider, with its one result. */
export function providerToolRecord(part: ProviderToolPart): ToolCallRecord {
  return {
    toolCallId: part.toolCallId,
    toolName: part.toolName,
    input: part.input ?? null,
    outcome: part.isError ? 'error' : 'executed',
    output: part.output ?? null,
    isError: part.isError === true,
    executedBy: 'provider',
  };
}

/** A hosted call as the turn's stream shows it. */
export function providerToolEvent(part: ProviderToolPart, step: number): Extract<TurnEvent, { type: 'provider-tool' }> {
  return {
    type: 'provider-tool',
    step,
    toolCallId: part.toolCallId,
    toolName: part.toolName,
    input: part.input ?? null,
    output: part.output ?? null,
    isError: part.isError === true,
    ...(part.sources?.length ? { sources: part.sources } : {}),
  };
}
