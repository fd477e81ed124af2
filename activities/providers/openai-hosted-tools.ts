/**
 * The Responses API's hosted tools (`ModelSettings.providerTools` of an `openai-responses` turn):
 * `web_search`, `file_search`, `code_interpreter` and `mcp` (a remote MCP server OpenAI calls
 * itself). OpenAI runs them within the step; turnpike offers them, keeps the items they return
 * verbatim as provider-tool parts (`raw`, ids included) and sends those back in place on the next
 * step. With `store: false` (turnpike's default) OpenAI keeps nothing, so the items go back by
 * full content: an `item_reference` would point at nothing.
 *
 * A remote MCP server is named by the turn (`{ type: 'mcp', server_label: 'deepwiki' }`) and
 * defined on the worker (`remoteMcpServers`): its URL, and the environment variables that hold
 * its headers (an `Authorization` header is a credential), never enter a turn's history.
 *
 * An `mcp_approval_request` (a server offered with `require_approval`) becomes a tool call of the
 * reserved name `openai_mcp_approval` that parks for a person (workflows/calls/provider-approvals.ts);
 * its one result is the decision, sent back as `mcp_approval_response` after the request item.
 */
import { ApplicationFailure } from '@temporalio/common';
import type {
  ResponseIncludable,
  ResponseInputItem,
  ResponseOutputItem,
  ResponseOutputText,
  Tool as ResponsesTool,
} from 'openai/resources/responses/responses';
import { PROVIDER_APPROVAL_METADATA, PROVIDER_APPROVAL_TOOL } from '../../workflows/calls/provider-approvals.js';
import type { ModelSettings, ProviderToolPart, SourceReference, ToolCallPart, ToolResultPart, Usage } from '../../workflows/types/index.js';
import { ProviderErrorType } from './error-types.js';
import { parseToolArguments } from './openai.js';
import type { RemoteMcpServers } from './remote-mcp-servers.js';

/** The hosted tools of the turn as the Responses API takes them. */
export function hostedTools(model: ModelSettings, servers: RemoteMcpServers): ResponsesTool[] {
  return (model.providerTools ?? []).map((spec): ResponsesTool => {
    const { type, ...options } = spec;
    switch (type) {
      case 'code_interpreter':
        return { container: { type: 'auto' }, ...options, type } as ResponsesTool;
      case 'mcp':
        return remoteMcpTool(String(spec.server_label), options, servers);
      default:
        return { ...options, type } as ResponsesTool;
    }
  });
}

/** What to `include` so the hosted calls come back whole: search results, sources, code outputs. */
export function hostedIncludes(model: ModelSettings): ResponseIncludable[] {
  const types = new Set((model.providerTools ?? []).map((spec) => spec.type));
  return [
    ...(types.has('web_search') ? (['web_search_call.action.sources'] as const) : []),
    ...(types.has('file_search') ? (['file_search_call.results'] as const) : []),
    ...(types.has('code_interpreter') ? (['code_interpreter_call.outputs'] as const) : []),
  ];
}

function remoteMcpTool(label: string, options: Record<string, unknown>, servers: RemoteMcpServers): ResponsesTool {
  const server = Object.hasOwn(servers, label) ? servers[label] : undefined;
  if (!server) {
    const known = Object.keys(servers);
    throw ApplicationFailure.nonRetryable(
      `openai-responses: this worker has no remote MCP server named "${label}"; ${known.length > 0 ? `it has ${known.join(', ')}` : 'declare them with createWorker({ remoteMcpServers })'}`,
      'InvalidModelSettings',
    );
  }
  const headers: Record<string, string> = {};
  for (const [header, env] of Object.entries(server.headersEnv ?? {})) {
    const value = process.env[env];
    if (!value) throw ApplicationFailure.nonRetryable(`openai-responses: no value for header ${header} of remote MCP server "${label}" — set ${env} in the worker's environment`, ProviderErrorType.authentication);
    headers[header] = value;
  }
  return {
    ...options,
    type: 'mcp',
    server_label: label,
    server_url: server.url,
    ...(server.description !== undefined ? { server_description: server.description } : {}),
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
  } as ResponsesTool;
}

/** A hosted tool's output item → a provider-tool part keeping it verbatim; undefined for any other item. */
export function providerToolPartOf(item: ResponseOutputItem): ProviderToolPart | undefined {
  const base = { type: 'provider-tool' as const, provider: 'openai' as const, toolCallId: item.id ?? '', raw: [item] };
  switch (item.type) {
    case 'web_search_call': {
      const action = (item as { action?: { type?: string; query?: string; sources?: Array<{ url?: string }> } }).action;
      const sources = (action?.sources ?? []).filter((source) => typeof source.url === 'string').map((source) => ({ url: source.url! }));
      return { ...base, toolName: 'web_search', input: action ?? null, output: { status: item.status }, isError: item.status === 'failed', ...(sources.length ? { sources } : {}) };
    }
    case 'file_search_call':
      return {
        ...base,
        toolName: 'file_search',
        input: { queries: item.queries },
        output: { status: item.status, results: (item.results ?? []).map(({ file_id, filename, score }) => ({ file_id, filename, score })) },
        isError: item.status === 'failed',
      };
    case 'code_interpreter_call':
      return { ...base, toolName: 'code_interpreter', input: { code: item.code, container_id: item.container_id }, output: { container_id: item.container_id, outputs: item.outputs ?? [] }, isError: item.status === 'failed' };
    case 'mcp_list_tools':
      return { ...base, toolName: 'mcp_list_tools', input: { server_label: item.server_label }, output: { tools: item.tools.map((tool) => tool.name) }, isError: !!item.error };
    case 'mcp_call':
      return {
        ...base,
        toolName: 'mcp',
        input: { server_label: item.server_label, name: item.name, arguments: parseToolArguments(item.arguments) },
        output: item.error ? item.error : (item.output ?? null),
        isError: !!item.error || item.status === 'failed',
      };
    default:
      return undefined;
  }
}

/** An `mcp_approval_request` → the call that parks for a person, the request item verbatim beside it. */
export function approvalCallOf(item: Extract<ResponseOutputItem, { type: 'mcp_approval_request' }>): ToolCallPart {
  return {
    type: 'tool-call',
    toolCallId: item.id,
    toolName: PROVIDER_APPROVAL_TOOL,
    input: { server_label: item.server_label, name: item.name, arguments: parseToolArguments(item.arguments) },
    providerMetadata: { [PROVIDER_APPROVAL_METADATA]: { mcpApprovalRequest: item } },
  };
}

/** The request item an approval call came as, when the part is one. */
export function approvalRequestOf(part: ToolCallPart): (ResponseInputItem & { type: 'mcp_approval_request' }) | undefined {
  if (part.toolName !== PROVIDER_APPROVAL_TOOL) return undefined;
  return part.providerMetadata?.[PROVIDER_APPROVAL_METADATA]?.mcpApprovalRequest as (ResponseInputItem & { type: 'mcp_approval_request' }) | undefined;
}

/** The decision, as OpenAI takes it: approved when the result is no error; else denied, with why (the model reads it). */
export function approvalResponseOf(requestId: string, result: ToolResultPart): ResponseInputItem {
  const approve = result.isError !== true;
  return {
    type: 'mcp_approval_response',
    approval_request_id: requestId,
    approve,
    ...(!approve && typeof result.output === 'string' ? { reason: result.output } : {}),
  };
}

/** The pages an output text cites (`url_citation`), for the stream's and `useChat`'s sources. */
export function citedSources(parts: ResponseOutputText[]): SourceReference[] {
  const sources: SourceReference[] = [];
  for (const part of parts) {
    for (const annotation of part.annotations ?? []) {
      if (annotation.type === 'url_citation' && !sources.some((source) => source.url === annotation.url)) sources.push({ url: annotation.url, ...(annotation.title ? { title: annotation.title } : {}) });
    }
  }
  return sources;
}

/**
 * What a step's hosted tools are billed for: its `web_search_call` and `file_search_call` items,
 * and the distinct containers its `code_interpreter_call` items ran in (a container reused by a
 * later step is counted again there: a step does not know the turn's earlier containers).
 */
export function hostedToolUsage(items: readonly ResponseOutputItem[]): Pick<Usage, 'webSearchRequests' | 'fileSearchRequests' | 'codeInterpreterContainers'> {
  const searches = items.filter((item) => item.type === 'web_search_call').length;
  const fileSearches = items.filter((item) => item.type === 'file_search_call').length;
  const containers = new Set(items.flatMap((item) => (item.type === 'code_interpreter_call' && item.container_id ? [item.container_id] : []))).size;
  return {
    ...(searches > 0 ? { webSearchRequests: searches } : {}),
    ...(fileSearches > 0 ? { fileSearchRequests: fileSearches } : {}),
    ...(containers > 0 ? { codeInterpreterContainers: containers } : {}),
  };
}
