/**
 * MCP servers as a tool source next to the worker's own tools: their specs for `describeTools`,
 * the validation and approval of a call for `prepareToolCalls`, and the call itself for
 * `executeTool`. The workflow sees only data (`ToolSpec`, dispositions, results), never MCP types.
 */
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { JsonSchemaType, JsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { ApplicationFailure } from '@temporalio/common';
import type { ExecuteToolInput, ExecuteToolResult, ToolCallDisposition, ToolServerLeftOut, ToolServerUnavailable, ToolSpec } from '../../workflows/types/index.js';
import type { ToolRegistry } from '../tool-registry.js';
import type { ApprovalVerdict } from '../tools.js';
import { McpConnection, type McpTool } from './mcp-connection.js';
import { DEFAULT_MCP_POOL_LIMITS, McpConnectionPool } from './mcp-connection-pool.js';
import { McpServerHealth, type McpHealthTelemetry, type McpServerStatus } from './mcp-server-health.js';
import { defaultMcpApproval, MCP_IDEMPOTENCY_KEY_META, mcpServerTimings, mcpToolOptions, type McpServerConfig } from './mcp-servers.js';
import { callMcpTool } from './mcp-tool-call.js';
import { mcpServerOf, mcpToolNames } from './mcp-tool-names.js';
import { annotationsOf, toSpec, withAnnotations, type ResolvedTool } from './mcp-tool-specs.js';
import { currentAttempt, unavailableFailure, unavailableServer } from './mcp-unavailable.js';

export { MCP_IDEMPOTENCY_KEY_META };
export { callEnd, outputOf } from './mcp-tool-call.js';
export { DEFAULT_MCP_HEARTBEAT_TIMEOUT } from './mcp-tool-specs.js';

export class McpToolSource {
  private readonly pools = new Map<string, McpConnectionPool<McpConnection>>();
  private readonly health = new Map<string, McpServerHealth>();
  private readonly validator = new AjvJsonSchemaValidator();
  private readonly validators = new WeakMap<object, JsonSchemaValidator<unknown>>();

  /** `servers` as checked by `checkMcpServers` (the worker's `LazyMcpTools` checks them at start-up). */
  constructor(
    private readonly servers: Record<string, McpServerConfig>,
    telemetry: McpHealthTelemetry = {},
  ) {
    for (const [name, config] of Object.entries(servers)) {
      const limits = { ...DEFAULT_MCP_POOL_LIMITS, ...(config.maxConnections !== undefined ? { maxConnections: config.maxConnections } : {}) };
      this.pools.set(name, new McpConnectionPool(name, (events) => new McpConnection(name, config, events), limits));
      const timings = mcpServerTimings(name, config);
      this.health.set(name, new McpServerHealth(name, config.required === true, timings, () => this.toolsOf(name), telemetry));
    }
  }

  get serverNames(): string[] {
    return [...this.pools.keys()];
  }

  /** True when `name` is the model-facing name of a tool of one of these servers (listed or not). */
  owns(name: string): boolean {
    const server = mcpServerOf(name);
    return server !== undefined && this.pools.has(server);
  }

  /** The server's tools (from its pool's cache when it has them); the outcome tells the server's health. */
  private async toolsOf(server: string): Promise<ResolvedTool[]> {
    const pool = this.pools.get(server)!;
    const config = this.servers[server]!;
    const health = this.health.get(server)!;
    let listed: McpTool[];
    try {
      listed = await pool.listTools();
    } catch (error) {
      health.failed(messageOf(error));
      throw error;
    }
    const offered = config.include ? listed.filter((tool) => config.include!.includes(tool.name)) : listed;
    health.listed(offered.length);
    const names = mcpToolNames(server, offered.map((tool) => tool.name));
    return offered.map((tool) => ({ name: names.get(tool.name)!, server, tool, pool, config }));
  }

  /** A server the current step or call needs and could not list, and when it gives up on it (mcp-unavailable.ts). */
  private unavailable(server: string, error: unknown): ToolServerUnavailable {
    const { unavailableTimeoutMs } = mcpServerTimings(server, this.servers[server]!);
    return unavailableServer(server, messageOf(error), { unavailableTimeoutMs, downSinceMs: this.health.get(server)!.downSince }, currentAttempt() ?? { scheduledTimestampMs: Date.now() });
  }

  /**
   * The tools of the named servers as specs, in the order given. A turn that uses them needs
   * them: when any cannot be listed, the step fails naming each, retryably until one's
   * `unavailableTimeout` has passed (the step's retry policy gives them time to come back).
   */
  async specsOf(servers: readonly string[]): Promise<ToolSpec[]> {
    const listed = await Promise.allSettled(servers.map((server) => this.toolsOf(server)));
    const down = listed.flatMap((outcome, index) => (outcome.status === 'rejected' ? [this.unavailable(servers[index]!, outcome.reason)] : []));
    if (down.length > 0) throw unavailableFailure(down.map((server) => `MCP server "${server.server}" could not list its tools: ${server.error}`).join('; '), down, currentAttempt());
    return listed.flatMap((outcome) => (outcome.status === 'fulfilled' ? outcome.value : [])).map(toSpec);
  }

  /**
   * Every server's tools, for a turn offered all tools: the servers that answer, in declaration
   * order, and the others left out with the reason. A server already known to be down is left out
   * at once (the background retry brings it back); a `required` one is always asked, and fails
   * the step when it does not answer.
   */
  async allSpecs(): Promise<{ specs: ToolSpec[]; leftOut: ToolServerLeftOut[] }> {
    const perServer = await Promise.all(
      this.serverNames.map(async (server): Promise<ResolvedTool[] | ToolServerLeftOut> => {
        const health = this.health.get(server)!;
        if (health.down && !health.required) return { server, reason: health.reason };
        try {
          return await this.toolsOf(server);
        } catch (error) {
          if (health.required) {
            const down = this.unavailable(server, error);
            throw unavailableFailure(`MCP server "${server}" is required and could not list its tools: ${down.error}`, [down], currentAttempt());
          }
          return { server, reason: `its listing failed: ${messageOf(error)}` };
        }
      }),
    );
    return {
      specs: perServer.flatMap((tools) => (Array.isArray(tools) ? tools.map(toSpec) : [])),
      leftOut: perServer.filter((tools): tools is ToolServerLeftOut => !Array.isArray(tools)),
    };
  }

  /** What this worker knows of each server, in declaration order. */
  statuses(): McpServerStatus[] {
    return this.serverNames.map((server) => this.health.get(server)!.status());
  }

  private async resolve(name: string): Promise<ResolvedTool | undefined> {
    const server = mcpServerOf(name);
    if (!server || !this.pools.has(server)) return undefined;
    return (await this.toolsOf(server)).find((tool) => tool.name === name);
  }

  private validate(schema: object, input: unknown): string | undefined {
    let check = this.validators.get(schema);
    if (!check) {
      // `$schema` names a dialect Ajv may not have loaded; the keywords MCP servers use are the same.
      const { $schema: _dialect, ...rest } = schema as Record<string, unknown>;
      check = this.validator.getValidator(rest as JsonSchemaType);
      this.validators.set(schema, check);
    }
    const result = check(input);
    return result.valid ? undefined : result.errorMessage;
  }

  /** Validation first, then the approval policy (configured, or from the annotations). */
  async prepare(call: { toolCallId: string; toolName: string; input: unknown }): Promise<ToolCallDisposition> {
    let resolved: ResolvedTool | undefined;
    try {
      resolved = await this.resolve(call.toolName);
    } catch (error) {
      return { kind: 'invalid', error: `The MCP server of "${call.toolName}" is unavailable: ${messageOf(error)}` };
    }
    if (!resolved) return { kind: 'invalid', error: `The MCP server no longer offers the tool "${call.toolName}".` };
    if (typeof call.input === 'string') {
      return { kind: 'invalid', error: `Invalid input for tool "${call.toolName}": the arguments are not valid JSON: ${call.input.slice(0, 500)}` };
    }
    const problem = this.validate(resolved.tool.inputSchema, call.input);
    if (problem) return { kind: 'invalid', error: `Invalid input for tool "${call.toolName}": ${problem}` };
    const input = call.input as Record<string, unknown>;
    const { approval } = mcpToolOptions(resolved.config, resolved.tool.name);
    if (approval === undefined) return defaultMcpApproval(annotationsOf(resolved.tool)) === 'always' ? { kind: 'needs-approval', input } : { kind: 'execute', input };
    if (approval === false) return { kind: 'execute', input };
    if (approval === true) return { kind: 'needs-approval', input };
    let verdict: ApprovalVerdict;
    try {
      verdict = await approval(input, { toolCallId: call.toolCallId, server: resolved.server, tool: resolved.tool.name, ...withAnnotations(resolved.tool) });
    } catch (error) {
      // A failing policy must never let the call through.
      return { kind: 'invalid', error: `The approval policy of "${call.toolName}" failed: ${messageOf(error)}` };
    }
    const { decision, reason } = typeof verdict === 'string' ? { decision: verdict, reason: undefined } : verdict;
    switch (decision) {
      case 'approved':
        return { kind: 'decided', input, approved: true, ...(reason !== undefined ? { reason } : {}) };
      case 'denied':
        return { kind: 'decided', input, approved: false, ...(reason !== undefined ? { reason } : {}) };
      case 'user-approval':
        return { kind: 'needs-approval', input, ...(reason !== undefined ? { reason } : {}) };
      default:
        return { kind: 'invalid', error: `The approval policy of "${call.toolName}" returned ${JSON.stringify(decision)}; expected approved, denied or user-approval.` };
    }
  }

  /**
   * One call, in the `executeTool` activity: its tool resolved (its server listed), then called
   * (mcp-tool-call.ts).
   */
  async execute(request: ExecuteToolInput): Promise<ExecuteToolResult> {
    const resolved = await this.resolve(request.toolName).catch((error: unknown) => {
      throw unavailableFailure(`The MCP server of "${request.toolName}" is unavailable: ${messageOf(error)}`, [this.unavailable(mcpServerOf(request.toolName)!, error)], currentAttempt());
    });
    if (!resolved) return { output: `The MCP server no longer offers the tool "${request.toolName}".`, isError: true };
    return callMcpTool(resolved, request);
  }

  async close(): Promise<void> {
    for (const health of this.health.values()) health.close();
    await Promise.all([...this.pools.values()].map((pool) => pool.close()));
  }
}

/**
 * The turn's tools: the worker's own and the MCP servers', all of them (with the servers left
 * out, if any) or the named ones in the given order, listing only the servers those names belong to.
 */
export async function describeWithMcp(registry: ToolRegistry, mcp: McpToolSource, names: string[] | undefined): Promise<{ specs: ToolSpec[]; leftOut: ToolServerLeftOut[] }> {
  if (names === undefined) {
    const all = await mcp.allSpecs();
    return { specs: [...registry.specs(), ...all.specs], leftOut: all.leftOut };
  }
  if (!names.some((name) => mcp.owns(name))) return { specs: registry.specs(names), leftOut: [] };
  const servers = [...new Set(names.flatMap((name) => (mcp.owns(name) ? [mcpServerOf(name)!] : [])))];
  const mcpSpecs = new Map((await mcp.specsOf(servers)).map((spec) => [spec.name, spec]));
  const unknown = names.filter((name) => mcp.owns(name) && !mcpSpecs.has(name));
  if (unknown.length > 0) {
    throw ApplicationFailure.nonRetryable(
      `Unknown tool(s) requested for this turn: ${unknown.join(', ')}. Their MCP servers offer: ${[...mcpSpecs.keys()].join(', ') || '(none)'}`,
      'UnknownToolRequested',
    );
  }
  const own = new Map(registry.specs(names.filter((name) => !mcp.owns(name))).map((spec) => [spec.name, spec]));
  return { specs: names.map((name) => mcpSpecs.get(name) ?? own.get(name)!), leftOut: [] };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
