/**
 * OpenAI's Responses API behind turnpike's provider-neutral model step (provider
 * `openai-responses`).
 *
 * What sets it apart from Chat Completions is reasoning: a reasoning model's reasoning items must
 * come back with the function calls they led to, or the model continues blind (and the API
 * rejects a continuation whose function call lost its reasoning item). turnpike asks for
 * `store: false` by default, so OpenAI keeps nothing between calls; with
 * `include: ['reasoning.encrypted_content']` each reasoning item comes back encrypted, is kept
 * in the turn's history as a neutral reasoning part (provider `openai`), and is sent back
 * verbatim on the next step — hours later, after a parked approval and a worker restart.
 *
 * The step is streamed (openai-responses-stream.ts) unless the turn sets `model.stream: false`;
 * either way the finished `Response` goes through the same `convertFromResponsesResponse`
 * (openai-responses-result.ts). This file builds the request.
 */
import OpenAI from 'openai';
import type { FunctionTool, ResponseCreateParamsNonStreaming, ResponseInputContent, ResponseInputItem } from 'openai/resources/responses/responses';
import type { AssistantMessage, Message, ModelStepInput, ModelStepResult, ModelToolSpec, ReasoningPart, UserContentPart } from '../../workflows/types/index.js';
import { dataUrl, DEFAULT_DOCUMENT_FILENAME } from './binary-sources.js';
import { cachedClient, resolveClientSettings, toolResultText, requestStep, type ProviderCallOptions } from './errors.js';
import { openAISdk } from './openai-errors.js';
import { convertFromResponsesResponse } from './openai-responses-result.js';
import { streamResponse } from './openai-responses-stream.js';
import { isOpenAIReasoningModel, jsonSchemaFormat } from './openai.js';
import { approvalRequestOf, approvalResponseOf, hostedIncludes, hostedTools } from './openai-hosted-tools.js';
import type { RemoteMcpServers } from './remote-mcp-servers.js';
import { providerObservedFetch } from './observed-fetch.js';

const clients = new Map<string, OpenAI>();

/**
 * Runs one model step on the OpenAI Responses API. Key and base URL as for Chat Completions
 * (`OPENAI_API_KEY` / `OPENAI_BASE_URL`, read on every call); the SDK never retries, Temporal does.
 *
 * Streamed, with `options.onDelta` hearing text, reasoning summaries and function-call arguments
 * as they arrive, unless the turn sets `model.stream: false`; a stream that breaks part-way is a
 * retryable failure. Either way the result is the same.
 */
export async function callOpenAIResponses(
  input: ModelStepInput,
  options: ProviderCallOptions = {},
  remoteMcpServers: RemoteMcpServers = {},
  client: OpenAI = cachedClient(clients, resolveClientSettings('openai', options), (settings) => new OpenAI({ ...settings, fetch: providerObservedFetch })),
  /** The `model` the request names when it is not the turn's: Azure's deployment. */
  requestModel?: string,
): Promise<ModelStepResult> {
  const request = { ...convertToResponsesRequest(input, remoteMcpServers), ...(requestModel !== undefined ? { model: requestModel } : {}) };
  const response = await requestStep(
    openAISdk,
    input.model.stream !== false,
    { plain: () => client.responses.create(request, { signal: options.signal }), streamed: () => streamResponse(client, request, options) },
    options,
  );
  return convertFromResponsesResponse(response);
}

/**
 * Whether the step asks for reasoning items: a reasoning model by name, or any model given a
 * reasoning effort (a compatible server may serve one under a name of its own).
 */
function wantsReasoning(input: ModelStepInput): boolean {
  return isOpenAIReasoningModel(input.model.model) || input.model.reasoningEffort !== undefined || input.model.reasoningSummary !== undefined;
}

/** The Responses request for one step. Exported for tests and for inspecting what is sent. */
export function convertToResponsesRequest(input: ModelStepInput, remoteMcpServers: RemoteMcpServers = {}): ResponseCreateParamsNonStreaming {
  const { model, maxTokens, temperature, reasoningEffort, reasoningSummary, serviceTier, metadata, store } = input.model;
  const reasoning = wantsReasoning(input);
  // Hosted tools (openai-hosted-tools.ts) beside the turn's own, and what brings their items back whole.
  const tools = [...input.tools.map(convertToResponsesTool), ...hostedTools(input.model, remoteMcpServers)];
  const include = [...(reasoning ? (['reasoning.encrypted_content'] as const) : []), ...hostedIncludes(input.model)];
  return {
    model,
    input: convertToResponsesInput(input.messages),
    // `instructions` rather than a system message: it applies to this call only, which is what a
    // turn's system prompt is (it is re-sent on every step anyway).
    ...(input.system ? { instructions: input.system } : {}),
    ...(tools.length > 0 ? { tools } : {}),
    // Nothing is kept at OpenAI unless the turn asks: the history is turnpike's, in Temporal.
    store: store ?? false,
    // Without it a `store: false` reasoning item comes back as a bare id that no later call can use.
    ...(include.length > 0 ? { include } : {}),
    ...(maxTokens !== undefined ? { max_output_tokens: maxTokens } : {}),
    ...(temperature !== undefined ? { temperature } : {}),
    ...(reasoningEffort !== undefined || reasoningSummary !== undefined
      ? { reasoning: { ...(reasoningEffort !== undefined ? { effort: reasoningEffort } : {}), ...(reasoningSummary !== undefined ? { summary: reasoningSummary } : {}) } }
      : {}),
    ...(serviceTier !== undefined ? { service_tier: serviceTier } : {}),
    ...(metadata !== undefined ? { metadata } : {}),
    // A typed final answer (docs/typed-output.md), the format flat beside its type.
    ...(input.output ? { text: { format: { type: 'json_schema' as const, ...jsonSchemaFormat(input.output) } } } : {}),
  };
}

