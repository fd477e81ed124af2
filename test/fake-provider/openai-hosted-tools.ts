/**
 * The Responses API's hosted tools for the fake `POST /v1/responses`: `web_search`,
 * `file_search`, `code_interpreter` and `mcp` (remote MCP, with its approval requests), as strict
 * as the real API where turnpike depends on it. Item shapes follow recordings of the real API
 * (the AI SDK's `openai-web-search-tool`, `openai-file-search-tool`, `openai-code-interpreter-tool`
 * and `openai-mcp-tool-approval` fixtures).
 *
 * Requests: each hosted tool's required options; hosted items sent back must be items this server
 * issued, unchanged (with `store: false` nothing else could stand for them, and an
 * `item_reference` points at nothing); an item id at most once (the real API's text); every
 * `mcp_approval_response` answering an earlier `mcp_approval_request`, and every request answered.
 *
 * Replies: a scripted hosted item must be of a tool the request offered; its results, sources
 * and outputs are returned only when the request `include`d them; an MCP call on a server that
 * requires approval only after an approval response that approved it.
 */
import type { Json } from './server.js';

/** A hosted call the fake model makes (openai-responses only), before its text and function calls. */
export type ScriptedHostedItem =
  | { type: 'web_search'; query: string; sources?: string[] }
  | { type: 'file_search'; queries: string[]; results: Array<{ file_id: string; filename: string; score: number; text: string }> }
  | { type: 'code_interpreter'; code: string; logs?: string }
  | { type: 'mcp_list_tools'; server_label: string; tools: Array<{ name: string; description?: string }> }
  | { type: 'mcp_call'; server_label: string; name: string; arguments: unknown; output: string }
  | { type: 'mcp_approval_request'; server_label: string; name: string; arguments: unknown };

const HOSTED_TOOLS = ['web_search', 'web_search_preview', 'file_search', 'code_interpreter', 'mcp'];
export const HOSTED_ITEM_TYPES = ['web_search_call', 'file_search_call', 'code_interpreter_call', 'mcp_list_tools', 'mcp_call', 'mcp_approval_request', 'mcp_approval_response'];
const TOOL_OF_ITEM: Record<string, string> = {
  web_search: 'web_search',
  file_search: 'file_search',
  code_interpreter: 'code_interpreter',
  mcp_list_tools: 'mcp',
  mcp_call: 'mcp',
  mcp_approval_request: 'mcp',
};

const isObject = (value: unknown): value is Record<string, Json> => typeof value === 'object' && value !== null && !Array.isArray(value);
const NOT_PERSISTED = (id: string) =>
  `Item with id '${id}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`;

/** What the endpoint remembers of the hosted items it issued: each one's exact JSON, by id. */
export class HostedItems {
  readonly issued = new Map<string, string>();
}

/** The errors of one hosted tool of `tools` (a non-hosted type is left to the caller). */
export function validateHostedTool(tool: Record<string, Json>, at: string): string[] | undefined {
  if (!HOSTED_TOOLS.includes(tool.type)) return undefined;
  switch (tool.type) {
    case 'file_search':
      return Array.isArray(tool.vector_store_ids) && tool.vector_store_ids.length > 0 ? [] : [`Missing required parameter: '${at}.vector_store_ids'.`];
    case 'code_interpreter':
      return tool.container === undefined ? [`Missing required parameter: '${at}.container'.`] : [];
    case 'mcp': {
      const errors: string[] = [];
      if (typeof tool.server_label !== 'string' || tool.server_label === '') errors.push(`Missing required parameter: '${at}.server_label'.`);
      if (typeof tool.server_url !== 'string' && typeof tool.connector_id !== 'string') errors.push(`Missing required parameter: '${at}.server_url'.`);
      const approval = tool.require_approval;
      if (approval != null && approval !== 'always' && approval !== 'never' && !isObject(approval)) {
        errors.push(`Invalid value: '${String(approval)}'. Supported values are: 'always' and 'never'. (param: ${at}.require_approval)`);
      }
      return errors;
    }
    default:
      return [];
  }
}

