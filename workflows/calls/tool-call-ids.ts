/**
 * Tool call ids must be unique across a conversation: each call gets exactly one result, and
 * Anthropic rejects a history with two `tool_use` blocks of the same id. A model that repeats
 * an id (within a step, or from an earlier one) gets the repeat renamed; the renamed call is
 * answered with an error result and never runs.
 */
import type { AssistantMessage, Message, ToolCallPart } from '../types/index.js';

export function toolCallIdsIn(messages: Message[]): Set<string> {
  const ids = new Set<string>();
  for (const message of messages) {
    if (message.role !== 'assistant') continue;
    for (const part of message.content) if (part.type === 'tool-call') ids.add(part.toolCallId);
  }
  return ids;
}

/**
 * Returns the message with repeated ids renamed (`<id>_dup<n>`), and the renamed ids. `seen`
 * holds every id so far and gains this message's ids.
 */
export function renameRepeatedToolCallIds(message: AssistantMessage, seen: Set<string>): { message: AssistantMessage; renamed: Set<string> } {
  const renamed = new Set<string>();
  const content = message.content.map((part) => {
    if (part.type !== 'tool-call') return part;
    let id = part.toolCallId;
    if (seen.has(id)) {
      let n = 2;
      while (seen.has(`${part.toolCallId}_dup${n}`)) n++;
      id = `${part.toolCallId}_dup${n}`;
      renamed.add(id);
    }
    seen.add(id);
    return id === part.toolCallId ? part : ({ ...part, toolCallId: id } satisfies ToolCallPart);
  });
  return { message: renamed.size > 0 ? { ...message, content } : message, renamed };
}
