/**
 * The fake Anthropic's server tools: web search, web fetch and code execution, as the Messages API
 * returns them and checks them when they come back.
 *
 * A reply scripted with `hosted` calls carries, for each, a `server_tool_use` block and its result
 * block in the shapes of recorded API responses (vercel/ai's fixtures): web search results with
 * `encrypted_content` (signed with a secret of this server), a web fetch's document, a bash
 * command's output; `citations: true` makes the reply's text cite the search results
 * (`web_search_result_location` with a signed `encrypted_index`). Usage counts the searches and
 * fetches in `server_tool_use`; code execution runs in a container whose id the response gives.
 *
 * A request is refused as the API refuses it when a `server_tool_use` is not followed by its result
 * block in the same assistant turn, or a result block answers no `server_tool_use` before it (the
 * API's texts); and, with this fake's own texts, when a block, an encrypted content or a citation
 * comes back different from how it was issued, or when a request continues code execution without
 * the container it ran in.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { Json } from './server.js';

/**
 * One server tool call the fake model makes, before its text. `unanswered`: the reply was cut off
 * by `max_tokens` right after the call's `server_tool_use`, so its result block never came (only
 * the last call of a reply with `finishReason: 'max_tokens'` and nothing after it).
 */
export type ScriptedHostedCall = (
  | { tool: 'web_search'; query: string; results: Array<{ url: string; title: string }> }
  | { tool: 'web_fetch'; url: string; title: string; text: string }
  | { tool: 'code_execution'; command: string; stdout: string; stderr?: string; returnCode?: number }
) & { unanswered?: true };

/** The tool type the request must offer for each scripted call, and its name. */
const SERVER_TOOL_TYPES: Record<string, { name: string; options: string[] }> = {
  web_search_20250305: { name: 'web_search', options: ['max_uses', 'allowed_domains', 'blocked_domains', 'user_location'] },
  web_fetch_20250910: { name: 'web_fetch', options: ['max_uses', 'allowed_domains', 'blocked_domains', 'citations', 'max_content_tokens'] },
  code_execution_20250825: { name: 'code_execution', options: [] },
};

/** The result block type that answers each server tool. */
const RESULT_TYPES: Record<string, string> = {
  web_search: 'web_search_tool_result',
  web_fetch: 'web_fetch_tool_result',
  code_execution: 'code_execution_tool_result',
  bash_code_execution: 'bash_code_execution_tool_result',
  text_editor_code_execution: 'text_editor_code_execution_tool_result',
};
const RESULT_BLOCK_TYPES = new Set(Object.values(RESULT_TYPES));

const isObject = (value: unknown): value is Record<string, Json> => typeof value === 'object' && value !== null && !Array.isArray(value);
const blocksOf = (message: Record<string, Json>): Array<Record<string, Json>> => (Array.isArray(message.content) ? message.content : []);

/** JSON with sorted keys: two blocks are the same when this is. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isObject(value)) return `{${Object.keys(value).sort().map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`).join(',')}}`;
  return JSON.stringify(value);
}

/** The server tool names a request offers (`web_search`, …). */
export function offeredServerTools(body: Json): Set<string> {
  const tools: unknown[] = Array.isArray(body?.tools) ? body.tools : [];
  return new Set(tools.flatMap((tool) => (isObject(tool) && SERVER_TOOL_TYPES[tool.type] ? [SERVER_TOOL_TYPES[tool.type].name] : [])));
}

/** What this server issued, to recognise it when it comes back. */
export class ServerToolLedger {
  private readonly secret = randomBytes(32);
  /** Each issued server_tool_use and result block, by the call's id. */
  private readonly issued = new Map<string, { use: Json; result: Json; container?: string }>();
  private readonly citations = new Map<string, Json>();

  private mac(kind: string, text: string): string {
    return createHmac('sha256', this.secret).update(`${kind}\0${text}`).digest('base64');
  }

  /** Opaque like the API's: a nonce and a MAC over what it stands for. */
  private seal(kind: string, text: string): string {
    const nonce = randomBytes(18).toString('base64');
    return `${nonce}${this.mac(kind, `${nonce}\0${text}`)}`;
  }

  private verify(kind: string, text: string, sealed: unknown): boolean {
    return typeof sealed === 'string' && sealed.length > 24 && sealed.slice(24) === this.mac(kind, `${sealed.slice(0, 24)}\0${text}`);
  }