/** The errors of one hosted item of `input` (a non-hosted type is left to the caller). */
export function validateHostedItem(item: Record<string, Json>, at: string, body: Record<string, Json>, items: HostedItems): string[] | undefined {
  if (item.type === 'item_reference') return body.store === false ? [NOT_PERSISTED(String(item.id))] : [];
  if (!HOSTED_ITEM_TYPES.includes(item.type)) return undefined;
  if (item.type === 'mcp_approval_response') {
    const errors: string[] = [];
    if (typeof item.approval_request_id !== 'string') errors.push(`Missing required parameter: '${at}.approval_request_id'.`);
    if (typeof item.approve !== 'boolean') errors.push(`Missing required parameter: '${at}.approve'.`);
    return errors;
  }
  if (typeof item.id !== 'string' || item.id === '') return [`Missing required parameter: '${at}.id'.`];
  const issued = items.issued.get(item.id);
  if (issued === undefined) return body.store === false ? [NOT_PERSISTED(item.id)] : [];
  // Stricter than the real API, which cannot tell: the fake checks that turnpike sends every item back byte for byte.
  if (JSON.stringify(item) !== issued) return [`fake provider: ${at} (${item.id}) differs from the ${item.type} item the API returned`];
  return [];
}

/** Ids at most once; approval requests and responses paired, in order. */
export function validateHostedSequence(input: Array<Record<string, Json>>): string[] {
  const errors: string[] = [];
  const ids = new Set<string>();
  const requests = new Set<string>();
  const answered = new Set<string>();
  input.forEach((item) => {
    if (typeof item.id === 'string' && HOSTED_ITEM_TYPES.includes(item.type)) {
      if (ids.has(item.id)) errors.push(`Duplicate item found with id ${item.id}. Remove duplicate items from your input and try again.`);
      ids.add(item.id);
    }
    if (item.type === 'mcp_approval_request') requests.add(item.id);
    if (item.type === 'mcp_approval_response') {
      if (!requests.has(item.approval_request_id)) errors.push(`No approval request found for approval response with approval_request_id ${String(item.approval_request_id)}.`);
      else if (answered.has(item.approval_request_id)) errors.push(`Duplicate approval response for approval_request_id ${String(item.approval_request_id)}.`);
      answered.add(item.approval_request_id);
    }
  });
  for (const id of requests) if (!answered.has(id)) errors.push(`No approval response found for MCP approval request ${id}.`);
  return errors;
}

/** Why these hosted items could not come back for this request, or undefined. */
export function impossibleHostedItems(body: Json, hosted: ScriptedHostedItem[] | undefined): string | undefined {
  if (!hosted?.length) return undefined;
  const tools: Json[] = Array.isArray(body?.tools) ? body.tools : [];
  for (const item of hosted) {
    const tool = TOOL_OF_ITEM[item.type];
    const offered = tools.find((candidate) => (candidate.type === tool || (tool === 'web_search' && candidate.type === 'web_search_preview')) && (tool !== 'mcp' || candidate.server_label === (item as { server_label: string }).server_label));
    if (!offered) return `a ${item.type} item scripted for a request that did not offer ${tool}${tool === 'mcp' ? ` server ${(item as { server_label: string }).server_label}` : ''}`;
    if (item.type === 'mcp_call' && offered.require_approval !== 'never' && approvedRequestFor(body, item) === undefined) {
      return `an mcp_call of ${item.server_label}/${item.name} scripted without an approval response that approved it (the server requires approval)`;
    }
  }
  return undefined;
}

/** The approved request this MCP call runs, answered in the input and not yet run. */
function approvedRequestFor(body: Json, call: { server_label: string; name: string }): string | undefined {
  const input: Json[] = Array.isArray(body?.input) ? body.input : [];
  const ran = new Set(input.filter((item) => item?.type === 'mcp_call').map((item) => item.approval_request_id));
  const approved = new Set(input.filter((item) => item?.type === 'mcp_approval_response' && item.approve === true).map((item) => item.approval_request_id));
  return input.find((item) => item?.type === 'mcp_approval_request' && item.server_label === call.server_label && item.name === call.name && approved.has(item.id) && !ran.has(item.id))?.id;
}

