/**
 * A Chat Completions reply as the API streams it (`stream: true`): `chat.completion.chunk`
 * objects, the first carrying the role, then content pieces, then each tool call (its id, type
 * and name first, with empty arguments, then argument pieces, all keyed by the call's `index`),
 * then an empty delta with the `finish_reason`; with `stream_options.include_usage` every chunk
 * has `usage: null` and one last chunk with no choices carries the usage; then `data: [DONE]`.
 */
import type { Json } from './server.js';
import { jsonPieces, textPieces, type SSEFrame } from './sse.js';

/** The frames for `completion`, a non-streaming `chat.completion` body the fake built for the same reply. */
export function openAIStreamFrames(completion: Json, request: Json): SSEFrame[] {
  const includeUsage = request?.stream_options?.include_usage === true;
  const choice = completion.choices[0];
  const message = choice.message;
  const chunk = (delta: Json, finishReason: string | null = null): SSEFrame => ({
    data: {
      id: completion.id,
      object: 'chat.completion.chunk',
      created: completion.created,
      model: completion.model,
      service_tier: completion.service_tier,
      system_fingerprint: completion.system_fingerprint,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
      ...(includeUsage ? { usage: null } : {}),
    },
  });
  const frames: SSEFrame[] = [chunk({ role: 'assistant', content: message.content === null ? null : '', refusal: null })];
  for (const piece of textPieces(message.content ?? '')) frames.push(chunk({ content: piece }));
  (message.tool_calls ?? []).forEach((call: Json, index: number) => {
    frames.push(chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] }));
    for (const piece of jsonPieces(call.function.arguments)) frames.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
  });
  frames.push(chunk({}, choice.finish_reason));
  if (includeUsage) {
    const { choices: _choices, ...rest } = chunk({}).data as Json;
    frames.push({ data: { ...rest, choices: [], usage: completion.usage } });
  }
  frames.push({ data: '[DONE]' });
  return frames;
}

/** What api.openai.com sends mid-stream when the server fails after the response began. */
export const OPENAI_STREAM_ERROR: SSEFrame = {
  data: { error: { message: 'The server had an error while processing your request. Sorry about that!', type: 'server_error', param: null, code: null } },
};
