/**
 * A Messages API reply as the API streams it (`stream: true`): `message_start` (the message with
 * empty content and the input usage), a `ping`, then per content block `content_block_start`,
 * its deltas (`text_delta`; `thinking_delta` then one `signature_delta`; `input_json_delta`,
 * the first with empty `partial_json`, for `tool_use` and `server_tool_use`; `citations_delta`s
 * before a cited text's `text_delta`s; none for `redacted_thinking` or a server tool's result
 * block, which comes whole) and `content_block_stop`,
 * then `message_delta` with the stop reason and the cumulative usage, then `message_stop`.
 */
import type { Json } from './server.js';
import { jsonPieces, textPieces, type SSEFrame } from './sse.js';

/** The frames for `message`, a non-streaming Messages API body the fake built for the same reply. */
export function anthropicStreamFrames(message: Json): SSEFrame[] {
  const frame = (event: string, data: Json): SSEFrame => ({ event, data: { type: event, ...data } });
  const { usage } = message;
  const frames: SSEFrame[] = [
    frame('message_start', {
      message: {
        ...message,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        // The container comes with message_delta.
        ...(message.container ? { container: null } : {}),
        usage: {
          input_tokens: usage.input_tokens,
          cache_creation_input_tokens: usage.cache_creation_input_tokens,
          cache_read_input_tokens: usage.cache_read_input_tokens,
          output_tokens: 1,
          service_tier: usage.service_tier,
        },
      },
    }),
    frame('ping', {}),
  ];
  message.content.forEach((block: Json, index: number) => {
    const delta = (data: Json) => frames.push(frame('content_block_delta', { index, delta: data }));
    switch (block.type) {
      case 'text':
        // A cited text block starts with no citations; each comes as a citations_delta first.
        frames.push(frame('content_block_start', { index, content_block: block.citations ? { citations: [], type: 'text', text: '' } : { type: 'text', text: '' } }));
        for (const citation of block.citations ?? []) delta({ type: 'citations_delta', citation });
        for (const piece of textPieces(block.text)) delta({ type: 'text_delta', text: piece });
        break;
      case 'thinking':
        frames.push(frame('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } }));
        for (const piece of textPieces(block.thinking)) delta({ type: 'thinking_delta', thinking: piece });
        delta({ type: 'signature_delta', signature: block.signature });
        break;
      case 'redacted_thinking':
        frames.push(frame('content_block_start', { index, content_block: block }));
        break;
      case 'tool_use':
      case 'server_tool_use':
        frames.push(frame('content_block_start', { index, content_block: { type: block.type, id: block.id, name: block.name, input: {} } }));
        for (const piece of ['', ...jsonPieces(JSON.stringify(block.input))]) delta({ type: 'input_json_delta', partial_json: piece });
        break;
      default:
        // A server tool's result block (web_search_tool_result, …) comes whole, with no deltas.
        if (typeof block.tool_use_id === 'string' && String(block.type).endsWith('_tool_result')) {
          frames.push(frame('content_block_start', { index, content_block: block }));
          break;
        }
        throw new Error(`fake provider: cannot stream a ${String(block.type)} block`);
    }
    frames.push(frame('content_block_stop', { index }));
  });
  frames.push(
    frame('message_delta', {
      delta: { stop_reason: message.stop_reason, stop_sequence: message.stop_sequence, ...(message.container ? { container: message.container } : {}) },
      usage: {
        input_tokens: usage.input_tokens,
        cache_creation_input_tokens: usage.cache_creation_input_tokens,
        cache_read_input_tokens: usage.cache_read_input_tokens,
        output_tokens: usage.output_tokens,
        ...(usage.output_tokens_details ? { output_tokens_details: usage.output_tokens_details } : {}),
        ...(usage.server_tool_use ? { server_tool_use: usage.server_tool_use } : {}),
      },
    }),
    frame('message_stop', {}),
  );
  return frames;
}

/** What api.anthropic.com sends mid-stream when it is overloaded after the response began. */
export const ANTHROPIC_STREAM_ERROR: SSEFrame = { event: 'error', data: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } };
