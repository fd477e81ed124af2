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
import type { ExecuteToolInput, ExecuteToolResult, ToolCallDisposition, ToolServerLeftOut, ToolSpec } from '../../workflows/types/index.js';
import type { ToolRegistry } from '../tool-registry.js';
import type { McpHealthTelemetry, McpServerStatus } from './mcp-server-health.js';
import { checkMcpServers, type McpServerConfig } from './mcp-servers.js';
import { mcpServerOf } from './mcp-tool-names.js';
import type { McpToolSource } from './mcp-tool-source.js';
import { importOptional } from '../../peers/optional-packages.js';

/** The SDK is an optional peer dependency: a worker that declares MCP servers needs it installed. */
const loadMcpModule = () => importOptional('A worker with mcpServers', ['@modelcontextprotocol/sdk'], () => import('./mcp-tool-source.js'));

export class LazyMcpTools {
  private source?: Promise<McpToolSource>;

  constructor(
    private readonly servers: Record<string, McpServerConfig>,
    /** The worker's logger and metric meter, asked for when the first turn loads the SDK (the worker's Runtime is installed by then). */
    private readonly telemetry: () => McpHealthTelemetry = () => ({}),
  ) {
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
    this.source ??= loadMcpModule().then(({ McpToolSource }) => new McpToolSource(this.servers, this.telemetry()));
    return this.source;
  }

  /** The worker's own tools and the servers' tools, as `describeTools` offers them, and the servers left out. */
  async describe(registry: ToolRegistry, names: string[] | undefined): Promise<{ specs: ToolSpec[]; leftOut: ToolServerLeftOut[] }> {
    const [{ describeWithMcp }, source] = await Promise.all([loadMcpModule(), this.load()]);
    return describeWithMcp(registry, source, names);
  }

  async prepare(call: { toolCallId: string; toolName: string; input: unknown }): Promise<ToolCallDisposition> {
    return (await this.load()).prepare(call);
  }

  async execute(request: ExecuteToolInput): Promise<ExecuteToolResult> {
    return (await this.load()).execute(request);
  }

  /**
   * What this worker knows of each declared server: `unknown` for all of them until a turn
   * first loads the MCP SDK (no server is contacted before a turn needs one).
   */
  async statuses(): Promise<McpServerStatus[]> {
    const source = this.source ? await this.source.catch(() => undefined) : undefined;
    return source?.statuses() ?? Object.entries(this.servers).map(([server, config]) => ({ server, state: 'unknown' as const, required: config.required === true }));
  }

  /** Closes the connections, if any was opened (none was if the SDK failed to load: the turns were told). */
  async close(): Promise<void> {
    const source = await this.source?.catch(() => undefined);
    await source?.close();
  }
}
