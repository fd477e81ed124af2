/**
 * Any AI SDK language model (`@ai-sdk/google`, `@ai-sdk/mistral`, `@ai-sdk/openai-compatible`, …)
 * behind turnpike's provider-neutral model step: provider `ai-sdk`, the model named by the name
 * the worker registered it under (`models` on `createWorker` / `TurnpikePlugin`).
 *
 * The model object lives in the worker, with its key and base URL: the turn's history holds only
 * the name. This module imports no AI SDK package at run time (only the spec's types): the
 * application's provider package is the code that talks HTTP.
 */
import { ApplicationFailure } from '@temporalio/common';
import type {
  JSONValue,
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4FilePart,
  LanguageModelV4Message,
  LanguageModelV4Prompt,
  LanguageModelV4ToolResultOutput,
  SharedV4ProviderOptions,
} from '@ai-sdk/provider';
import type { AssistantMessage, Message, ModelStepInput, ModelStepResult, ProviderMetadata, ToolResultPart, UserContentPart } from '../../workflows/types/index.js';
import type { AiSdkModels } from './ai-sdk-models.js';
import { inlineData } from './binary-sources.js';
import { toAiSdkFailure } from './ai-sdk-errors.js';
import { providerToolPrompt } from './ai-sdk-provider-tools.js';
import { generateResultOf, StreamEndedEarly, streamResultOf } from './ai-sdk-result.js';
import { ProviderErrorType } from './error-types.js';
import { toolResultText, type ProviderCallOptions } from './errors.js';

/**
 * Runs one model step on a registered AI SDK model: `doStream` unless the turn set
 * `model.stream: false`, then `doGenerate`. The result is the same either way. The AI SDK's own
 * retries are not involved (nothing here calls `generateText`): failures are classified by
 * `toAiSdkFailure` and the activity's retry policy decides.
 */
export async function callAiSdk(models: AiSdkModels, input: ModelStepInput, options: ProviderCallOptions = {}): Promise<ModelStepResult> {
  const name = input.model.model;
  const model = Object.hasOwn(models, name) ? (models[name] as unknown as LanguageModelV4) : undefined;
  if (!model) {
    const known = Object.keys(models);
    throw ApplicationFailure.nonRetryable(
      `ai-sdk: this worker has no model named "${name}"; ${known.length > 0 ? `it has ${known.join(', ')}` : 'register models with createWorker({ models }) or new TurnpikePlugin({ models })'}`,
      'InvalidModelSettings',
    );
  }
  const label = `ai-sdk ${name} (${model.provider})`;
  const callOptions = convertToAiSdkCall(input, options.signal);
  try {
    if (input.model.stream === false) return generateResultOf(await model.doGenerate(callOptions));
    const { stream } = await model.doStream(callOptions);
    return await streamResultOf(stream, options.onDelta);
  } catch (error) {
    if (error instanceof StreamEndedEarly) {
      throw ApplicationFailure.create({ message: `${label}: unexpected response — ${error.message}`, type: ProviderErrorType.retryable, cause: error });
    }
    throw toAiSdkFailure(label, error, options);
  }
}

/** The spec's call options for one step. Exported for tests and for inspecting what is sent. */
export function convertToAiSdkCall(input: ModelStepInput, abortSignal?: AbortSignal): LanguageModelV4CallOptions {
  const { maxTokens, temperature, reasoningEffort, providerOptions } = input.model;
  return {
    prompt: convertToAiSdkPrompt(input.system, input.messages),
    ...(input.tools.length > 0
      ? { tools: input.tools.map((tool) => ({ type: 'function' as const, name: tool.name, description: tool.description, inputSchema: tool.inputSchema })), toolChoice: { type: 'auto' as const } }
      : {}),
    ...(maxTokens !== undefined ? { maxOutputTokens: maxTokens } : {}),
    ...(temperature !== undefined ? { temperature } : {}),
    ...(reasoningEffort !== undefined ? { reasoning: reasoningEffort } : {}),
    ...(providerOptions !== undefined ? { providerOptions: providerOptions as SharedV4ProviderOptions } : {}),
    // A typed final answer (docs/typed-output.md): the provider asks natively for JSON of the
    // schema where it can; the turn validates the answer either way. Tools stay offered.
    ...(input.output ? { responseFormat: { type: 'json' as const, schema: input.output.schema, name: input.output.name ?? 'final_answer' } } : {}),
    ...(abortSignal ? { abortSignal } : {}),
  };
}

