/**
 * Bedrock's streamed reply: the Messages API's events, each in a binary AWS event-stream message
 * (`:event-type: chunk`, a JSON payload `{"bytes": <the event, base64>}`), the last one carrying
 * Bedrock's invocation metrics, as `/invoke-with-response-stream` sends them. Encoded with
 * @smithy/eventstream-codec, the codec the AWS SDKs decode them with.
 */
import { EventStreamCodec } from '@smithy/eventstream-codec';

const codec = new EventStreamCodec(
  (bytes) => new TextDecoder().decode(bytes),
  (text) => new TextEncoder().encode(text),
);

/** One Messages API event as Bedrock frames it. */
export function bedrockChunk(event: Record<string, unknown>): Uint8Array {
  const bytes = Buffer.from(JSON.stringify(event)).toString('base64');
  return codec.encode({
    headers: {
      ':event-type': { type: 'string', value: 'chunk' },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'event' },
    },
    body: new TextEncoder().encode(JSON.stringify({ bytes })),
  });
}

/**
 * Reads the Messages API's server-sent events from `sse` as they arrive and yields each as a
 * Bedrock chunk, so a reply the upstream fake holds part-way is held here too.
 */
export async function* sseToBedrockChunks(sse: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const decoder = new TextDecoder();
  let buffered = '';
  let inputTokens = 0;
  let outputTokens = 0;
  for await (const piece of sse as unknown as AsyncIterable<Uint8Array>) {
    buffered += decoder.decode(piece, { stream: true });
    let end: number;
    while ((end = buffered.indexOf('\n\n')) >= 0) {
      const frame = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const data = frame
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart())
        .join('\n');
      if (!data) continue;
      const event = JSON.parse(data) as Record<string, unknown> & { type?: string; message?: { usage?: { input_tokens?: number } }; usage?: { output_tokens?: number } };
      if (event.type === 'message_start') inputTokens = event.message?.usage?.input_tokens ?? 0;
      if (event.type === 'message_delta') outputTokens = event.usage?.output_tokens ?? outputTokens;
      // Bedrock adds its own metrics to the last event.
      yield bedrockChunk(event.type === 'message_stop' ? { ...event, 'amazon-bedrock-invocationMetrics': { inputTokenCount: inputTokens, outputTokenCount: outputTokens, invocationLatency: 1, firstByteLatency: 1 } } : event);
    }
  }
}
