/**
 * One Chat Completions step streamed (`stream: true`) through the SDK's `ChatCompletionStream`,
 * which assembles the chunks into the same `ChatCompletion` a non-streaming call returns; the
 * chunks' text and tool-call argument pieces are handed to the turn's listener as they arrive.
 */
import type OpenAI from 'openai';
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import type { ProviderCallOptions } from './errors.js';
import { deltaEmitter } from './emit-delta.js';

/**
 * Streams one step and returns the assembled completion. `stream_options.include_usage` asks for
 * the final usage chunk, so the streamed result carries the same token counts as a plain call.
 * Errors are the SDK's, unclassified: the caller maps them (see `toStreamFailure`).
 */
export async function streamChatCompletion(client: OpenAI, params: ChatCompletionCreateParamsNonStreaming, options: ProviderCallOptions): Promise<ChatCompletion> {
  const stream = client.chat.completions.stream({ ...params, stream: true, stream_options: { include_usage: true } }, { signal: options.signal });
  const emit = deltaEmitter(options.onDelta);
  const tracker = new ToolCallTracker(emit);
  stream.on('chunk', (chunk: ChatCompletionChunk) => {
    const delta = chunk.choices?.find((choice) => choice.index === 0)?.delta;
    if (!delta) return;
    if (delta.content) emit({ type: 'text-delta', text: delta.content });
    for (const call of delta.tool_calls ?? []) tracker.add(call);
  });
  // Rejects with the stream's error, whenever it happened; the SDK checks that every choice ended
  // with a finish_reason, so a stream cut off before its end is not taken for a whole reply.
  return (await stream.finalChatCompletion()) as ChatCompletion;
}

type ToolCallChunk = NonNullable<ChatCompletionChunk.Choice.Delta['tool_calls']>[number];

/**
 * Tool calls stream keyed by `index`: the first piece of a call carries its id and name. Some
 * OpenAI-compatible servers send the id late, so argument pieces wait until the call is named.
 */
class ToolCallTracker {
  private readonly calls = new Map<number, { id?: string; name: string; pending: string[] }>();

  constructor(private readonly emit: ReturnType<typeof deltaEmitter>) {}

  add(chunk: ToolCallChunk): void {
    let call = this.calls.get(chunk.index);
    if (!call) this.calls.set(chunk.index, (call = { name: '', pending: [] }));
    if (chunk.function?.name && !call.name) call.name = chunk.function.name;
    if (chunk.function?.arguments) call.pending.push(chunk.function.arguments);
    if (call.id === undefined && chunk.id) {
      call.id = chunk.id;
      this.emit({ type: 'tool-input-start', toolCallId: call.id, toolName: call.name });
    }
    if (call.id === undefined) return;
    for (const piece of call.pending.splice(0)) this.emit({ type: 'tool-input-delta', toolCallId: call.id, inputTextDelta: piece });
  }
}