/** Neutral history → the spec's prompt, the system prompt first. */
export function convertToAiSdkPrompt(system: string | undefined, messages: Message[]): LanguageModelV4Prompt {
  const prompt: LanguageModelV4Prompt = system ? [{ role: 'system', content: system }] : [];
  for (const message of messages) {
    switch (message.role) {
      case 'user':
        prompt.push({ role: 'user', content: typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content.map(userPart) });
        break;
      case 'assistant': {
        const content = assistantContent(message);
        // A message of reasoning another provider produced alone would be empty here: left out.
        if (content.length > 0) prompt.push({ role: 'assistant', content });
        break;
      }
      case 'tool':
        prompt.push({ role: 'tool', content: message.content.map((result) => ({ type: 'tool-result', toolCallId: result.toolCallId, toolName: result.toolName, output: toolOutput(result) })) });
        break;
    }
  }
  return prompt;
}

type AssistantContent = Extract<LanguageModelV4Message, { role: 'assistant' }>['content'];

function options(metadata: ProviderMetadata | undefined): { providerOptions?: SharedV4ProviderOptions } {
  return metadata ? { providerOptions: metadata as SharedV4ProviderOptions } : {};
}

/**
 * Text, tool calls, this provider's reasoning and the tools its provider ran, each with the
 * metadata it came with as its `providerOptions`. Reasoning of Anthropic or OpenAI Responses is left out: it means nothing
 * to another provider and must not be passed off as this model's words.
 */
function assistantContent(message: AssistantMessage): AssistantContent {
  const content: AssistantContent = [];
  for (const part of message.content) {
    if (part.type === 'text') content.push({ type: 'text', text: part.text, ...options(part.providerMetadata) });
    else if (part.type === 'tool-call') content.push({ type: 'tool-call', toolCallId: part.toolCallId, toolName: part.toolName, input: part.input ?? {}, ...options(part.providerMetadata) });
    else if (part.type === 'provider-tool') content.push(...providerToolPrompt(part));
    else if (part.provider === 'ai-sdk') content.push({ type: 'reasoning', text: part.text, ...options(part.providerMetadata) });
  }
  return content;
}

/** A tool's output as the spec's: text or JSON, `error-…` for an error result. */
function toolOutput(result: ToolResultPart): LanguageModelV4ToolResultOutput {
  if (typeof result.output === 'string') return { type: result.isError ? 'error-text' : 'text', value: result.output };
  // `undefined` (a tool that returned nothing) becomes JSON null, as the other providers send it.
  const value = JSON.parse(toolResultText(result.output)) as JSONValue;
  return { type: result.isError ? 'error-json' : 'json', value };
}

/** Images and documents as the spec's file parts: inline bytes as base64, URLs as URLs. */
function userPart(part: UserContentPart): Extract<LanguageModelV4Message, { role: 'user' }>['content'][number] {
  if (part.type === 'text') return { type: 'text', text: part.text };
  const { source } = part;
  const mediaType = source.mediaType ?? (part.type === 'image' ? 'image/*' : 'application/pdf');
  const file: LanguageModelV4FilePart = {
    type: 'file',
    mediaType,
    data: source.type === 'url' ? { type: 'url', url: new URL(source.url) } : { type: 'data', data: inlineData(source) },
    ...(part.type === 'document' && part.filename ? { filename: part.filename } : {}),
  };
  return file;
}
