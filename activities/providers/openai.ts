/**
 * OpenAI Chat Completions behind turnpike's provider-neutral model step.
 *
 * Vendor types stop here: the workflow sends neutral messages in and gets a neutral
 * `ModelStepResult` back, so a parked turn's history never depends on one provider's wire format.
 */
import { ApplicationFailure } from '@temporalio/common';
import OpenAI from 'openai';
import type {
  ChatCompletion,
  ChatCompletionAssistantMessageParam,
  ChatCompletionContentPart,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageFunctionToolCall,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import type { CompletionUsage } from 'openai/resources/completions';
import type {
  AssistantMessage,
  FinishReason,
  Message,
  ModelStepInput,
  ModelStepResult,
  ModelToolSpec,
  TextPart,
  ToolCallPart,
  Usage,
  UserContentPart,
} from '../../workflows/types/index.js';
import { strictSchemaProblem } from '../../workflows/agents/output-schema.js';
import { dataUrl, DEFAULT_DOCUMENT_FILENAME } from './binary-sources.js';
import {
  cachedClient,
  resolveClientSettings,
  toolResultText,
  requestStep,
  unexpectedResponse,
  type ProviderCallOptions,
} from './errors.js';
import { openAISdk } from './openai-errors.js';
import { streamChatCompletion } from './openai-stream.js';
import { parseToolArguments } from './tool-arguments.js';
import { providerObservedFetch } from './observed-fetch.js';

export { parseToolArguments } from './tool-arguments.js';

const clients = new Map<string, OpenAI>();

/**
 * Runs one model step on OpenAI Chat Completions.
 *
 * The key and base URL come from `options`, else `OPENAI_API_KEY` / `OPENAI_BASE_URL`, read
 * on every call. The SDK never retries (`maxRetries: 0`): failures are thrown as Temporal
 * `ApplicationFailure`s (see `errors.ts`) and the activity retry policy decides.
 *
 * The step is streamed, and `options.onDelta` hears its text and tool-call arguments as they
 * arrive, unless the turn sets `model.stream: false` (for an OpenAI-compatible server that cannot
 * stream). Either way the result is the same: the complete message, usage and finish reason.
 * Azure OpenAI (azure-openai.ts) passes its own `client`.
 */
export async function callOpenAI(input: ModelStepInput, options: ProviderCallOptions = {}, cloudClient?: OpenAI): Promise<ModelStepResult> {
  const client = cloudClient ?? cachedClient(clients, resolveClientSettings('openai', options), (settings) => new OpenAI({ ...settings, fetch: providerObservedFetch }));
  const request = convertToOpenAIRequest(input);
  const completion = await requestStep(
    openAISdk,
    input.model.stream !== false,
    { plain: () => client.chat.completions.create(request, { signal: options.signal }), streamed: () => streamChatCompletion(client, request, options) },
    options,
  );
  return convertFromOpenAIResponse(completion);
}

/** The Chat Completions request for one step. Exported for tests and for inspecting what is sent. */
export function convertToOpenAIRequest(input: ModelStepInput): ChatCompletionCreateParamsNonStreaming {
  const { model, maxTokens, temperature, reasoningEffort, serviceTier, metadata } = input.model;
  return {
    model,
    messages: convertToOpenAIMessages(input.system, input.messages),
    // An empty `tools` array is rejected by the API, so no tools means no field at all.
    // `parallel_tool_calls` is left at the API's default (true): the workflow runs a step's calls in parallel.
    ...(input.tools.length > 0 ? { tools: input.tools.map(convertToOpenAITool) } : {}),
    // OpenAI's reasoning models reject `max_tokens`; every other model, and every
    // OpenAI-compatible server (vLLM, llama.cpp, Ollama), understands it, while some of those
    // servers do not know `max_completion_tokens`. So the field follows the model's name.
    ...(maxTokens !== undefined ? (isOpenAIReasoningModel(model) ? { max_completion_tokens: maxTokens } : { max_tokens: maxTokens }) : {}),
    ...(temperature !== undefined ? { temperature } : {}),
    // Sent whenever the turn gives it, reasoning model or not: a compatible server may serve a
    // reasoning model under a name of its own (the turn validated the value when it started).
    ...(reasoningEffort !== undefined ? { reasoning_effort: reasoningEffort } : {}),
    ...(serviceTier !== undefined ? { service_tier: serviceTier } : {}),
    ...(metadata !== undefined ? { metadata } : {}),
    // A typed final answer (docs/typed-output.md): tools stay offered beside it.
    ...(input.output ? { response_format: { type: 'json_schema' as const, json_schema: jsonSchemaFormat(input.output) } } : {}),
  };
}

/**
 * A typed answer's json_schema format, shared by both OpenAI endpoints: `strict: true` when the
 * schema fits strict mode, else `strict: false` (the turn validates the answer either way).
 */
export function jsonSchemaFormat(output: NonNullable<ModelStepInput['output']>): { name: string; schema: Record<string, unknown>; strict: boolean } {
  return { name: output.name ?? 'final_answer', schema: output.schema, strict: strictSchemaProblem(output.schema) === undefined };
}

/**
 * Whether `model` is one of OpenAI's reasoning models, which take `max_completion_tokens` and
 * reject `max_tokens`: the o-series (`o1`, `o3`, `o3-mini`, `o4-mini`, dated snapshots), the
 * gpt-5 family (`gpt-5`, `gpt-5-mini`, `gpt-5.1`, `gpt-5.2-pro`, …) and `codex-mini`, also as a
 * fine-tuned `ft:` model. By name, because the API offers no way to ask; a model this misses
 * gets `max_tokens` and a clear 400 from OpenAI naming the field.
 */
export function isOpenAIReasoningModel(model: string): boolean {
  return /^(ft:)?(o\d+(-|$)|gpt-5(\.|-|$)|codex-mini)/.test(model);
}

/** Neutral history → Chat Completions messages, with the system prompt first. */
export function convertToOpenAIMessages(system: string | undefined, messages: Message[]): ChatCompletionMessageParam[] {
  const converted: ChatCompletionMessageParam[] = system ? [{ role: 'system', content: system }] : [];
  for (const message of messages) {
    switch (message.role) {
      case 'user':
        converted.push({ role: 'user', content: convertUserContent(message.content) });
        break;
      case 'assistant': {
        const assistant = convertAssistantMessage(message);
        // Nothing Chat Completions can carry (another provider's hosted call alone, e.g. a step cut
        // off after Claude's server_tool_use): left out, as an empty turn tells the model nothing.
        if (assistant.content !== '' || assistant.tool_calls) converted.push(assistant);
        break;
      }
      case 'tool':
        // OpenAI wants one `tool` message per result, each naming the call it answers.
        for (const result of message.content) {
          converted.push({ role: 'tool', tool_call_id: result.toolCallId, content: toolResultText(result.output) });
        }
        break;
    }
  }
  return converted;
}

/**
 * Text alone stays a string, joined as before; with an image or a document the message becomes
 * a list of parts in the order given (`image_url` with a URL or a `data:` URL, `file` with
 * `file_data`: the workflow refused document URLs, which Chat Completions cannot fetch).
 */
function convertUserContent(content: string | UserContentPart[]): string | ChatCompletionContentPart[] {
  if (typeof content === 'string') return content;
  if (content.every((part): part is TextPart => part.type === 'text')) return content.map((part) => part.text).join('\n');
  return content.map((part): ChatCompletionContentPart => {
    switch (part.type) {
      case 'text':
        return { type: 'text', text: part.text };
      case 'image':
        return { type: 'image_url', image_url: { url: part.source.type === 'url' ? part.source.url : dataUrl(part.source), ...(part.detail ? { detail: part.detail } : {}) } };
      case 'document':
        // The turn refused this when it started; a step input built some other way is refused here.
        if (part.source.type === 'url') {
          throw ApplicationFailure.nonRetryable('openai: Chat Completions takes documents inline (base64) only, not by URL', 'InvalidModelInput');
        }
        return { type: 'file', file: { file_data: dataUrl(part.source), filename: part.filename ?? DEFAULT_DOCUMENT_FILENAME } };
    }
  });
}

/**
 * Text and tool calls only. Reasoning parts are left out: Chat Completions has no field that
 * takes reasoning back, and another provider's (e.g. an Anthropic thinking block) means nothing
 * here and must not be passed off as the model's own words.
 */
function convertAssistantMessage(message: AssistantMessage): ChatCompletionAssistantMessageParam {
  const text = message.content
    .filter((part): part is TextPart => part.type === 'text')
    .map((part) => part.text)
    .join('');
  const toolCalls = message.content
    .filter((part): part is ToolCallPart => part.type === 'tool-call')
    .map(
      (part): ChatCompletionMessageFunctionToolCall => ({
        id: part.toolCallId,
        type: 'function',
        // A string input is malformed JSON the model produced; sending it back verbatim shows
        // the model exactly what it wrote next to the error result that explains the problem.
        function: { name: part.toolName, arguments: typeof part.input === 'string' ? part.input : JSON.stringify(part.input ?? {}) },
      }),
    );
  if (toolCalls.length === 0) return { role: 'assistant', content: text };
  // `null`, not '', when the model only called tools: that is what the API itself returns.
  return { role: 'assistant', content: text.length > 0 ? text : null, tool_calls: toolCalls };
}

function convertToOpenAITool(tool: ModelToolSpec): ChatCompletionTool {
  return {
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
  };
}

/** A Chat Completions response → the neutral step result. */
export function convertFromOpenAIResponse(completion: ChatCompletion): ModelStepResult {
  const choice = completion.choices?.[0];
  if (!choice?.message) throw unexpectedResponse('openai', 'the completion has no choices');
  const content: AssistantMessage['content'] = [];
  if (choice.message.content) content.push({ type: 'text', text: choice.message.content });
  for (const toolCall of choice.message.tool_calls ?? []) {
    // Custom (free-text) tools are never offered, so only function calls can come back.
    if (toolCall.type !== 'function') continue;
    content.push({
      type: 'tool-call',
      toolCallId: toolCall.id,
      toolName: toolCall.function.name,
      input: parseToolArguments(toolCall.function.arguments),
    });
  }
  return {
    message: { role: 'assistant', content },
    finishReason: mapOpenAIFinishReason(choice.finish_reason),
    ...(choice.finish_reason ? { providerFinishReason: choice.finish_reason } : {}),
    usage: convertOpenAIUsage(completion.usage),
  };
}

/** Chat Completions usage → neutral usage; optional counts only when the API reported them. */
export function convertOpenAIUsage(usage: CompletionUsage | null | undefined): Usage {
  const cached = usage?.prompt_tokens_details?.cached_tokens;
  const reasoning = usage?.completion_tokens_details?.reasoning_tokens;
  return {
    inputTokens: usage?.prompt_tokens ?? 0,
    outputTokens: usage?.completion_tokens ?? 0,
    ...(typeof cached === 'number' ? { cachedInputTokens: cached } : {}),
    ...(typeof reasoning === 'number' ? { reasoningTokens: reasoning } : {}),
  };
}

/** Chat Completions `finish_reason` → neutral finish reason. */
export function mapOpenAIFinishReason(finishReason: string | null | undefined): FinishReason {
  switch (finishReason) {
    case 'stop':
      return 'stop';
    case 'tool_calls':
    case 'function_call':
      return 'tool-calls';
    case 'length':
      return 'length';
    case 'content_filter':
      return 'content-filter';
    default:
      return 'other';
  }
}
