/**
 * Anthropic Messages API behind turnpike's provider-neutral model step.
 *
 * The Messages API is stricter about shape than Chat Completions: the system prompt is a
 * top-level parameter, turns alternate user/assistant, and every `tool_use` is answered by a
 * `tool_result` block at the start of the very next user message. The conversion below
 * produces exactly that from neutral history.
 */
import { inlineData } from './binary-sources.js';
import Anthropic, { AnthropicError, APIError } from '@anthropic-ai/sdk';
import { ApplicationFailure } from '@temporalio/common';
import type {
  Base64ImageSource,
  ContentBlockParam,
  DocumentBlockParam,
  ImageBlockParam,
  Message as AnthropicMessage,
  MessageCreateParamsNonStreaming,
  MessageParam,
  ThinkingConfigParam,
  Tool,
  ToolResultBlockParam,
  Usage as AnthropicUsage,
} from '@anthropic-ai/sdk/resources/messages';
import { DEFAULT_ANTHROPIC_MAX_TOKENS } from '../../workflows/turn/model-settings.js';
import { anthropicSchema } from '../../workflows/agents/output-schema.js';
import type {
  AnthropicThinking,
  AssistantMessage,
  BinarySource,
  FinishReason,
  Message,
  ModelStepInput,
  ModelStepResult,
  ModelToolSpec,
  ReasoningPart,
  TextPart,
  ToolMessage,
  Usage,
  UserContentPart,
  UserMessage,
} from '../../workflows/types/index.js';
import {
  cachedClient,
  ProviderErrorType,
  resolveClientSettings,
  toolResultText,
  requestStep,
  unexpectedResponse,
  type ProviderCallOptions,
} from './errors.js';
import { anthropicSdk } from './anthropic-errors.js';
import { withCacheBreakpoints } from './anthropic-cache.js';
import { streamAnthropicMessage } from './anthropic-stream.js';

export { DEFAULT_ANTHROPIC_MAX_TOKENS };

const clients = new Map<string, Anthropic>();

/**
 * Runs one model step on the Anthropic Messages API.
 *
 * The key and base URL come from `options`, else `ANTHROPIC_API_KEY` / `ANTHROPIC_BASE_URL`,
 * read on every call. The SDK never retries (`maxRetries: 0`): failures are thrown as Temporal
 * `ApplicationFailure`s (see `errors.ts`) and the activity retry policy decides.
 */
export async function callAnthropic(input: ModelStepInput, options: ProviderCallOptions = {}): Promise<ModelStepResult> {
  // Passing `apiKey` explicitly also keeps the SDK from consulting its credential chain
  // (ANTHROPIC_AUTH_TOKEN, profiles): the worker's key is the only credential used.
  const client = cachedClient(clients, resolveClientSettings('anthropic', options), (settings) => new Anthropic(settings));
  const params = convertToAnthropicRequest(input);
  const stream = input.model.stream !== false;
  let response = await requestMessage(client, params, stream, options);
  // `pause_turn`: the API paused a long turn (server-side tool work) and wants it sent back to go
  // on. The step continues here rather than ending: the paused content goes back as the final
  // assistant message, and the continuation's blocks are appended to it, usage added up.
  let content = response.content;
  let usage = response.usage;
  for (let continuation = 0; response.stop_reason === 'pause_turn' && continuation < MAX_PAUSE_TURN_CONTINUATIONS; continuation++) {
    const paused: MessageParam = { role: 'assistant', content: pausedContentParams(content) };
    response = await requestMessage(client, { ...params, messages: [...params.messages, paused] }, stream, options);
    content = [...content, ...response.content];
    usage = addAnthropicUsage(usage, response.usage);
  }
  return convertFromAnthropicResponse({ ...response, content, usage });
}

/**
 * How many times one step continues a paused turn. A model that keeps pausing past this ends the
 * step with what it has (finish reason `other`, provider value `pause_turn`) rather than loop.
 */
export const MAX_PAUSE_TURN_CONTINUATIONS = 8;

/**
 * Paused content as request blocks, exactly as received (thinking signatures included). The
 * API refuses a final assistant message that ends in whitespace, so only that is trimmed.
 */
function pausedContentParams(content: AnthropicMessage['content']): ContentBlockParam[] {
  const blocks = content.map((block): ContentBlockParam => {
    switch (block.type) {
      case 'text':
        return { type: 'text', text: block.text };
      case 'thinking':
        return { type: 'thinking', thinking: block.thinking, signature: block.signature };
      case 'redacted_thinking':
        return { type: 'redacted_thinking', data: block.data };
      case 'tool_use':
        return { type: 'tool_use', id: block.id, name: block.name, input: block.input };
      default:
        // Server-tool blocks (server_tool_use, web_search_tool_result, …) go back as they came.
        return block as ContentBlockParam;
    }
  });
  const last = blocks.at(-1);
  if (last?.type === 'text') {
    const text = last.text.trimEnd();
    if (text) blocks[blocks.length - 1] = { type: 'text', text };
    else blocks.pop();
  }
  return blocks;
}

