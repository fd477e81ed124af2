/**
 * Anthropic prompt caching for a turn's stable prefix.
 *
 * A parked agent loop sends the same tools, system prompt and earlier messages at every step.
 * Marking them with `cache_control` lets the API read that prefix from its cache (billed at a
 * tenth of the input price) instead of processing it again. The API allows at most 4 breakpoints;
 * a breakpoint caches everything before it, in the order tools → system → messages:
 *
 * 1. the last tool: the tool definitions, shared by every turn that offers the same tools;
 * 2. the system prompt: with 1, shared by every turn of the conversation;
 * 3. the last user turn before the newest one: the prefix the previous step wrote, read back
 *    exactly, however many blocks the model added since (the API looks back only ~20 blocks
 *    from a breakpoint on its own);
 * 4. the newest user turn: writes the whole prompt, for the next step to read.
 *
 * Only user turns get message breakpoints: their blocks (text, tool results) all take
 * `cache_control`, while an assistant turn may end in a thinking block, which does not. A prefix
 * shorter than the model's minimum (1,024–4,096 tokens) is simply not cached; writing costs 25%
 * more than plain input for the tokens written, which the next step's read repays.
 */
import type { MessageCreateParamsNonStreaming, MessageParam, TextBlockParam } from '@anthropic-ai/sdk/resources/messages';

/** The API's limit on `cache_control` blocks per request. */
export const MAX_CACHE_BREAKPOINTS = 4;

const EPHEMERAL = { type: 'ephemeral' } as const;

/** `params` with cache breakpoints on its stable prefix (see above); `params` itself is not changed. */
export function withCacheBreakpoints(params: MessageCreateParamsNonStreaming): MessageCreateParamsNonStreaming {
  const tools = params.tools?.map((tool, index, all) => (index === all.length - 1 ? { ...tool, cache_control: EPHEMERAL } : tool));
  const system: TextBlockParam[] | undefined =
    typeof params.system === 'string'
      ? [{ type: 'text', text: params.system, cache_control: EPHEMERAL }]
      : params.system?.map((block, index, all) => (index === all.length - 1 ? { ...block, cache_control: EPHEMERAL } : block));
  const userTurns = params.messages.flatMap((message, index) => (message.role === 'user' ? [index] : []));
  const marked = new Set(userTurns.slice(-2));
  const messages = params.messages.map((message, index) => (marked.has(index) ? withBreakpointOnLastBlock(message) : message));
  return { ...params, messages, ...(tools ? { tools } : {}), ...(system ? { system } : {}) };
}

function withBreakpointOnLastBlock(message: MessageParam): MessageParam {
  const blocks = typeof message.content === 'string' ? [{ type: 'text' as const, text: message.content }] : message.content;
  if (blocks.length === 0) return message;
  const last = blocks.at(-1)!;
  // Thinking blocks cannot carry cache_control; user turns never hold them, but stay safe.
  if (last.type === 'thinking' || last.type === 'redacted_thinking') return message;
  return { ...message, content: [...blocks.slice(0, -1), { ...last, cache_control: EPHEMERAL }] } as MessageParam;
}
