/**
 * A Responses API reply as the API streams it (`stream: true`): named SSE events, each with a
 * `sequence_number` counting from 0. `response.created` and `response.in_progress` carry the
 * response with no output yet; then per output item `response.output_item.added` (the item empty:
 * a reasoning item without summary or encrypted content, a message without content, a function
 * call with empty arguments), its pieces, and `response.output_item.done` with the whole item:
 * reasoning summaries as `response.reasoning_summary_part.added`, `…_text.delta`s, `…_text.done`,
 * `…_part.done`; message parts as `response.content_part.added`, `response.output_text.delta`s
 * (or `response.refusal.delta`s), `….done`, `response.content_part.done`; function calls as
 * `response.function_call_arguments.delta`s and `….done`. Last, the whole response in
 * `response.completed`, `response.incomplete` or `response.failed`, as a plain call returns it.
 */
import type { Json } from './server.js';
import { jsonPieces, textPieces, type SSEFrame } from './sse.js';
import { hostedItemFrames } from './openai-hosted-tools.js';

/** The terminal event for each response status that can be streamed. */
const TERMINAL_EVENTS: Record<string, string> = {
  completed: 'response.completed',
  incomplete: 'response.incomplete',
  failed: 'response.failed',
};

/** The frames for `response`, a non-streaming `Response` body the fake built for the same reply. */
export function responsesStreamFrames(response: Json): SSEFrame[] {
  const terminal = TERMINAL_EVENTS[response.status];
  // `cancelled` only happens to background responses, which are retrieved rather than streamed.
  if (terminal === undefined) throw new Error(`fake provider: a ${String(response.status)} response is never streamed`);
  const frames: SSEFrame[] = [];
  const event = (type: string, data: Json) => frames.push({ event: type, data: { type, sequence_number: frames.length, ...data } });
  const started = { ...response, status: 'in_progress', output: [], usage: null, incomplete_details: null, error: null };
  event('response.created', { response: started });
  event('response.in_progress', { response: started });
  response.output.forEach((item: Json, outputIndex: number) => {
    const at = { item_id: item.id, output_index: outputIndex };
    switch (item.type) {
      case 'reasoning': {
        event('response.output_item.added', { output_index: outputIndex, item: { id: item.id, type: 'reasoning', summary: [] } });
        item.summary.forEach((part: Json, summaryIndex: number) => {
          const summary = { ...at, summary_index: summaryIndex };
          event('response.reasoning_summary_part.added', { ...summary, part: { type: 'summary_text', text: '' } });
          for (const piece of textPieces(part.text)) event('response.reasoning_summary_text.delta', { ...summary, delta: piece });
          event('response.reasoning_summary_text.done', { ...summary, text: part.text });
          event('response.reasoning_summary_part.done', { ...summary, part });
        });
        break;
      }
      case 'message': {
        event('response.output_item.added', { output_index: outputIndex, item: { ...item, status: 'in_progress', content: [] } });
        item.content.forEach((part: Json, contentIndex: number) => {
          const content = { ...at, content_index: contentIndex };
          if (part.type === 'output_text') {
            event('response.content_part.added', { ...content, part: { type: 'output_text', annotations: [], logprobs: [], text: '' } });
            for (const piece of textPieces(part.text)) event('response.output_text.delta', { ...content, delta: piece, logprobs: [] });
            event('response.output_text.done', { ...content, text: part.text, logprobs: [] });
          } else {
            event('response.content_part.added', { ...content, part: { type: 'refusal', refusal: '' } });
            for (const piece of textPieces(part.refusal)) event('response.refusal.delta', { ...content, delta: piece });
            event('response.refusal.done', { ...content, refusal: part.refusal });
          }
          event('response.content_part.done', { ...content, part });
        });
        break;
      }
      case 'function_call': {
        event('response.output_item.added', { output_index: outputIndex, item: { ...item, status: 'in_progress', arguments: '' } });
        for (const piece of jsonPieces(item.arguments)) event('response.function_call_arguments.delta', { ...at, delta: piece });
        event('response.function_call_arguments.done', { ...at, name: item.name, arguments: item.arguments });
        break;
      }
      default:
        if (!hostedItemFrames(item, outputIndex, event)) throw new Error(`fake provider: cannot stream a ${String(item.type)} item`);
    }
    event('response.output_item.done', { output_index: outputIndex, item });
  });
  event(terminal, { response });
  return frames;
}

/** What api.openai.com sends when the server fails after the response began; numbered as the event it replaces. */
export function responsesStreamError(sequenceNumber: number): SSEFrame {
  return {
    event: 'error',
    data: { type: 'error', code: 'server_error', message: 'The server had an error while processing your request. Sorry about that!', param: null, sequence_number: sequenceNumber },
  };
}
