/**
 * The fake OpenAI server the benchmark's HTTP-backed systems talk to: turnpike with its
 * `openai` provider and `@temporalio/ai-sdk` with `@ai-sdk/openai`. It is the test suite's
 * strict fake (test/fake-provider/server.ts: every request validated as the real API would),
 * answering as turnpike's `scripted` model does, so that every system makes the same tool calls
 * in the same steps from the same prompt (`scriptedPrompt` in bench-tools.ts):
 *
 *   - the latest user message is parsed with the scripted model's own parser;
 *   - while fewer assistant messages follow it than the prompt has steps, the next step's tool
 *     calls are answered;
 *   - then a text answer summarising the tool results (`Done. bench_tool: {"i":1}; …`);
 *   - except for `write <N> words`, answered with N words (the long-stream figure).
 */
import { parseScriptedRequests } from '../activities/providers/scripted.js';
import { startFakeProviderServer, type FakeProviderServer, type Json } from '../test/fake-provider/server.js';
import type { ScriptedStreamControl } from '../test/fake-provider/sse.js';

function text(content: Json): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part: Json) => (typeof part?.text === 'string' ? part.text : '')).join('');
  return '';
}

/** Decoded bytes of each inline (`data:` URL) image in a Chat Completions message. */
function inlineImageSizes(message: Json): number[] {
  if (!Array.isArray(message?.content)) return [];
  return message.content.flatMap((part: Json) => {
    const url = part?.type === 'image_url' ? part.image_url?.url : undefined;
    if (typeof url !== 'string' || !url.startsWith('data:')) return [];
    const data = url.slice(url.indexOf(',') + 1);
    return [Buffer.byteLength(data, 'base64')];
  });
}

export interface FakeOpenAI {
  baseURL: string;
  /** Requests the fake rejected since the last call (the real API would have too), then forgets all requests. */
  takeRejected(): string[];
  /**
   * How streamed replies (`stream: true`) are delivered from now on: paced and tapped for the
   * streaming figure, or (undefined) as fast as the socket takes them.
   */
  setStreamControl(control: ScriptedStreamControl | undefined): void;
  /**
   * The size (decoded bytes) of every inline image in the requests the fake answered since the
   * last call, one entry per image per request, in order; then forgets them.
   */
  takeImageSizes(): number[];
  close(): Promise<void>;
}

export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  const server: FakeProviderServer = await startFakeProviderServer();
  let streamControl: ScriptedStreamControl | undefined;
  let imageSizes: number[] = [];
  server.setDefault('openai', (body) => {
    const stream = streamControl && body.stream === true ? { stream: streamControl } : {};
    const messages: Json[] = body.messages;
    imageSizes.push(...messages.flatMap(inlineImageSizes));
    const lastUser = messages.findLastIndex((message) => message.role === 'user');
    const since = messages.slice(lastUser + 1);
    // The long-stream figure's prompt: an answer of that many words, streamed as the control paces it.
    const words = /^write (\d+) words$/.exec(text(messages[lastUser]?.content))?.[1];
    if (words !== undefined) return { ...stream, text: Array.from({ length: Number(words) }, (_, index) => `word${index}`).join(' ') };
    const steps = parseScriptedRequests(text(messages[lastUser]?.content));
    const taken = since.filter((message) => message.role === 'assistant').length;
    if (taken < steps.length) return { ...stream, toolCalls: steps[taken].map((call) => ({ name: call.toolName, input: call.input })) };
    const names = new Map<string, string>();
    for (const message of since) for (const call of message.tool_calls ?? []) names.set(call.id, call.function.name);
    const results = since.filter((message) => message.role === 'tool').map((message) => `${names.get(message.tool_call_id) ?? 'tool'}: ${text(message.content)}`);
    return { ...stream, text: results.length > 0 ? `Done. ${results.join('; ')}` : 'ok' };
  });
  return {
    baseURL: server.openaiBaseURL,
    takeRejected() {
      const rejected = server.requests.filter((request) => request.errors.length > 0).map((request) => `${request.status}: ${request.errors.join('; ')}`);
      // Recorded bodies hold whole conversations: do not keep thousands of them.
      server.requests.length = 0;
      return rejected;
    },
    setStreamControl(control) {
      streamControl = control;
    },
    takeImageSizes() {
      const taken = imageSizes;
      imageSizes = [];
      return taken;
    },
    close: () => server.close(),
  };
}
