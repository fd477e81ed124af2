/**
 * Neutral history → Messages API turns. The Messages API is stricter about shape than Chat
 * Completions: turns alternate user/assistant, and every `tool_use` is answered by a
 * `tool_result` block at the start of the very next user message. The conversion below produces
 * exactly that from neutral history; the tools go as Messages API tools.
 */
import type {
  Base64ImageSource,
  ContentBlockParam,
  DocumentBlockParam,
  ImageBlockParam,
  MessageParam,
  TextBlockParam,
  TextCitationParam,
  Tool,
  ToolResultBlockParam,
} from '@anthropic-ai/sdk/resources/messages';
import type { AssistantMessage, BinarySource, Message, ModelToolSpec, ProviderToolPart, ReasoningPart, TextPart, ToolMessage, UserContentPart, UserMessage } from '../../workflows/types/index.js';
import { inlineData } from './binary-sources.js';
import { toolResultText } from './errors.js';

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
    if (part.type === 'text') return hasVisibleText(part) ? [textBlock(part)] : [];
    if (part.type === 'reasoning') return thinkingBlocks(part);
    if (part.type === 'provider-tool') return providerToolBlocks(part);
    return [{ type: 'tool_use', id: part.toolCallId, name: part.toolName, input: toToolUseInput(part.input) }];
  });
}

/** A text part, with the citations Claude gave it (web search results it cited), exactly as received. */
function textBlock(part: TextPart): TextBlockParam {
  return part.citations?.length ? { type: 'text', text: part.text, citations: part.citations as TextCitationParam[] } : { type: 'text', text: part.text };
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

/**
 * A hosted tool Claude ran → its blocks exactly as the API returned them. Another provider's
 * hosted tool calls mean nothing here and are dropped, as its reasoning is.
 */
function providerToolBlocks(part: ProviderToolPart): ContentBlockParam[] {
  return part.provider === 'anthropic' ? (part.raw as ContentBlockParam[]) : [];
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
export function convertToAnthropicTool(tool: ModelToolSpec): Tool {
  return {
    name: tool.name,
    description: tool.description,
    input_schema: tool.inputSchema as Tool.InputSchema,
  };
}