/** Two calls' usage as one: each count added, the optional ones when either call reported them. */
export function addAnthropicUsage(a: AnthropicUsage, b: AnthropicUsage): AnthropicUsage {
  const sum = (x: number | null | undefined, y: number | null | undefined) => (x == null && y == null ? null : (x ?? 0) + (y ?? 0));
  const thinking = sum(a.output_tokens_details?.thinking_tokens, b.output_tokens_details?.thinking_tokens);
  return {
    ...b,
    input_tokens: a.input_tokens + b.input_tokens,
    output_tokens: a.output_tokens + b.output_tokens,
    cache_creation_input_tokens: sum(a.cache_creation_input_tokens, b.cache_creation_input_tokens),
    cache_read_input_tokens: sum(a.cache_read_input_tokens, b.cache_read_input_tokens),
    output_tokens_details: thinking === null ? (b.output_tokens_details ?? null) : { ...b.output_tokens_details, thinking_tokens: thinking },
  } as AnthropicUsage;
}

/** One Messages API request, streamed unless the turn said `stream: false`, with its failure classified. */
async function requestMessage(client: Anthropic, params: MessageCreateParamsNonStreaming, stream: boolean, options: ProviderCallOptions): Promise<AnthropicMessage> {
  const plain = async () => {
    try {
      return await client.messages.create(params, { signal: options.signal });
    } catch (error) {
      // The SDK refuses, before sending anything, a plain request it expects to run past 10 minutes
      // (a large max_tokens). Retrying cannot change that; streaming, the default, has no such limit.
      if (error instanceof AnthropicError && !(error instanceof APIError) && error.message.startsWith('Streaming is required')) {
        throw ApplicationFailure.create({
          message: `anthropic: max_tokens ${params.max_tokens} needs a streamed request (the SDK refuses plain requests that may run past 10 minutes); leave model.stream on or lower model.maxTokens`,
          type: ProviderErrorType.badRequest,
          nonRetryable: true,
          cause: error,
        });
      }
      throw error;
    }
  };
  return requestStep(anthropicSdk, stream, { plain, streamed: () => streamAnthropicMessage(client, params, options) }, options);
}

/** The Messages API request for one step. Exported for tests and for inspecting what is sent. */
export function convertToAnthropicRequest(input: ModelStepInput): MessageCreateParamsNonStreaming {
  const { model, maxTokens, temperature, thinking, promptCaching } = input.model;
  const params: MessageCreateParamsNonStreaming = {
    model,
    max_tokens: maxTokens ?? DEFAULT_ANTHROPIC_MAX_TOKENS,
    messages: convertToAnthropicMessages(input.messages),
    ...(input.system ? { system: input.system } : {}),
    ...(input.tools.length > 0 ? { tools: input.tools.map(convertToAnthropicTool) } : {}),
    ...(temperature !== undefined ? { temperature } : {}),
    ...(thinking !== undefined ? { thinking: convertThinking(thinking) } : {}),
    // A typed final answer (docs/typed-output.md): JSON outputs, tools still offered, with the
    // constraints they refuse moved into descriptions (the turn validates the whole schema); the
    // turn refused a schema they cannot express when it started.
    ...(input.output ? { output_config: { format: { type: 'json_schema' as const, schema: anthropicSchema(input.output.schema) as Record<string, unknown> } } } : {}),
  };
  return promptCaching === false ? params : withCacheBreakpoints(params);
}

/** turnpike's camelCase thinking setting → the Messages API's (validated when the turn started). */
export function convertThinking(thinking: AnthropicThinking): ThinkingConfigParam {
  switch (thinking.type) {
    case 'enabled':
      return { type: 'enabled', budget_tokens: thinking.budgetTokens };
    case 'adaptive':
      return { type: 'adaptive' };
    case 'disabled':
      return { type: 'disabled' };
  }
}

/**
 * Neutral history → Messages API turns. Tool results become a user turn, and consecutive turns
 * of one role are merged, because the API wants strict alternation: tool results followed by a
 * new user text become one user turn with the `tool_result` blocks first.
 */
export function convertToAnthropicMessages(messages: Message[]): MessageParam[] {
  const turns: Array<{ role: 'user' | 'assistant'; content: ContentBlockParam[] }> = [];
  for (const message of messages) {
    const { role, blocks } = convertMessage(message);
    // An empty turn (e.g. an assistant reply with no text and no calls) is rejected by the API
    // and carries nothing for the model, so it is dropped; its neighbours then merge.
    if (blocks.length === 0) continue;
    const previous = turns.at(-1);
    if (previous?.role === role) previous.content.push(...blocks);
    else turns.push({ role, content: blocks });
  }
  return turns;
}

function convertMessage(message: Message): { role: 'user' | 'assistant'; blocks: ContentBlockParam[] } {
  switch (message.role) {
    case 'user':
      return { role: 'user', blocks: userBlocks(message) };
    case 'assistant':
      return { role: 'assistant', blocks: assistantBlocks(message) };
    case 'tool':
      return { role: 'user', blocks: toolResultBlocks(message) };
  }
}

