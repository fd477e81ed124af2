/** Transcript checks shared by the crash and cluster tests. */
import type { Message, ToolMessage } from '../../workflows/types/index.js';

/** Every assistant message's tool calls are answered, in order, by the tool message right after it. */
export function everyCallAnsweredOnce(messages: Message[]): boolean {
  return messages.every((message, index) => {
    if (message.role !== 'assistant') return true;
    const ids = message.content.flatMap((part) => (part.type === 'tool-call' ? [part.toolCallId] : []));
    if (ids.length === 0) return true;
    const next = messages[index + 1] as ToolMessage | undefined;
    return next?.role === 'tool' && JSON.stringify(next.content.map((part) => part.toolCallId)) === JSON.stringify(ids);
  });
}