/**
 * Neutral history → Responses input items, in order: user and assistant text as messages, tool
 * calls as `function_call` items, results as `function_call_output` items, and this provider's
 * reasoning as `reasoning` items exactly where the model produced them (before the calls it led
 * to). Reasoning from another provider, or without encrypted content, is dropped: OpenAI cannot
 * read an Anthropic signature, and with `store: false` a bare reasoning id points at nothing.
 */
export function convertToResponsesInput(messages: Message[]): ResponseInputItem[] {
  const items: ResponseInputItem[] = [];
  /** A provider approval's request item id, by its call id: its result goes back as the request's answer. */
  const approvals = new Map<string, string>();
  for (const message of messages) {
    switch (message.role) {
      case 'user':
        items.push({ role: 'user', content: convertUserContent(message.content) });
        break;
      case 'assistant':
        items.push(...convertAssistantMessage(message, approvals));
        break;
      case 'tool':
        for (const result of message.content) {
          const requestId = approvals.get(result.toolCallId);
          if (requestId !== undefined) items.push(approvalResponseOf(requestId, result));
          else items.push({ type: 'function_call_output', call_id: result.toolCallId, output: toolResultText(result.output) });
        }
        break;
    }
  }
  return items;
}

function convertUserContent(content: string | UserContentPart[]): string | ResponseInputContent[] {
  if (typeof content === 'string') return content;
  return content.map((part): ResponseInputContent => {
    switch (part.type) {
      case 'text':
        return { type: 'input_text', text: part.text };
      case 'image':
        return { type: 'input_image', detail: part.detail ?? 'auto', image_url: part.source.type === 'url' ? part.source.url : dataUrl(part.source) };
      case 'document':
        return part.source.type === 'url'
          ? { type: 'input_file', file_url: part.source.url }
          : { type: 'input_file', file_data: dataUrl(part.source), filename: part.filename ?? DEFAULT_DOCUMENT_FILENAME };
    }
  });
}

function convertAssistantMessage(message: AssistantMessage, approvals: Map<string, string>): ResponseInputItem[] {
  const items: ResponseInputItem[] = [];
  let text = '';
  const flushText = () => {
    // A plain string: the API takes earlier assistant text back this way without the output
    // message's id, which with `store: false` would point at nothing.
    if (text.length > 0) items.push({ role: 'assistant', content: text });
    text = '';
  };
  // The API refuses a reasoning item that nothing follows (e.g. a reply cut off while reasoning).
  const lastOutput = message.content.findLastIndex((part) => part.type === 'tool-call' || part.type === 'provider-tool' || (part.type === 'text' && part.text.length > 0));
  for (const [index, part] of message.content.entries()) {
    if (part.type === 'text') {
      text += part.text;
      continue;
    }
    flushText();
    if (part.type === 'reasoning') {
      const item = index < lastOutput ? reasoningItem(part) : undefined;
      if (item) items.push(item);
    } else if (part.type === 'provider-tool') {
      // A hosted tool OpenAI ran: its items exactly as received; another provider's are dropped.
      if (part.provider === 'openai') items.push(...(part.raw as ResponseInputItem[]));
    } else if (approvalRequestOf(part)) {
      // A remote MCP server's approval request: the item verbatim; its decision follows as the result.
      const request = approvalRequestOf(part)!;
      approvals.set(part.toolCallId, request.id);
      items.push(request);
    } else {
      items.push({
        type: 'function_call',
        call_id: part.toolCallId,
        name: part.toolName,
        // Malformed arguments go back verbatim, next to the error result that explains them.
        arguments: typeof part.input === 'string' ? part.input : JSON.stringify(part.input ?? {}),
      });
    }
  }
  flushText();
  return items;
}

/** A reasoning part → the reasoning item it came from, or nothing when it cannot be sent here. */
function reasoningItem(part: ReasoningPart): ResponseInputItem | undefined {
  if (part.provider !== 'openai' || part.itemId === undefined || part.encryptedContent === undefined) return undefined;
  return {
    type: 'reasoning',
    id: part.itemId,
    summary: (part.summary ?? []).map((text) => ({ type: 'summary_text' as const, text })),
    encrypted_content: part.encryptedContent,
  };
}

/**
 * `strict: false`, stated: the Responses API defaults to strict schemas, which require every
 * property and `additionalProperties: false`; a tool's zod schema need not be written that way,
 * and Chat Completions (non-strict by default) accepts the same schemas.
 */
function convertToResponsesTool(tool: ModelToolSpec): FunctionTool {
  return { type: 'function', name: tool.name, description: tool.description, parameters: tool.inputSchema, strict: false };
}
