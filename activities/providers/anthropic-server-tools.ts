/**
 * Claude's server tools (`ModelSettings.providerTools`): web search, web fetch and code execution,
 * which Anthropic runs itself within a model step.
 *
 * Out: each is offered beside the function tools with the API's versioned type; the container of
 * the latest code execution goes along as `container`. In: each `server_tool_use` block and its
 * result block (`web_search_tool_result`, `web_fetch_tool_result`, `bash_code_execution_tool_result`,
 * …) become one `ProviderToolPart` whose `raw` is the two blocks exactly as received (encrypted
 * content included), which anthropic-messages.ts sends back unchanged in their place.
 */
import type { ContentBlock, Message as AnthropicMessage, ToolUnion } from '@anthropic-ai/sdk/resources/messages';
import type { Message, ProviderToolContainer, ProviderToolPart, ProviderToolSpec, SourceReference } from '../../workflows/types/index.js';

/** turnpike's name of each server tool → the versioned tool type sent to the API. */
export const ANTHROPIC_SERVER_TOOL_TYPES: Readonly<Record<string, string>> = {
  web_search: 'web_search_20250305',
  web_fetch: 'web_fetch_20250910',
  code_execution: 'code_execution_20250825',
};

/**
 * `{ type: 'web_search', max_uses: 3 }` → `{ type: 'web_search_20250305', name: 'web_search', max_uses: 3 }`.
 * The options are Anthropic's own, passed through (the API checks them); the workflow checked the names.
 */
export function convertToAnthropicServerTools(specs: ProviderToolSpec[] | undefined): ToolUnion[] {
  return (specs ?? []).map(({ type, ...options }) => ({ ...options, type: ANTHROPIC_SERVER_TOOL_TYPES[type] ?? type, name: type }) as unknown as ToolUnion);
}

/**
 * The container to send: the one of the latest code execution in the history, unless it has
 * expired (then the API would refuse it; a new container starts without the old files).
 */
export function latestContainer(messages: Message[], now = Date.now()): string | undefined {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index];
    if (message.role !== 'assistant') continue;
    for (let partIndex = message.content.length - 1; partIndex >= 0; partIndex--) {
      const part = message.content[partIndex];
      if (part.type !== 'provider-tool' || part.provider !== 'anthropic' || !part.container) continue;
      const expires = part.container.expiresAt ? Date.parse(part.container.expiresAt) : NaN;
      return Number.isNaN(expires) || expires > now ? part.container.id : undefined;
    }
  }
  return undefined;
}

/** A response block, read by its fields. */
type Block = Record<string, unknown>;

/** A server tool's result block: it names the `server_tool_use` it answers. */
export function isServerToolResult(block: { type: string }): boolean {
  return block.type.endsWith('_tool_result') && 'tool_use_id' in block;
}

/**
 * Collects server tool calls while a response's blocks are read in order: `start` at each
 * `server_tool_use` (the part takes its place in the message), `finish` at its result block.
 */
export class ServerToolCalls {
  private readonly open = new Map<string, ProviderToolPart>();

  constructor(private readonly container: AnthropicMessage['container'] | undefined) {}

  start(serverToolUse: ContentBlock): ProviderToolPart {
    const block = serverToolUse as unknown as Block;
    const name = String(block.name);
    const codeExecution = name === 'code_execution' || name.endsWith('_code_execution');
    const part: ProviderToolPart = {
      type: 'provider-tool',
      provider: 'anthropic',
      toolCallId: String(block.id),
      toolName: codeExecution ? 'code_execution' : name,
      input: codeExecution && name !== 'code_execution' ? { tool: name, ...(block.input as object) } : block.input,
      raw: [block],
      ...(codeExecution && this.container ? { container: containerOf(this.container) } : {}),
    };
    this.open.set(part.toolCallId, part);
    return part;
  }

  /** False when no open call has the block's id (the block is then left out). */
  finish(result: ContentBlock): boolean {
    const block = result as unknown as Block;
    const part = this.open.get(String(block.tool_use_id));
    if (!part) return false;
    this.open.delete(part.toolCallId);
    part.raw.push(block);
    const { output, isError, sources } = summary(block);
    part.output = output;
    if (isError) part.isError = true;
    if (sources.length > 0) part.sources = sources;
    return true;
  }

  /**
   * A call whose result never came (the response was cut off): recorded as failed, with no blocks
   * to send back, because the API refuses a `server_tool_use` without its result.
   */
  close(): void {
    for (const part of this.open.values()) {
      part.raw = [];
      part.isError = true;
      part.output = 'the response ended before the tool returned a result';
    }
    this.open.clear();
  }
}

function containerOf(container: NonNullable<AnthropicMessage['container']>): ProviderToolContainer {
  return { id: container.id, ...(container.expires_at ? { expiresAt: container.expires_at } : {}) };
}

/** A result block → a readable output, whether it reports an error, and the pages it found. */
function summary(block: Block): { output: unknown; isError: boolean; sources: SourceReference[] } {
  const content = block.content as Record<string, unknown> | Array<Record<string, unknown>> | undefined;
  if (Array.isArray(content)) {
    // web_search_tool_result: its results (their encrypted content stays in `raw` only).
    const results = content.filter((item) => item.type === 'web_search_result');
    const sources = results.map((item) => ({ url: String(item.url), ...(typeof item.title === 'string' ? { title: item.title } : {}) }));
    return { output: { results: results.map((item) => ({ url: item.url, title: item.title, pageAge: item.page_age ?? null })) }, isError: false, sources };
  }
  if (!content || typeof content !== 'object') return { output: null, isError: false, sources: [] };
  const type = String(content.type);
  if (type.endsWith('_error')) return { output: { error: content.error_code ?? type }, isError: true, sources: [] };
  if (type === 'web_fetch_result') {
    const document = (content.content ?? {}) as Record<string, unknown>;
    const title = typeof document.title === 'string' ? document.title : undefined;
    const url = String(content.url);
    return { output: { url, ...(title !== undefined ? { title } : {}), retrievedAt: content.retrieved_at ?? null }, isError: false, sources: [{ url, ...(title !== undefined ? { title } : {}) }] };
  }
  if ('stdout' in content) {
    // bash_code_execution_result, code_execution_result: a command that exits non-zero still ran.
    return { output: { stdout: content.stdout, stderr: content.stderr, returnCode: content.return_code }, isError: false, sources: [] };
  }
  // text_editor_code_execution_*_result: small records (a view's text, a create, a replacement).
  return { output: content, isError: false, sources: [] };
}
