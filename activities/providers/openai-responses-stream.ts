/**
 * One Responses API request streamed (`stream: true`) through the SDK's `ResponseStream`. The
 * result is the `Response` the API sends in its terminal event (`response.completed`,
 * `response.incomplete` or `response.failed`): the very object a non-streaming call returns,
 * reasoning items with their encrypted content included, so both go through the same conversion.
 * Summary text, output text and function-call argument pieces are handed to the turn's listener
 * as they arrive.
 */
import type OpenAI from 'openai';
import { APIError, OpenAIError } from 'openai';
import type { Response, ResponseCreateParamsNonStreaming, ResponseErrorEvent, ResponseStreamEvent } from 'openai/resources/responses/responses';
import type { ProviderCallOptions } from './errors.js';
import { deltaEmitter } from './emit-delta.js';

const TERMINAL_EVENTS = new Set<ResponseStreamEvent['type']>(['response.completed', 'response.incomplete', 'response.failed']);

/**
 * Streams one request and returns the response of its terminal event. Errors are the SDK's,
 * unclassified, for the caller to map (see `toStreamFailure`), with two gaps of the SDK's stream
 * helper closed here: it resolves with whatever it had assembled when a stream ends early, so a
 * stream without a terminal event is rejected as an `OpenAIError`; and it rejects with the bare
 * event when the API sends `event: error`, which becomes the `APIError` (no status) it stands for.
 */
export async function streamResponse(client: OpenAI, params: ResponseCreateParamsNonStreaming, options: ProviderCallOptions): Promise<Response> {
  const stream = client.responses.stream({ ...params, stream: true }, { signal: options.signal });
  const emit = deltaEmitter(options.onDelta);
  /** Call ids by item id: argument deltas name only the item. */
  const calls = new Map<string, string>();
  let final: Response | undefined;
  let apiError: ResponseErrorEvent | undefined;
  stream.on('event', (event: ResponseStreamEvent) => {
    switch (event.type) {
      case 'response.output_text.delta':
        emit({ type: 'text-delta', text: event.delta });
        break;
      case 'response.reasoning_summary_part.added':
        // The step's reasoning text joins an item's summary parts with a blank line; so do the deltas.
        if (event.summary_index > 0) emit({ type: 'reasoning-delta', text: '\n\n' });
        break;
      case 'response.reasoning_summary_text.delta':
        emit({ type: 'reasoning-delta', text: event.delta });
        break;
      case 'response.output_item.added':
        if (event.item.type === 'function_call') {
          if (event.item.id !== undefined) calls.set(event.item.id, event.item.call_id);
          emit({ type: 'tool-input-start', toolCallId: event.item.call_id, toolName: event.item.name });
        }
        break;
      case 'response.function_call_arguments.delta': {
        const toolCallId = calls.get(event.item_id);
        if (toolCallId !== undefined && event.delta !== '') emit({ type: 'tool-input-delta', toolCallId, inputTextDelta: event.delta });
        break;
      }
      case 'error':
        apiError = event;
        break;
      default:
        if (TERMINAL_EVENTS.has(event.type)) final = (event as { response: Response }).response;
    }
  });
  try {
    await stream.finalResponse();
  } catch (error) {
    if (apiError && !(error instanceof Error)) throw new APIError(undefined, { message: apiError.message, type: apiError.code, code: apiError.code, param: apiError.param }, apiError.message, undefined);
    throw error;
  }
  if (!final) throw new OpenAIError('the stream ended without response.completed');
  return final;
}