  /** The blocks of a reply's server tool calls, the text's citations, and what they add to usage. */
  reply(body: Json, calls: ScriptedHostedCall[], cite: boolean, nextId: (prefix: string) => string) {
    const blocks: Json[] = [];
    let container: { id: string; expires_at: string } | undefined;
    const given = typeof body.container === 'string' ? body.container : isObject(body.container) ? body.container.id : undefined;
    for (const call of calls) {
      const id = nextId('srvtoolu_');
      let use: Json;
      let result: Json;
      if (call.tool === 'web_search') {
        use = { type: 'server_tool_use', id, name: 'web_search', input: { query: call.query } };
        const results = call.results.map((found) => ({ type: 'web_search_result', title: found.title, url: found.url, encrypted_content: this.seal('search', found.url), page_age: null }));
        result = { type: 'web_search_tool_result', tool_use_id: id, content: results };
      } else if (call.tool === 'web_fetch') {
        use = { type: 'server_tool_use', id, name: 'web_fetch', input: { url: call.url } };
        const document = { type: 'document', source: { type: 'text', media_type: 'text/plain', data: call.text }, title: call.title };
        result = { type: 'web_fetch_tool_result', tool_use_id: id, content: { type: 'web_fetch_result', url: call.url, retrieved_at: new Date().toISOString(), content: document } };
      } else {
        container ??= { id: given ?? nextId('container_'), expires_at: new Date(Date.now() + 30 * 86_400_000).toISOString() };
        use = { type: 'server_tool_use', id, name: 'bash_code_execution', input: { command: call.command } };
        const output = { type: 'bash_code_execution_result', stdout: call.stdout, stderr: call.stderr ?? '', return_code: call.returnCode ?? 0, content: [] };
        result = { type: 'bash_code_execution_tool_result', tool_use_id: id, content: output };
      }
      this.issued.set(id, { use, result, ...(container && call.tool === 'code_execution' ? { container: container.id } : {}) });
      // Cut off before the result: the use alone, which the API refuses when it comes back.
      blocks.push(...(call.unanswered ? [use] : [use, result]));
    }
    const searched = blocks.find((block) => block.type === 'web_search_tool_result');
    const citations = cite && searched ? searched.content.map((found: Json) => this.citation(found)) : undefined;
    const usage = {
      web_search_requests: calls.filter((call) => call.tool === 'web_search').length,
      web_fetch_requests: calls.filter((call) => call.tool === 'web_fetch').length,
    };
    return { blocks, citations, usage, container };
  }

  private citation(found: Json): Json {
    const citedText = `${found.title}: what the page says.`;
    const citation = { type: 'web_search_result_location', cited_text: citedText, url: found.url, title: found.title, encrypted_index: this.seal('index', citedText) };
    this.citations.set(citation.encrypted_index, citation);
    return citation;
  }

  /** Why the request's server tool blocks, citations and container are not what the API accepts; empty when they are. */
  validate(body: Json): string[] {
    const messages: Array<Record<string, Json>> = Array.isArray(body?.messages) ? body.messages : [];
    const errors: string[] = [];
    let container: string | undefined;
    messages.forEach((message, index) => {
      if (message.role !== 'assistant') return;
      const open = new Map<string, string>();
      blocksOf(message).forEach((block, blockIndex) => {
        const at = `messages.${index}.content.${blockIndex}`;
        if (block.type === 'server_tool_use') {
          open.set(block.id, block.name);
          errors.push(...this.sameAsIssued(block, this.issued.get(block.id)?.use, at));
        } else if (RESULT_BLOCK_TYPES.has(block.type)) {
          if (!open.has(block.tool_use_id)) {
            errors.push(`${at}: unexpected \`tool_use_id\` found in \`${block.type}\` blocks: ${block.tool_use_id}. Each \`${block.type}\` block must have a corresponding \`server_tool_use\` block before it.`);
          }
          open.delete(block.tool_use_id);
          const issued = this.issued.get(block.tool_use_id);
          errors.push(...this.encryptedContent(block, at), ...this.sameAsIssued(block, issued?.result, at));
          if (issued?.container) container = issued.container;
        } else if (block.type === 'text' && Array.isArray(block.citations)) {
          block.citations.forEach((citation: Json, citationIndex: number) => {
            if (citation?.type !== 'web_search_result_location') return;
            const known = this.verify('index', citation.cited_text, citation.encrypted_index) ? this.citations.get(citation.encrypted_index) : undefined;
            if (!known || canonical(known) !== canonical(citation)) errors.push(`${at}.citations.${citationIndex}: Invalid \`encrypted_index\` in \`web_search_result_location\` citation`);
          });
        }
      });
      for (const [id, name] of open) errors.push(`messages.${index}: \`${name}\` tool use with id \`${id}\` was found without a corresponding \`${RESULT_TYPES[name] ?? 'tool_result'}\` block`);
    });
    const given = typeof body?.container === 'string' ? body.container : isObject(body?.container) ? body.container.id : undefined;
    if (container !== undefined && given !== container) {
      errors.push(`container: the code execution in this conversation ran in container \`${container}\`; send \`container: "${container}"\` to continue it (got ${given === undefined ? 'none' : `\`${given}\``})`);
    }
    return errors;
  }

  private encryptedContent(block: Json, at: string): string[] {
    if (block.type !== 'web_search_tool_result' || !Array.isArray(block.content)) return [];
    return block.content.flatMap((found: Json, index: number) =>
      found?.type === 'web_search_result' && !this.verify('search', found.url, found.encrypted_content) ? [`${at}.content.${index}: Invalid \`encrypted_content\` in \`web_search_result\` block`] : [],
    );
  }

  private sameAsIssued(block: Json, issued: Json, at: string): string[] {
    if (issued === undefined) return [`${at}: \`${block.type}\` block was not returned by this API (id ${String(block.id ?? block.tool_use_id)})`];
    return canonical(block) === canonical(issued) ? [] : [`${at}: \`${block.type}\` blocks cannot be modified; send them back exactly as they were returned`];
  }
}

