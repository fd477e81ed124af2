/**
 * One Messages API request streamed (`stream: true`) through the SDK's `MessageStream`, which
 * assembles the events into the same `Message` a non-streaming call returns (thinking signatures
 * and cumulative usage included); text, thinking and tool-input pieces are handed to the turn's
 * listener as they arrive.
 */
import type Anthropic from '@anthropic-ai/sdk';
import type { Message, MessageCreateParamsNonStreaming, MessageStreamEvent } from '@anthropic-ai/sdk/resources/messages';
import type { ProviderCallOptions } from './errors.js';
import { deltaEmitter } from './emit-delta.js';

/** What a step needs of a client: `Anthropic`'s, or a cloud's (`AnthropicBedrock`, `AnthropicVertex`). */
export interface AnthropicMessagesClient {
  messages: Pick<Anthropic['messages'], 'create' | 'stream'>;
}

/**
 * Streams one request and returns the assembled message. The SDK's `finalMessage()` rejects when
 * the stream ended without `message_stop`, so a reply cut off part-way is never taken for a whole one.
 * Errors are the SDK's, unclassified: the caller maps them (see `toStreamFailure`).
 */
export async function streamAnthropicMessage(client: AnthropicMessagesClient, params: MessageCreateParamsNonStreaming, options: ProviderCallOptions): Promise<Message> {
  const stream = client.messages.stream(params, { signal: options.signal });
  const emit = deltaEmitter(options.onDelta);
  /** Tool-use ids by content block index: the deltas name only the index. */
  const toolUses = new Map<number, string>();
  stream.on('streamEvent', (event: MessageStreamEvent) => {
    if (event.type === 'content_block_start' && event.content_block.type === 'tool_use') {
      toolUses.set(event.index, event.content_block.id);
      emit({ type: 'tool-input-start', toolCallId: event.content_block.id, toolName: event.content_block.name });
    } else if (event.type === 'content_block_delta') {
      const { delta } = event;
      if (delta.type === 'text_delta') emit({ type: 'text-delta', text: delta.text });
      else if (delta.type === 'thinking_delta') emit({ type: 'reasoning-delta', text: delta.thinking });
      else if (delta.type === 'input_json_delta' && delta.partial_json !== '') {
        const toolCallId = toolUses.get(event.index);
        if (toolCallId !== undefined) emit({ type: 'tool-input-delta', toolCallId, inputTextDelta: delta.partial_json });
      }
    }
  });
  return stream.finalMessage();
}
