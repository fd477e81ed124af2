/**
 * OpenAI Chat Completions behind turnpike's provider-neutral model step.
 *
 * Vendor types stop here: the workflow sends neutral messages in and gets a neutral
 * `ModelStepResult` back, so a parked turn's history never depends on one provider's wire format.
 */
import OpenAI from 'openai';
import type {
  ChatCompletion,
  ChatCompletionAssistantMessageParam,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageFunctionToolCall,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import type {
  AssistantMessage,
  FinishReason,
  Message,
  ModelStepInput,
  ModelStepResult,
  ModelToolSpec,
  TextPart,
  ToolCallPart,
} from '../../workflows/types.js';
import {
  cachedClient,
  resolveClientSettings,
  toolResultText,
  toProviderFailure,
  unexpectedResponse,
  type ProviderCallOptions,
} from './errors.js';

const clients = new Map<string, OpenAI>();

/**
 * Runs one model step on OpenAI Chat Completions.
 *
 * The key and base URL come from `options`, else `OPENAI_API_KEY` / `OPENAI_BASE_URL`, read
 * on every call. The SDK never retries (`maxRetries: 0`): failures are thrown as Temporal
 * `ApplicationFailure`s (see `errors.ts`) and the activity retry policy decides.
 */
export async function callOpenAI(input: ModelStepInput, options: ProviderCallOptions = {}): Promise<ModelStepResult> {
  const client = cachedClient(clients, resolveClientSettings('openai', options), (settings) => new OpenAI(settings));
  let completion: ChatCompletion;
  try {
    completion = await client.chat.completions.create(convertToOpenAIRequest(input), { signal: options.signal });
  } catch (error) {
    throw toProviderFailure('openai', error, options);
  }
  return convertFromOpenAIResponse(completion);
}

/** The Chat Completions request for one step. Exported for tests and for inspecting what is sent. */
export function convertToOpenAIRequest(input: ModelStepInput): ChatCompletionCreateParamsNonStreaming {
  const { model, maxTokens, temperature } = input.model;
  return {
    model,
    messages: convertToOpenAIMessages(input.system, input.messages),
    // An empty `tools` array is rejected by the API, so no tools means no field at all.
    // `parallel_tool_calls` is left at the API's default (true): the workflow runs a step's calls in parallel.
    ...(input.tools.length > 0 ? { tools: input.tools.map(convertToOpenAITool) } : {}),
    // `max_tokens`, not `max_completion_tokens`: every OpenAI-compatible endpoint understands it.
    // OpenAI's reasoning models (o-series, gpt-5) reject it; switch here if they are targeted.
    ...(maxTokens !== undefined ? { max_tokens: maxTokens } : {}),
    ...(temperature !== undefined ? { temperature } : {}),
  };
}

/** Neutral history → Chat Completions messages, with the system prompt first. */
export function convertToOpenAIMessages(system: string | undefined, messages: Message[]): ChatCompletionMessageParam[] {
  const converted: ChatCompletionMessageParam[] = system ? [{ role: 'system', content: system }] : [];
  for (const message of messages) {
    switch (message.role) {
      case 'user':
        converted.push({ role: 'user', content: userText(message.content) });
        break;
      case 'assistant':
        converted.push(convertAssistantMessage(message));
        break;
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

function userText(content: string | TextPart[]): string {
  return typeof content === 'string' ? content : content.map((part) => part.text).join('\n');
}

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
    usage: {
      inputTokens: completion.usage?.prompt_tokens ?? 0,
      outputTokens: completion.usage?.completion_tokens ?? 0,
    },
  };
}

/**
 * Parses a tool call's arguments. Models sometimes emit invalid JSON; throwing here would fail
 * the whole step (and retrying would just ask again), so the raw text is kept as the input and
 * schema validation later turns it into an error result the model can correct.
 */
export function parseToolArguments(text: string): unknown {
  // OpenAI sends '{}' for a call without arguments, but some compatible endpoints send '':
  // that means "no arguments", not malformed JSON.
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
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
