/**
 * The worker's MCP servers, with the MCP SDK loaded on first use. `@modelcontextprotocol/sdk` and
 * its Ajv add about 28 MB of RSS (9 MB of heap) to a process, so a worker that declares no MCP
 * server never loads them, and one that does loads them with its first turn, not at import.
 *
 * The SDK is an optional peer dependency of turnpike: without it, the first turn fails naming it.
 *
 * What must be answered synchronously (whether a tool name belongs to a server, the check of the
 * worker's own tool names) needs only the declared server names; the rest waits for the SDK.
 */
import type { ExecuteToolInput, ExecuteToolResult, ToolCallDisposition, ToolSpec } from '../../workflows/types.js';
import type { ToolRegistry } from '../tool-registry.js';
import { checkMcpServers, type McpServerConfig } from './mcp-servers.js';
import { mcpServerOf } from './mcp-tool-names.js';
import type { McpToolSource } from './mcp-tool-source.js';
import { importOptional } from '../optional-packages.js';

/** The SDK is an optional peer dependency: a worker that declares MCP servers needs it installed. */
const loadMcpModule = () => importOptional('A worker with mcpServers', ['@modelcontextprotocol/sdk'], () => import('./mcp-tool-source.js'));

export class LazyMcpTools {
  private source?: Promise<McpToolSource>;

  constructor(private readonly servers: Record<string, McpServerConfig>) {
    checkMcpServers(servers);
  }

  /** True when `name` is the model-facing name of a tool of one of these servers (listed or not). */
  owns(name: string): boolean {
    const server = mcpServerOf(name);
    return server !== undefined && Object.hasOwn(this.servers, server);
  }

  /** A worker's own tool may not take a name of the form an MCP server's tools use. */
  checkLocalTools(names: readonly string[]): void {
    const clash = names.find((name) => this.owns(name));
    if (clash) throw new Error(`The tool "${clash}" has the prefix of the MCP server "${mcpServerOf(clash)}" ("<server>__"); rename it`);
  }

  private load(): Promise<McpToolSource> {
    this.source ??= loadMcpModule().then(({ McpToolSource }) => new McpToolSource(this.servers));
    return this.source;
  }

  /** The worker's own tools and the servers' tools, as `describeTools` offers them. */
  async describe(registry: ToolRegistry, names: string[] | undefined): Promise<ToolSpec[]> {
    const [{ describeWithMcp }, source] = await Promise.all([loadMcpModule(), this.load()]);
    return describeWithMcp(registry, source, names);
  }

  async prepare(call: { toolCallId: string; toolName: string; input: unknown }): Promise<ToolCallDisposition> {
    return (await this.load()).prepare(call);
  }

  async execute(request: ExecuteToolInput): Promise<ExecuteToolResult> {
    return (await this.load()).execute(request);
  }

  /** Closes the connections, if any was opened (none was if the SDK failed to load: the turns were told). */
  async close(): Promise<void> {
    const source = await this.source?.catch(() => undefined);
    await source?.close();
  }
}
