/**
 * A Messages API response → the neutral step result: its content, finish reason and usage.
 */
import type { Message as AnthropicMessage, Usage as AnthropicUsage } from '@anthropic-ai/sdk/resources/messages';
import type { AssistantMessage, FinishReason, ModelStepResult, Usage } from '../../workflows/types/index.js';
import { unexpectedResponse } from './errors.js';
import { isServerToolResult, ServerToolCalls } from './anthropic-server-tools.js';

/** A Messages API response → the neutral step result. */
export function convertFromAnthropicResponse(response: AnthropicMessage): ModelStepResult {
  if (!Array.isArray(response?.content)) throw unexpectedResponse('anthropic', 'the message has no content');
  const content: AssistantMessage['content'] = [];
  const serverTools = new ServerToolCalls(response.container);
  for (const block of response.content) {
    if (block.type === 'text') {
      // Citations go back with their text, exactly as received.
      content.push({ type: 'text', text: block.text, ...(block.citations?.length ? { citations: block.citations } : {}) });
    } else if (block.type === 'server_tool_use') content.push(serverTools.start(block));
    else if (isServerToolResult(block)) serverTools.finish(block);
    else if (block.type === 'tool_use') {
      content.push({ type: 'tool-call', toolCallId: block.id, toolName: block.name, input: block.input });
    } else if (block.type === 'thinking') {
      content.push({ type: 'reasoning', provider: 'anthropic', text: block.thinking, signature: block.signature });
    } else if (block.type === 'redacted_thinking') {
      content.push({ type: 'reasoning', provider: 'anthropic', text: '', redactedData: block.data });
    }
  }
  serverTools.close();
  return {
    message: { role: 'assistant', content },
    finishReason: mapAnthropicStopReason(response.stop_reason),
    ...(response.stop_reason ? { providerFinishReason: response.stop_reason } : {}),
    usage: convertAnthropicUsage(response.usage),
  };
}

/** Messages API usage → neutral usage; optional counts only when the API reported them. */
export function convertAnthropicUsage(usage: Partial<AnthropicUsage> | null | undefined): Usage {
  const cacheRead = usage?.cache_read_input_tokens;
  const cacheWrite = usage?.cache_creation_input_tokens;
  const thinking = usage?.output_tokens_details?.thinking_tokens;
  const searches = usage?.server_tool_use?.web_search_requests;
  const fetches = usage?.server_tool_use?.web_fetch_requests;
  return {
    // `input_tokens` excludes prompt-cache reads and writes; adding them makes the figure
    // comparable with OpenAI's `prompt_tokens`, which includes cached tokens.
    inputTokens: (usage?.input_tokens ?? 0) + (usage?.cache_creation_input_tokens ?? 0) + (cacheRead ?? 0),
    outputTokens: usage?.output_tokens ?? 0,
    ...(typeof cacheRead === 'number' ? { cachedInputTokens: cacheRead } : {}),
    // Only when the step wrote to the cache: most steps of a short prompt write nothing.
    ...(typeof cacheWrite === 'number' && cacheWrite > 0 ? { cacheWriteInputTokens: cacheWrite } : {}),
    ...(typeof thinking === 'number' ? { reasoningTokens: thinking } : {}),
    // Server tools: searches are billed per search (activities/prices.ts).
    ...(typeof searches === 'number' && searches > 0 ? { webSearchRequests: searches } : {}),
    ...(typeof fetches === 'number' && fetches > 0 ? { webFetchRequests: fetches } : {}),
  };
}

/** Messages API `stop_reason` → neutral finish reason. */
export function mapAnthropicStopReason(stopReason: string | null | undefined): FinishReason {
  switch (stopReason) {
    case 'end_turn':
    case 'stop_sequence':
      return 'stop';
    case 'tool_use':
      return 'tool-calls';
    // model_context_window_exceeded: the context window, not max_tokens, ran out; either way the
    // output was cut short.
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'refusal':
      return 'content-filter';
    default:
      return 'other';
  }
}

/** Two calls' usage as one: each count added, the optional ones when either call reported them. */
export function addAnthropicUsage(a: AnthropicUsage, b: AnthropicUsage): AnthropicUsage {
  const sum = (x: number | null | undefined, y: number | null | undefined) => (x == null && y == null ? null : (x ?? 0) + (y ?? 0));
  const thinking = sum(a.output_tokens_details?.thinking_tokens, b.output_tokens_details?.thinking_tokens);
  const serverTools =
    a.server_tool_use || b.server_tool_use
      ? {
          ...b.server_tool_use,
          web_search_requests: (a.server_tool_use?.web_search_requests ?? 0) + (b.server_tool_use?.web_search_requests ?? 0),
          web_fetch_requests: (a.server_tool_use?.web_fetch_requests ?? 0) + (b.server_tool_use?.web_fetch_requests ?? 0),
        }
      : (b.server_tool_use ?? null);
  return {
    ...b,
    input_tokens: a.input_tokens + b.input_tokens,
    output_tokens: a.output_tokens + b.output_tokens,
    cache_creation_input_tokens: sum(a.cache_creation_input_tokens, b.cache_creation_input_tokens),
    cache_read_input_tokens: sum(a.cache_read_input_tokens, b.cache_read_input_tokens),
    server_tool_use: serverTools,
    output_tokens_details: thinking === null ? (b.output_tokens_details ?? null) : { ...b.output_tokens_details, thinking_tokens: thinking },
  } as AnthropicUsage;
}
