/**
 * Reading OpenAI's Responses API: a finished `Response` (whether it came whole or was assembled
 * from a stream by openai-responses-stream.ts) → turnpike's provider-neutral step result: reasoning
 * items kept whole with their encrypted content, text, function calls, MCP approval requests and
 * hosted tools' items (openai-hosted-tools.ts), the pages the answer cites, the finish reason and
 * the usage. Building the request is openai-responses.ts.
 */
import type { Response as OpenAIResponse, ResponseOutputText, ResponseUsage } from 'openai/resources/responses/responses';
import type { AssistantMessage, FinishReason, ModelStepResult, ProviderToolPart, SourceReference, Usage } from '../../workflows/types/index.js';
import { unexpectedResponse } from './errors.js';
import { parseToolArguments } from './openai.js';
import { approvalCallOf, citedSources, hostedToolUsage, providerToolPartOf } from './openai-hosted-tools.js';

/** A Responses `Response` → the neutral step result. */
export function convertFromResponsesResponse(response: OpenAIResponse): ModelStepResult {
  if (!Array.isArray(response?.output)) throw unexpectedResponse('openai', 'the response has no output');
  const content: AssistantMessage['content'] = [];
  const cited: ResponseOutputText[] = [];
  let refused = false;
  for (const item of response.output) {
    switch (item.type) {
      case 'reasoning': {
        const summary = item.summary.map((part) => part.text);
        content.push({
          type: 'reasoning',
          provider: 'openai',
          text: summary.join('\n\n'),
          itemId: item.id,
          ...(item.encrypted_content ? { encryptedContent: item.encrypted_content } : {}),
          summary,
        });
        break;
      }
      case 'message':
        for (const part of item.content) {
          if (part.type === 'output_text') content.push({ type: 'text', text: part.text });
          else if (part.type === 'refusal') refused = true;
        }
        cited.push(...item.content.filter((part) => part.type === 'output_text'));
        break;
      case 'function_call':
        content.push({ type: 'tool-call', toolCallId: item.call_id, toolName: item.name, input: parseToolArguments(item.arguments) });
        break;
      case 'mcp_approval_request':
        content.push(approvalCallOf(item));
        break;
      default: {
        // A hosted tool's call (openai-hosted-tools.ts), kept verbatim; any other item is not offered.
        const part = providerToolPartOf(item);
        if (part) content.push(part);
      }
    }
  }
  addCitations(content, citedSources(cited));
  const { finishReason, providerFinishReason } = mapResponsesStatus(response, content.some((part) => part.type === 'tool-call'), refused);
  return {
    message: { role: 'assistant', content: mergeTexts(content) },
    finishReason,
    providerFinishReason,
    usage: { ...convertResponsesUsage(response.usage), ...hostedToolUsage(response.output) },
  };
}

/**
 * The pages the answer cites (`url_citation` annotations) join the sources of the step's last web
 * search, which found them; the text goes back without them (earlier assistant text is plain).
 */
function addCitations(content: AssistantMessage['content'], sources: SourceReference[]): void {
  const search = content.findLast((part): part is ProviderToolPart => part.type === 'provider-tool' && part.toolName === 'web_search');
  if (!search || sources.length === 0) return;
  const known = search.sources ?? [];
  search.sources = [...known, ...sources.filter((source) => !known.some((existing) => existing.url === source.url))];
}

/** Adjacent text parts (one message item may hold several `output_text` parts) become one. */
function mergeTexts(content: AssistantMessage['content']): AssistantMessage['content'] {
  const merged: AssistantMessage['content'] = [];
  for (const part of content) {
    const previous = merged.at(-1);
    if (part.type === 'text' && previous?.type === 'text') merged[merged.length - 1] = { type: 'text', text: previous.text + part.text };
    else merged.push(part);
  }
  return merged;
}

/**
 * `status` (and `incomplete_details.reason`) → neutral finish reason. A completed response with a
 * function call is `tool-calls`; a refusal part is `content-filter` (the model declined, as
 * Anthropic's `refusal`); `incomplete` is `length` for `max_output_tokens` and `content-filter`
 * for `content_filter`; `failed`, `cancelled` and the background states `queued`/`in_progress`
 * are `other`. `providerFinishReason` is the incomplete reason when there is one, else the status.
 */
export function mapResponsesStatus(
  response: Pick<OpenAIResponse, 'status' | 'incomplete_details'>,
  hasToolCalls: boolean,
  refused = false,
): { finishReason: FinishReason; providerFinishReason: string } {
  const status = response.status ?? 'completed';
  if (status === 'incomplete') {
    const reason = response.incomplete_details?.reason;
    const finishReason: FinishReason = reason === 'max_output_tokens' ? 'length' : reason === 'content_filter' ? 'content-filter' : 'other';
    return { finishReason, providerFinishReason: reason ?? 'incomplete' };
  }
  if (status !== 'completed') return { finishReason: 'other', providerFinishReason: status };
  if (refused && !hasToolCalls) return { finishReason: 'content-filter', providerFinishReason: 'refusal' };
  return { finishReason: hasToolCalls ? 'tool-calls' : 'stop', providerFinishReason: status };
}

/** Responses usage → neutral usage; optional counts only when the API reported them. */
export function convertResponsesUsage(usage: ResponseUsage | null | undefined): Usage {
  const cached = usage?.input_tokens_details?.cached_tokens;
  const reasoning = usage?.output_tokens_details?.reasoning_tokens;
  return {
    inputTokens: usage?.input_tokens ?? 0,
    outputTokens: usage?.output_tokens ?? 0,
    ...(typeof cached === 'number' ? { cachedInputTokens: cached } : {}),
    ...(typeof reasoning === 'number' ? { reasoningTokens: reasoning } : {}),
  };
}
