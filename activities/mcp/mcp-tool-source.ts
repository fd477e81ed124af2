/**
 * MCP servers as a tool source next to the worker's own tools: their specs for `describeTools`,
 * the validation and approval of a call for `prepareToolCalls`, and the call itself for
 * `executeTool`. The workflow sees only data (`ToolSpec`, dispositions, results), never MCP types.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { ErrorCode, McpError, type CallToolResult, type ElicitRequest } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { JsonSchemaType, JsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import type { ExecuteToolInput, ExecuteToolResult, JsonSchema, ToolCallDisposition, ToolServerLeftOut, ToolServerUnavailable, ToolSpec } from '../../workflows/types/index.js';
import type { ToolRegistry } from '../tool-registry.js';
import type { ApprovalVerdict } from '../tools.js';
import { McpConnection, type McpTool } from './mcp-connection.js';
import { askTheTurn } from './mcp-elicitation.js';
import { DEFAULT_MCP_POOL_LIMITS, McpConnectionPool, type CallEnd } from './mcp-connection-pool.js';
import { McpServerHealth, type McpHealthTelemetry, type McpServerStatus } from './mcp-server-health.js';
import { defaultMcpApproval, MCP_IDEMPOTENCY_KEY_META, mcpServerTimings, mcpToolOptions, type McpServerConfig, type McpToolAnnotations } from './mcp-servers.js';
import { mcpServerOf, mcpToolNames } from './mcp-tool-names.js';
import { currentAttempt, unavailableFailure, unavailableServer } from './mcp-unavailable.js';

export { MCP_IDEMPOTENCY_KEY_META };

/** The heartbeat timeout of an MCP call's activity unless its `activityOptions` set one. */
export const DEFAULT_MCP_HEARTBEAT_TIMEOUT = '30s';

interface ResolvedTool {
  name: string;
  server: string;
  tool: McpTool;
  pool: McpConnectionPool<McpConnection>;
  config: McpServerConfig;
}

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
   * One call, in the `executeTool` activity: the idempotency key in `_meta`; the activity's
   * cancellation aborts the request, which the MCP client turns into `notifications/cancelled`;
   * each progress notification becomes a heartbeat (which is also how the cancellation reaches
   * this activity).
   */
  async execute(request: ExecuteToolInput): Promise<ExecuteToolResult> {
    const resolved = await this.resolve(request.toolName).catch((error: unknown) => {
      throw unavailableFailure(`The MCP server of "${request.toolName}" is unavailable: ${messageOf(error)}`, [this.unavailable(mcpServerOf(request.toolName)!, error)], currentAttempt());
    });
    if (!resolved) return { output: `The MCP server no longer offers the tool "${request.toolName}".`, isError: true };
    const context = Context.current();
    // Heartbeats also while the server sends no progress: a cancellation reaches an activity only
    // through a heartbeat, and a worker that died is noticed by the missing ones.
    const every = Math.max(200, Math.min(5_000, (context.info.heartbeatTimeoutMs ?? 15_000) / 3));
    let lastProgress: { progress: number; total?: number; message?: string } | undefined;
    const keepAlive = setInterval(() => context.heartbeat(lastProgress), every);
    let result: CallToolResult;
    try {
      const ask = (params: ElicitRequest['params'], signal: AbortSignal) => askTheTurn(context, request, params, signal);
      result = await resolved.pool.with(
        async (connection) => {
          // The connection is this call's alone until it returns: the server's questions on it are this call's.
          connection.asker = ask;
          try {
            return await connection.callTool(
              resolved.tool.name,
              (request.input ?? {}) as Record<string, unknown>,
              { [MCP_IDEMPOTENCY_KEY_META]: request.idempotencyKey },
              {
                signal: context.cancellationSignal,
                onprogress: ({ progress, total, message }) => {
                  lastProgress = { progress, ...(total !== undefined ? { total } : {}), ...(message !== undefined ? { message } : {}) };
                  context.heartbeat(lastProgress);
                },
                // Temporal's timeouts govern the call; the MCP client's own must not end it sooner.
                timeout: context.info.startToCloseTimeoutMs,
                resetTimeoutOnProgress: true,
              },
            );
          } finally {
            connection.asker = undefined;
          }
        },
        (outcome) => callEnd(outcome, context.cancellationSignal),
        context.cancellationSignal,
      );
    } catch (error) {
      if (context.cancellationSignal.aborted) throw context.cancellationSignal.reason instanceof CancelledFailure ? context.cancellationSignal.reason : new CancelledFailure('cancelled');
      // The server refused the call itself (unknown tool, bad arguments, a result that fails the
      // tool's output schema): the model is told and may correct itself; retrying would not help.
      if (error instanceof McpError && [ErrorCode.InvalidParams, ErrorCode.InvalidRequest, ErrorCode.MethodNotFound].includes(error.code)) {
        return { output: `Tool "${request.toolName}" failed: ${error.message}`, isError: true };
      }
      // Anything else (the connection dropped, the server crashed) fails this attempt; the
      // tool's retry policy decides whether another follows, on a fresh connection if need be.
      throw ApplicationFailure.retryable(`MCP call to "${request.toolName}" failed: ${messageOf(error)}`, 'McpCallFailed');
    } finally {
      clearInterval(keepAlive);
    }
    return { output: outputOf(result), isError: result.isError === true };
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

/**
 * Whether a call's connection may serve the next call. Not after a cancelled call or one that
 * timed out: the server may still be working on it, and a question it asked then would reach
 * whichever call held the connection next. Nor after a lost connection.
 */
export function callEnd(outcome: { ok: true } | { ok: false; error: unknown }, cancellation: AbortSignal): CallEnd {
  if (cancellation.aborted) return 'retire';
  if (outcome.ok) return 'reusable';
  const { error } = outcome;
  // The server answered with an error: the connection is fine.
  return error instanceof McpError && error.code !== ErrorCode.RequestTimeout && error.code !== ErrorCode.ConnectionClosed ? 'reusable' : 'retire';
}

function annotationsOf(tool: McpTool): McpToolAnnotations | undefined {
  return tool.annotations as McpToolAnnotations | undefined;
}

function withAnnotations(tool: McpTool): { annotations?: McpToolAnnotations } {
  const annotations = annotationsOf(tool);
  return annotations ? { annotations } : {};
}

function toSpec({ name, server, tool, config }: ResolvedTool): ToolSpec {
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

/**
 * What the model gets back: the structured result when the tool declares one (already checked
 * against its output schema by the MCP client), else the text of a text-only result, else the
 * content blocks as MCP returned them.
 */
export function outputOf(result: CallToolResult): unknown {
  if (result.structuredContent !== undefined && result.isError !== true) return result.structuredContent;
  const content = result.content ?? [];
  if (content.every((block) => block.type === 'text')) return content.map((block) => (block as { text: string }).text).join('\n');
  return content;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
