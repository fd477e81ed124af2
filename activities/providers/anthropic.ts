/**
 * Anthropic Messages API behind turnpike's provider-neutral model step.
 *
 * The Messages API is stricter about shape than Chat Completions: the system prompt is a
 * top-level parameter, and the history goes as alternating user/assistant turns
 * (anthropic-messages.ts); the response comes back through anthropic-response.ts.
 */
import Anthropic, { AnthropicError, APIError } from '@anthropic-ai/sdk';
import { ApplicationFailure } from '@temporalio/common';
import type {
  ContentBlockParam,
  Message as AnthropicMessage,
  MessageCreateParamsNonStreaming,
  MessageParam,
  ThinkingConfigParam,
} from '@anthropic-ai/sdk/resources/messages';
import { DEFAULT_ANTHROPIC_MAX_TOKENS } from '../../workflows/turn/model-settings.js';
import { anthropicSchema } from '../../workflows/agents/output-schema.js';
import type { AnthropicThinking, ModelStepInput, ModelStepResult } from '../../workflows/types/index.js';
import { cachedClient, ProviderErrorType, resolveClientSettings, requestStep, type ProviderCallOptions } from './errors.js';
import { anthropicSdk } from './anthropic-errors.js';
import { withCacheBreakpoints } from './anthropic-cache.js';
import { convertToAnthropicMessages, convertToAnthropicTool } from './anthropic-messages.js';
import { convertToAnthropicServerTools, latestContainer } from './anthropic-server-tools.js';
import { addAnthropicUsage, convertFromAnthropicResponse } from './anthropic-response.js';
import { streamAnthropicMessage, type AnthropicMessagesClient } from './anthropic-stream.js';
import { providerObservedFetch } from './observed-fetch.js';

export { DEFAULT_ANTHROPIC_MAX_TOKENS };
export { convertToAnthropicMessages } from './anthropic-messages.js';
export { addAnthropicUsage, convertAnthropicUsage, convertFromAnthropicResponse, mapAnthropicStopReason } from './anthropic-response.js';

const clients = new Map<string, Anthropic>();

/**
 * Runs one model step on the Anthropic Messages API.
 *
 * The key and base URL come from `options`, else `ANTHROPIC_API_KEY` / `ANTHROPIC_BASE_URL`,
 * read on every call. The SDK never retries (`maxRetries: 0`): failures are thrown as Temporal
 * `ApplicationFailure`s (see `errors.ts`) and the activity retry policy decides.
 *
 * A cloud (anthropic-bedrock.ts, anthropic-vertex.ts) passes its own `client`; the step is the same.
 */
export async function callAnthropic(input: ModelStepInput, options: ProviderCallOptions = {}, cloudClient?: AnthropicMessagesClient): Promise<ModelStepResult> {
  // Passing `apiKey` explicitly also keeps the SDK from consulting its credential chain
  // (ANTHROPIC_AUTH_TOKEN, profiles): the worker's key is the only credential used.
  const client = cloudClient ?? cachedClient(clients, resolveClientSettings('anthropic', options), (settings) => new Anthropic({ ...settings, fetch: providerObservedFetch }));
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
        return block.citations?.length ? { type: 'text', text: block.text, citations: block.citations } : { type: 'text', text: block.text };
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

/** One Messages API request, streamed unless the turn said `stream: false`, with its failure classified. */
async function requestMessage(client: AnthropicMessagesClient, params: MessageCreateParamsNonStreaming, stream: boolean, options: ProviderCallOptions): Promise<AnthropicMessage> {
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
  const container = latestContainer(input.messages);
  const params: MessageCreateParamsNonStreaming = {
    model,
    max_tokens: maxTokens ?? DEFAULT_ANTHROPIC_MAX_TOKENS,
    messages: convertToAnthropicMessages(input.messages),
    ...(input.system ? { system: input.system } : {}),
    // Claude's server tools (anthropic-server-tools.ts) beside the turn's own, and the container of
    // the latest code execution, so its files are still there.
    ...(input.tools.length > 0 || input.model.providerTools?.length ? { tools: [...input.tools.map(convertToAnthropicTool), ...convertToAnthropicServerTools(input.model.providerTools)] } : {}),
    ...(container ? { container } : {}),
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