/** A server tool definition in `tools`: a known type, its name, and only its options. */
export function validateServerToolDefinition(tool: Record<string, Json>, index: number): string[] {
  const known = SERVER_TOOL_TYPES[tool.type];
  if (!known) return [`tools.${index}: Input tag '${String(tool.type)}' found using 'type' does not match any of the expected tags`];
  const at = `tools.${index}.${String(tool.type)}`;
  const errors: string[] = [];
  if (tool.name !== known.name) errors.push(`${at}.name: Input should be '${known.name}'`);
  for (const key of Object.keys(tool)) {
    if (!['type', 'name', 'cache_control', ...known.options].includes(key)) errors.push(`${at}.${key}: Extra inputs are not permitted`);
  }
  if (tool.max_uses !== undefined && !(Number.isInteger(tool.max_uses) && tool.max_uses > 0)) errors.push(`${at}.max_uses: Input should be greater than 0`);
  return errors;
}

/** A server tool block's shape: only in assistant turns, with its ids. */
export function validateServerToolBlock(block: Record<string, Json>, at: string, role: string): string[] {
  if (block.type !== 'server_tool_use' && !RESULT_BLOCK_TYPES.has(block.type)) return [`${at}: Input tag '${String(block.type)}' found using 'type' does not match any of the expected tags`];
  if (role !== 'assistant') return [`${at}: \`${String(block.type)}\` blocks can only be in \`assistant\` messages`];
  if (block.type === 'server_tool_use') {
    const errors: string[] = [];
    if (typeof block.id !== 'string' || !/^srvtoolu_[a-zA-Z0-9_]+$/.test(block.id)) errors.push(`${at}.server_tool_use.id: String should match pattern '^srvtoolu_[a-zA-Z0-9_]+$'`);
    if (!RESULT_TYPES[block.name]) errors.push(`${at}.server_tool_use.name: Input should be 'web_search', 'web_fetch', 'code_execution', 'bash_code_execution' or 'text_editor_code_execution'`);
    if (!isObject(block.input)) errors.push(`${at}.server_tool_use.input: Input should be a valid dictionary`);
    return errors;
  }
  return typeof block.tool_use_id === 'string' ? [] : [`${at}.${String(block.type)}.tool_use_id: Field required`];
}

/** Why scripting these calls for this request is a test's mistake, or undefined. */
export function impossibleHostedReply(
  body: Json,
  reply: { hosted?: ScriptedHostedCall[]; citations?: true; text?: string; toolCalls?: unknown[]; finishReason?: string },
): string | undefined {
  const calls = reply.hosted ?? [];
  const offered = offeredServerTools(body);
  const missing = calls.find((call) => !offered.has(call.tool));
  if (missing) return `a ${missing.tool} call scripted for a request that does not offer the ${missing.tool} server tool`;
  if (reply.citations && !calls.some((call) => call.tool === 'web_search' && !call.unanswered)) return 'citations scripted without a web_search call to cite';
  const unanswered = calls.findIndex((call) => call.unanswered);
  if (unanswered !== -1 && (unanswered !== calls.length - 1 || reply.finishReason !== 'max_tokens' || reply.text !== undefined || reply.toolCalls?.length)) {
    return 'an unanswered server tool call is the last block of a reply cut off by max_tokens: script it last, with finishReason max_tokens and no text or tool calls';
  }
  return undefined;
}
