/**
 * An MCP server's tool as the workflow sees it: the resolved tool (server, pool, configuration)
 * and its `ToolSpec`, with the approval its configuration or annotations give it.
 */
import type { JsonSchema, ToolSpec } from '../../workflows/types/index.js';
import type { McpConnection, McpTool } from './mcp-connection.js';
import type { McpConnectionPool } from './mcp-connection-pool.js';
import { defaultMcpApproval, mcpToolOptions, type McpServerConfig, type McpToolAnnotations } from './mcp-servers.js';

/** The heartbeat timeout of an MCP call's activity unless its `activityOptions` set one. */
export const DEFAULT_MCP_HEARTBEAT_TIMEOUT = '30s';

export interface ResolvedTool {
  name: string;
  server: string;
  tool: McpTool;
  pool: McpConnectionPool<McpConnection>;
  config: McpServerConfig;
}

export function annotationsOf(tool: McpTool): McpToolAnnotations | undefined {
  return tool.annotations as McpToolAnnotations | undefined;
}

export function withAnnotations(tool: McpTool): { annotations?: McpToolAnnotations } {
  const annotations = annotationsOf(tool);
  return annotations ? { annotations } : {};
}

export function toSpec({ name, server, tool, config }: ResolvedTool): ToolSpec {
  const options = mcpToolOptions(config, tool.name);
  const approval =
    options.approval === undefined ? defaultMcpApproval(annotationsOf(tool)) : options.approval === true ? 'always' : options.approval === false ? 'never' : 'policy';
  const { $schema: _dialect, ...inputSchema } = tool.inputSchema as JsonSchema;
  const title = tool.title ?? annotationsOf(tool)?.title;
  return {
    name,
    description: tool.description || `${title ?? tool.name} (tool of the MCP server "${server}")`,
    inputSchema,
    ...(tool.outputSchema ? { outputSchema: stripDialect(tool.outputSchema as JsonSchema) } : {}),
    kind: 'server',
    approval,
    ...(approval !== 'never' && options.approvers ? { approvers: [...options.approvers] } : {}),
    ...(approval !== 'never' && options.approverGroups ? { approverGroups: [...options.approverGroups] } : {}),
    // A heartbeat timeout by default: the call heartbeats by itself (see execute), so a worker
    // that dies is noticed within it, and a cancellation reaches the call within about as long.
    activityOptions: { heartbeatTimeout: DEFAULT_MCP_HEARTBEAT_TIMEOUT, ...options.activityOptions },
  };
}

function stripDialect(schema: JsonSchema): JsonSchema {
  const { $schema: _dialect, ...rest } = schema;
  return rest;
}