/** The output items for the scripted hosted calls, remembered so they can be checked when sent back. */
export function hostedOutputItems(body: Json, hosted: ScriptedHostedItem[] | undefined, nextId: (prefix: string) => string, items: HostedItems): Json[] {
  const include: string[] = Array.isArray(body.include) ? body.include : [];
  const container = `cntr_${nextId('').slice(0, 24)}`;
  const output = (hosted ?? []).map((item): Json => {
    switch (item.type) {
      case 'web_search': {
        const sources = include.includes('web_search_call.action.sources') ? { sources: (item.sources ?? []).map((url) => ({ type: 'url', url })) } : {};
        return { type: 'web_search_call', id: nextId('ws_'), status: 'completed', action: { type: 'search', query: item.query, ...sources } };
      }
      case 'file_search':
        return {
          id: nextId('fs_'),
          type: 'file_search_call',
          status: 'completed',
          queries: item.queries,
          results: include.includes('file_search_call.results') ? item.results.map((result) => ({ attributes: {}, ...result })) : null,
        };
      case 'code_interpreter':
        return {
          id: nextId('ci_'),
          type: 'code_interpreter_call',
          status: 'completed',
          code: item.code,
          container_id: container,
          outputs: include.includes('code_interpreter_call.outputs') ? (item.logs !== undefined ? [{ type: 'logs', logs: item.logs }] : []) : null,
        };
      case 'mcp_list_tools':
        return { id: nextId('mcpl_'), type: 'mcp_list_tools', server_label: item.server_label, tools: item.tools.map((tool) => ({ annotations: { read_only: true }, description: tool.description ?? null, input_schema: { type: 'object', properties: {} }, name: tool.name })) };
      case 'mcp_approval_request':
        return { id: nextId('mcpr_'), type: 'mcp_approval_request', arguments: JSON.stringify(item.arguments), name: item.name, server_label: item.server_label };
      case 'mcp_call':
        return {
          id: nextId('mcp_'),
          type: 'mcp_call',
          status: 'completed',
          approval_request_id: approvedRequestFor(body, item) ?? null,
          arguments: JSON.stringify(item.arguments),
          error: null,
          name: item.name,
          output: item.output,
          server_label: item.server_label,
        };
    }
  });
  for (const item of output) items.issued.set(item.id, JSON.stringify(item));
  return output;
}

/** `url_citation` annotations for the reply's text, as the API attaches them after a web search. */
export function citationAnnotations(text: string, citations: Array<{ url: string; title: string }> | undefined): Json[] {
  return (citations ?? []).map((citation) => ({ type: 'url_citation', start_index: 0, end_index: text.length, url: citation.url, title: citation.title }));
}

/** The stream events of one hosted item between its `output_item.added` and `output_item.done`, as the API sends them. */
export function hostedItemFrames(item: Json, outputIndex: number, event: (type: string, data: Json) => void): boolean {
  const at = { item_id: item.id, output_index: outputIndex };
  const prefix: Record<string, string> = {
    web_search_call: 'response.web_search_call',
    file_search_call: 'response.file_search_call',
    code_interpreter_call: 'response.code_interpreter_call',
    mcp_list_tools: 'response.mcp_list_tools',
    mcp_call: 'response.mcp_call',
  };
  if (item.type === 'mcp_approval_request') {
    event('response.output_item.added', { output_index: outputIndex, item });
    return true;
  }
  const name = prefix[item.type];
  if (!name) return false;
  const started = item.type === 'mcp_list_tools' ? { ...item, tools: [] } : item.type === 'mcp_call' ? { ...item, status: 'in_progress', output: null, arguments: '' } : { ...item, status: 'in_progress' };
  event('response.output_item.added', { output_index: outputIndex, item: started });
  event(`${name}.in_progress`, at);
  if (item.type === 'web_search_call' || item.type === 'file_search_call') event(`${name}.searching`, at);
  if (item.type === 'code_interpreter_call') {
    event('response.code_interpreter_call_code.delta', { ...at, delta: item.code });
    event('response.code_interpreter_call_code.done', { ...at, code: item.code });
    event(`${name}.interpreting`, at);
  }
  if (item.type === 'mcp_call') {
    event('response.mcp_call_arguments.delta', { ...at, delta: item.arguments });
    event('response.mcp_call_arguments.done', { ...at, arguments: item.arguments });
  }
  event(`${name}.completed`, at);
  return true;
}
