/**
 * What an AI SDK model's provider ran itself, as turnpike's `ProviderToolPart` (provider `ai-sdk`):
 *
 * - a provider-executed `tool-call` (`providerExecuted: true`: Gemini's `code_execution`, its
 *   server tools `server:…`, …) and the `tool-result` with its id become one part, `raw` holding
 *   the two spec parts exactly as received, `providerMetadata` included. They go back, in their
 *   place, as the spec's assistant `tool-call` (`providerExecuted: true`) and `tool-result`
 *   parts with that metadata as `providerOptions`, to `ai-sdk` models only.
 * - the step's `source` parts (Gemini's Google Search grounding: `groundingMetadata`) are tied to
 *   no call in the spec, so they become one part of their own, `toolName: 'sources'`, whose
 *   `sources` are the URL sources (what `useChat` shows as `source-url` parts). Sources are
 *   output only: nothing of that part is sent back to any model.
 */
import type { LanguageModelV4Message, LanguageModelV4Source, LanguageModelV4ToolCall, LanguageModelV4ToolResult, SharedV4ProviderOptions } from '@ai-sdk/provider';
import type { ProviderToolPart, SourceReference } from '../../workflows/types/index.js';
import { parseToolArguments } from './tool-arguments.js';

/** The `toolName` of the part that carries a step's sources. */
export const SOURCES_TOOL_NAME = 'sources';

const json = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/** Assembles a step's provider-run calls, their results and its sources; parts are returned when new, to be placed in order. */
export class AiSdkProviderTools {
  private readonly calls = new Map<string, ProviderToolPart>();
  private sources: ProviderToolPart | undefined;

  /** A provider-executed call: a new part. */
  call(part: LanguageModelV4ToolCall): ProviderToolPart {
    const tool: ProviderToolPart = { type: 'provider-tool', provider: 'ai-sdk', toolCallId: part.toolCallId, toolName: part.toolName, input: parseToolArguments(part.input), raw: [json(part)] };
    this.calls.set(part.toolCallId, tool);
    return tool;
  }

  /** A provider's result: joins its call's part, or is a new part when its call was not seen. */
  result(part: LanguageModelV4ToolResult): ProviderToolPart | undefined {
    if (part.preliminary) return undefined;
    const known = this.calls.get(part.toolCallId);
    const tool = known ?? { type: 'provider-tool' as const, provider: 'ai-sdk' as const, toolCallId: part.toolCallId, toolName: part.toolName, raw: [] };
    tool.output = json(part.result);
    if (part.isError) tool.isError = true;
    tool.raw.push(json(part));
    return known ? undefined : tool;
  }

  /** A source: joins the step's `sources` part, which is returned the first time. */
  source(part: LanguageModelV4Source): ProviderToolPart | undefined {
    const first = this.sources === undefined;
    const sources = (this.sources ??= { type: 'provider-tool', provider: 'ai-sdk', toolCallId: `sources-${part.id}`, toolName: SOURCES_TOOL_NAME, input: {}, output: [], raw: [] });
    sources.raw.push(json(part));
    if (part.sourceType === 'url') {
      const reference: SourceReference = { url: part.url, ...(part.title !== undefined ? { title: part.title } : {}) };
      (sources.sources ??= []).push(reference);
      (sources.output as unknown[]).push(reference);
    } else {
      (sources.output as unknown[]).push({ title: part.title, mediaType: part.mediaType, ...(part.filename !== undefined ? { filename: part.filename } : {}) });
    }
    return first ? sources : undefined;
  }
}

type AssistantContent = Extract<LanguageModelV4Message, { role: 'assistant' }>['content'];

/** A part an `ai-sdk` model's provider ran → the spec's assistant parts to send back; sources send nothing. */
export function providerToolPrompt(part: ProviderToolPart): AssistantContent {
  if (part.provider !== 'ai-sdk') return [];
  const content: AssistantContent = [];
  for (const raw of part.raw as Array<(LanguageModelV4ToolCall | LanguageModelV4ToolResult | LanguageModelV4Source) & { providerMetadata?: SharedV4ProviderOptions }>) {
    const providerOptions = raw.providerMetadata ? { providerOptions: raw.providerMetadata } : {};
    if (raw.type === 'tool-call') {
      content.push({ type: 'tool-call', toolCallId: raw.toolCallId, toolName: raw.toolName, input: raw.input, providerExecuted: true, ...providerOptions });
    } else if (raw.type === 'tool-result') {
      content.push({ type: 'tool-result', toolCallId: raw.toolCallId, toolName: raw.toolName, output: { type: raw.isError ? 'error-json' : 'json', value: raw.result }, ...providerOptions });
    }
  }
  return content;
}
