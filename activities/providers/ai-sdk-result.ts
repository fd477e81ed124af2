/**
 * An AI SDK model's output → turnpike's neutral step result: the stream parts of `doStream`
 * (assembled as they arrive, deltas passed to the turn's listener) or the content of `doGenerate`.
 * Each text, reasoning and tool-call part keeps the `providerMetadata` the provider attached, so
 * it is sent back with the part on the next step (Gemini's thought signatures), however long the
 * turn parked in between. Tools the provider ran and the reply's sources become `ProviderToolPart`s
 * (ai-sdk-provider-tools.ts).
 */
import type {
  LanguageModelV4Content,
  LanguageModelV4FinishReason,
  LanguageModelV4GenerateResult,
  LanguageModelV4StreamPart,
  LanguageModelV4Usage,
} from '@ai-sdk/provider';
import type { AssistantMessage, FinishReason, ModelStepResult, ProviderMetadata, Usage } from '../../workflows/types/index.js';
import { AiSdkProviderTools } from './ai-sdk-provider-tools.js';
import { deltaEmitter } from './emit-delta.js';
import { parseToolArguments } from './tool-arguments.js';
import type { ModelStreamListener } from './stream-delta.js';

type Part = AssistantMessage['content'][number];

/** What a provider's metadata becomes in history: JSON only, dropped when empty. */
function metadataOf(metadata: unknown): { providerMetadata?: ProviderMetadata } {
  if (metadata === undefined || metadata === null || typeof metadata !== 'object' || Object.keys(metadata).length === 0) return {};
  return { providerMetadata: JSON.parse(JSON.stringify(metadata)) as ProviderMetadata };
}

/**
 * One content part of the spec → turnpike's part, or undefined for what turnpike does not carry
 * (see docs/models.md) or what joins a part already placed (a provider-run tool's result, a
 * further source).
 */
function partOf(content: LanguageModelV4Content, hosted: AiSdkProviderTools): Part | undefined {
  switch (content.type) {
    case 'text':
      return { type: 'text', text: content.text, ...metadataOf(content.providerMetadata) };
    case 'reasoning':
      return { type: 'reasoning', provider: 'ai-sdk', text: content.text, ...metadataOf(content.providerMetadata) };
    case 'tool-call':
      // A call the provider ran itself (code execution, a search tool) is no call for turnpike to settle.
      if (content.providerExecuted) return hosted.call(content);
      return { type: 'tool-call', toolCallId: content.toolCallId, toolName: content.toolName, input: parseToolArguments(content.input), ...metadataOf(content.providerMetadata) };
    case 'tool-result':
      return hosted.result(content);
    case 'source':
      return hosted.source(content);
    default:
      return undefined;
  }
}

/** The spec's usage → turnpike's: totals, with cache reads and writes and reasoning when reported. */
export function usageOf(usage: LanguageModelV4Usage | undefined): Usage {
  const input = usage?.inputTokens;
  const output = usage?.outputTokens;
  return {
    inputTokens: input?.total ?? 0,
    outputTokens: output?.total ?? 0,
    ...(typeof input?.cacheRead === 'number' ? { cachedInputTokens: input.cacheRead } : {}),
    ...(typeof input?.cacheWrite === 'number' && input.cacheWrite > 0 ? { cacheWriteInputTokens: input.cacheWrite } : {}),
    ...(typeof output?.reasoning === 'number' ? { reasoningTokens: output.reasoning } : {}),
  };
}

/** The spec's unified finish reason → turnpike's; `error`, `interrupted` and `other` are `other`. */
export function finishOf(finishReason: LanguageModelV4FinishReason | string | undefined): Pick<ModelStepResult, 'finishReason' | 'providerFinishReason'> {
  // A v3 model of AI SDK 5 reported a bare string; v3 and v4 report { unified, raw }.
  const unified = typeof finishReason === 'string' ? finishReason : finishReason?.unified;
  const raw = typeof finishReason === 'string' ? undefined : finishReason?.raw;
  const mapped: FinishReason = unified === 'stop' || unified === 'tool-calls' || unified === 'length' || unified === 'content-filter' ? unified : 'other';
  return { finishReason: mapped, ...(raw ? { providerFinishReason: raw } : {}) };
}