function userBlocks(message: UserMessage): ContentBlockParam[] {
  const parts: UserContentPart[] = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
  return parts.flatMap((part): ContentBlockParam[] => {
    switch (part.type) {
      case 'text':
        return hasVisibleText(part) ? [{ type: 'text', text: part.text }] : [];
      case 'image':
        return [{ type: 'image', source: imageSource(part.source) }];
      case 'document':
        return [{ type: 'document', source: documentSource(part.source), ...(part.filename ? { title: part.filename } : {}) }];
    }
  });
}

/** The workflow checked the media type when the turn started (see workflows/turn/binary-parts.ts). */
function imageSource(source: BinarySource): ImageBlockParam['source'] {
  if (source.type === 'url') return { type: 'url', url: source.url };
  return { type: 'base64', media_type: source.mediaType as Base64ImageSource['media_type'], data: inlineData(source) };
}

function documentSource(source: BinarySource): DocumentBlockParam['source'] {
  if (source.type === 'url') return { type: 'url', url: source.url };
  return { type: 'base64', media_type: 'application/pdf', data: inlineData(source) };
}

function assistantBlocks(message: AssistantMessage): ContentBlockParam[] {
  return message.content.flatMap((part): ContentBlockParam[] => {
    if (part.type === 'text') return hasVisibleText(part) ? [{ type: 'text', text: part.text }] : [];
    if (part.type === 'reasoning') return thinkingBlocks(part);
    return [{ type: 'tool_use', id: part.toolCallId, name: part.toolName, input: toToolUseInput(part.input) }];
  });
}

/**
 * A reasoning part → the thinking block it came from, byte for byte, in the position it had
 * (first in its turn, as the API returned and requires it). Reasoning from another provider, or
 * without the signature that proves it came from Claude, cannot be sent: the API would reject the
 * request. It is dropped, never rewritten into text the model would take for its own words.
 */
function thinkingBlocks(part: ReasoningPart): ContentBlockParam[] {
  if (part.provider !== 'anthropic') return [];
  if (part.redactedData !== undefined) return [{ type: 'redacted_thinking', data: part.redactedData }];
  if (part.signature !== undefined) return [{ type: 'thinking', thinking: part.text, signature: part.signature }];
  return [];
}

function toolResultBlocks(message: ToolMessage): ToolResultBlockParam[] {
  return message.content.map((result) => {
    const text = toolResultText(result.output);
    return result.isError
      ? // The API refuses an error result with empty content.
        { type: 'tool_result', tool_use_id: result.toolCallId, content: text || 'Error', is_error: true }
      : { type: 'tool_result', tool_use_id: result.toolCallId, content: text };
  });
}

/** The API rejects empty and whitespace-only text blocks. */
function hasVisibleText(part: TextPart): boolean {
  return part.text.trim().length > 0;
}

/**
 * `tool_use.input` must be a JSON object. Malformed arguments (kept as a string when another
 * provider produced them) and non-object values are wrapped rather than dropped, so the model
 * still sees what was called next to the error result that explains why it failed.
 */
function toToolUseInput(input: unknown): Record<string, unknown> {
  if (input === undefined || input === null) return {};
  if (typeof input === 'object' && !Array.isArray(input)) return input as Record<string, unknown>;
  return { _malformed: typeof input === 'string' ? input : JSON.stringify(input) };
}

function convertToAnthropicTool(tool: ModelToolSpec): Tool {
  return {
    name: tool.name,
    description: tool.description,
    input_schema: tool.inputSchema as Tool.InputSchema,
  };
}

/** A Messages API response → the neutral step result. */
export function convertFromAnthropicResponse(response: AnthropicMessage): ModelStepResult {
  if (!Array.isArray(response?.content)) throw unexpectedResponse('anthropic', 'the message has no content');
  const content: AssistantMessage['content'] = [];
  for (const block of response.content) {
    if (block.type === 'text') content.push({ type: 'text', text: block.text });
    else if (block.type === 'tool_use') {
      content.push({ type: 'tool-call', toolCallId: block.id, toolName: block.name, input: block.input });
    } else if (block.type === 'thinking') {
      content.push({ type: 'reasoning', provider: 'anthropic', text: block.thinking, signature: block.signature });
    } else if (block.type === 'redacted_thinking') {
      content.push({ type: 'reasoning', provider: 'anthropic', text: '', redactedData: block.data });
    }
    // Server-tool blocks are not requested, so nothing else is expected here.
  }
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
  return {
    // `input_tokens` excludes prompt-cache reads and writes; adding them makes the figure
    // comparable with OpenAI's `prompt_tokens`, which includes cached tokens.
    inputTokens: (usage?.input_tokens ?? 0) + (usage?.cache_creation_input_tokens ?? 0) + (cacheRead ?? 0),
    outputTokens: usage?.output_tokens ?? 0,
    ...(typeof cacheRead === 'number' ? { cachedInputTokens: cacheRead } : {}),
    // Only when the step wrote to the cache: most steps of a short prompt write nothing.
    ...(typeof cacheWrite === 'number' && cacheWrite > 0 ? { cacheWriteInputTokens: cacheWrite } : {}),
    ...(typeof thinking === 'number' ? { reasoningTokens: thinking } : {}),
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