/** A `doGenerate` result → the step result. */
export function generateResultOf(result: LanguageModelV4GenerateResult): ModelStepResult {
  const hosted = new AiSdkProviderTools();
  const content = result.content.map((part) => partOf(part, hosted)).filter((part): part is Part => part !== undefined);
  return { message: { role: 'assistant', content }, ...finishOf(result.finishReason), usage: usageOf(result.usage) };
}

/**
 * Reads a `doStream` stream to its end and returns the step result. Text and reasoning are
 * assembled by block id; a tool call is taken from its final `tool-call` part (the deltas before
 * it are only passed on). An `error` part ends the step with that error, as the `ai` package does.
 */
export async function streamResultOf(stream: ReadableStream<LanguageModelV4StreamPart>, listener: ModelStreamListener | undefined): Promise<ModelStepResult> {
  const emit = deltaEmitter(listener);
  const content: Part[] = [];
  const open = new Map<string, Extract<Part, { type: 'text' | 'reasoning' }>>();
  const hosted = new AiSdkProviderTools();
  let finish: Extract<LanguageModelV4StreamPart, { type: 'finish' }> | undefined;
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value: part } = await reader.read();
      if (done) break;
      switch (part.type) {
        case 'text-start':
        case 'reasoning-start': {
          const block: Extract<Part, { type: 'text' | 'reasoning' }> =
            part.type === 'text-start' ? { type: 'text', text: '' } : { type: 'reasoning', provider: 'ai-sdk', text: '' };
          Object.assign(block, metadataOf(part.providerMetadata));
          open.set(`${block.type}:${part.id}`, block);
          content.push(block);
          break;
        }
        case 'text-delta':
        case 'reasoning-delta':
        case 'text-end':
        case 'reasoning-end': {
          const kind = part.type.startsWith('text') ? 'text' : 'reasoning';
          const block = open.get(`${kind}:${part.id}`);
          if (!block) break;
          if ('delta' in part && part.delta) {
            block.text += part.delta;
            emit(kind === 'text' ? { type: 'text-delta', text: part.delta } : { type: 'reasoning-delta', text: part.delta });
          }
          // A provider may attach its metadata at the start, on a delta or at the end (Gemini
          // signs the last piece); the latest wins, as in the `ai` package.
          if (part.providerMetadata) Object.assign(block, metadataOf(part.providerMetadata));
          if (part.type.endsWith('-end')) open.delete(`${kind}:${part.id}`);
          break;
        }
        case 'tool-input-start':
          if (!part.providerExecuted) emit({ type: 'tool-input-start', toolCallId: part.id, toolName: part.toolName });
          break;
        case 'tool-input-delta':
          emit({ type: 'tool-input-delta', toolCallId: part.id, inputTextDelta: part.delta });
          break;
        case 'tool-call':
        case 'tool-result':
        case 'source': {
          const placed = partOf(part, hosted);
          if (placed) content.push(placed);
          break;
        }
        case 'finish':
          finish = part;
          break;
        case 'error':
          throw part.error;
        default:
          // stream-start, response-metadata, files, raw: not carried.
          break;
      }
    }
  } finally {
    reader.releaseLock();
  }
  if (!finish) throw new StreamEndedEarly();
  // A text block with neither text nor metadata says nothing and could not be sent back.
  const kept = content.filter((part) => part.type === 'tool-call' || part.type === 'provider-tool' || part.text !== '' || part.providerMetadata !== undefined);
  return { message: { role: 'assistant', content: kept }, ...finishOf(finish.finishReason), usage: usageOf(finish.usage) };
}

/** The stream closed without its `finish` part: the reply may be incomplete, so the step is retried. */
export class StreamEndedEarly extends Error {
  constructor() {
    super('the stream ended before its finish part');
    this.name = 'StreamEndedEarly';
  }
}
