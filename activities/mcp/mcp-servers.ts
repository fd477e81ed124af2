/**
 * How a worker declares MCP servers as tool sources (`TurnpikePlugin({ mcpServers })`), and the
 * approval a tool gets when nothing is configured for it.
 */
import { msToNumber, type Duration } from '@temporalio/common';
import type { ActivityCallOptions } from '../../workflows/types/index.js';
import type { ApprovalVerdict } from '../tools.js';
import { MCP_SERVER_NAME } from './mcp-tool-names.js';

/** The `_meta` key that carries the call's idempotency key (`<workflowId>/<toolCallId>`) to the server. */
export const MCP_IDEMPOTENCY_KEY_META = 'turnpike/idempotencyKey';

/** MCP's tool annotations: hints from the server, which turnpike uses only as defaults. */
export interface McpToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/** What an MCP tool's approval policy receives besides the validated input. */
export interface McpPolicyContext {
  toolCallId: string;
  server: string;
  /** The tool's name on its server (not the prefixed name the model sees). */
  tool: string;
  annotations?: McpToolAnnotations;
}

export type McpApprovalPolicy = (input: Record<string, unknown>, context: McpPolicyContext) => ApprovalVerdict | Promise<ApprovalVerdict>;

/** Options for one MCP tool, or, on a server, for all of its tools. */
export interface McpToolOptions {
  /**
   * `true`: every call waits for a person; `false`: none does; a function decides per call from
   * the validated input. Absent: from the tool's annotations (see {@link defaultMcpApproval}).
   */
  approval?: boolean | McpApprovalPolicy;
  /** Only these approvers may decide the calls (with `approverGroups`: these, or those groups' members). */
  approvers?: string[];
  approverGroups?: string[];
  /** Timeout and retry of each call's activity. Default: 60s, 3 attempts. Set `heartbeatTimeout` for long tools. */
  activityOptions?: ActivityCallOptions;
}

interface McpServerBase extends McpToolOptions {
  /** Options per tool, by the tool's name on the server; they override the server-wide ones. */
  tools?: Record<string, McpToolOptions>;
  /** Offer only these tools (names on the server). Default: every tool the server lists. */
  include?: string[];
  /**
   * Connections this worker keeps to the server at most (stdio: child processes; HTTP:
   * sessions). Each running call holds one to itself, so calls that overlap use several, and a
   * call beyond the limit waits for one to come free. Default 8.
   */
  maxConnections?: number;
  /**
   * A turn offered all tools (it names none) fails when this server cannot list its tools,
   * instead of going on without them. Default false: such a turn gets the tools of the servers
   * that answer, and its state and stream name the servers left out and why.
   */
  required?: boolean;
  /**
   * How long connecting and `tools/list` may take before the server counts as unavailable: a
   * slow server never holds a turn's start for longer. Milliseconds or a duration ('5s').
   * Default 5 s.
   */
  listTimeout?: Duration;
  /**
   * How a server that could not be listed is tried again in the background: after
   * `initialInterval` (default 1 s), doubling up to `maximumInterval` (default 1 min), until it
   * answers. Turns offered all tools leave it out meanwhile, without waiting for it.
   */
  reconnect?: { initialInterval?: Duration; maximumInterval?: Duration };
  /**
   * How long a model step or a call that needs this server waits for it while it cannot list
   * its tools: its activity is retried meanwhile (the turn's `turnState` and stream name the
   * server and the error), and fails with `McpServerUnavailable`, not retried, once this long has
   * passed since the step first found the server unavailable. Default 1 min.
   */
  unavailableTimeout?: Duration;
}

/** A server the worker starts as a child process and talks to over stdin/stdout. */
export interface McpStdioServerConfig extends McpServerBase {
  command: string;
  args?: string[];
  /** Added to the MCP SDK's safe default environment (PATH, HOME, …), not to the worker's whole environment. */
  env?: Record<string, string>;
  cwd?: string;
}

/** A server reached over MCP's streamable HTTP transport. */
export interface McpHttpServerConfig extends McpServerBase {
  url: string;
  /** Sent with every request, e.g. `{ authorization: `Bearer ${process.env.CRM_MCP_TOKEN}` }`. */
  headers?: Record<string, string>;
}

export type McpServerConfig = McpStdioServerConfig | McpHttpServerConfig;

/** Checks the declared servers at start-up, so a typo fails the worker, not a turn. */
export function checkMcpServers(servers: Record<string, McpServerConfig>): void {
  for (const [name, config] of Object.entries(servers)) {
    if (!MCP_SERVER_NAME.test(name)) {
      throw new Error(`mcpServers: the server name ${JSON.stringify(name)} must match ${MCP_SERVER_NAME} (it prefixes its tools' names, followed by "__")`);
    }
    const hasCommand = typeof (config as McpStdioServerConfig).command === 'string';
    const hasUrl = typeof (config as McpHttpServerConfig).url === 'string';
    if (hasCommand === hasUrl) throw new Error(`mcpServers.${name}: give either command (stdio) or url (streamable HTTP)`);
    if (hasUrl) new URL((config as McpHttpServerConfig).url);
    if (config.maxConnections !== undefined && !(Number.isInteger(config.maxConnections) && config.maxConnections >= 1)) {
      throw new Error(`mcpServers.${name}: maxConnections must be a whole number of at least 1`);
    }
    if (config.required !== undefined && typeof config.required !== 'boolean') throw new Error(`mcpServers.${name}: required must be true or false`);
    mcpServerTimings(name, config);
    for (const [where, options] of [[name, config], ...Object.entries(config.tools ?? {}).map(([tool, o]) => [`${name}.tools.${tool}`, o] as const)] as const) {
      const { approval, approvers, approverGroups } = options as McpToolOptions;
      if (approval !== undefined && typeof approval !== 'boolean' && typeof approval !== 'function') {
        throw new Error(`mcpServers.${where}: approval must be true, false or a policy function`);
      }
      if ((approvers !== undefined || approverGroups !== undefined) && approval === false) {
        throw new Error(`mcpServers.${where}: approvers are set but approval is false`);
      }
    }
  }
}

/**
 * The approval of a tool with nothing configured, from its annotations as MCP defines their
 * defaults (`readOnlyHint` false, `destructiveHint` true): a tool that says it only reads, or
 * that it changes nothing irreversibly (`destructiveHint: false`), runs at once; every other tool
 * — including one with no annotations — waits for a person. Annotations come from the server and
 * are hints: configure `approval` for a server you do not trust to describe itself.
 */
export function defaultMcpApproval(annotations: McpToolAnnotations | undefined): 'always' | 'never' {
  if (annotations?.readOnlyHint === true) return 'never';
  if (annotations?.destructiveHint === false) return 'never';
  return 'always';
}

/** The options in force for one tool: the tool's own over the server's. */
export function mcpToolOptions(config: McpServerConfig, tool: string): McpToolOptions {
  const own = config.tools?.[tool] ?? {};
  const pick = <K extends keyof McpToolOptions>(key: K): McpToolOptions[K] => (own[key] !== undefined ? own[key] : config[key]);
  return { approval: pick('approval'), approvers: pick('approvers'), approverGroups: pick('approverGroups'), activityOptions: pick('activityOptions') };
}

/** The defaults of {@link McpServerBase.listTimeout} and {@link McpServerBase.reconnect}. */
export const DEFAULT_MCP_LIST_TIMEOUT_MS = 5_000;
export const DEFAULT_MCP_RECONNECT = { initialIntervalMs: 1_000, maximumIntervalMs: 60_000 };
/** The default of {@link McpServerBase.unavailableTimeout}. */
export const DEFAULT_MCP_UNAVAILABLE_TIMEOUT_MS = 60_000;

export interface McpServerTimings {
  listTimeoutMs: number;
  unavailableTimeoutMs: number;
  reconnect: { initialIntervalMs: number; maximumIntervalMs: number };
}

/** A server's list timeout, reconnect backoff and unavailable timeout in milliseconds; throws naming the field when one is not a positive duration. */
export function mcpServerTimings(name: string, config: McpServerConfig): McpServerTimings {
  const positive = (field: string, value: Duration | undefined, fallback: number): number => {
    if (value === undefined) return fallback;
    let ms: number;
    try {
      ms = msToNumber(value);
    } catch {
      ms = Number.NaN;
    }
    if (!(ms > 0)) throw new Error(`mcpServers.${name}: ${field} must be a positive duration (milliseconds or a string such as '5s'), got ${JSON.stringify(value)}`);
    return ms;
  };
  const initialIntervalMs = positive('reconnect.initialInterval', config.reconnect?.initialInterval, DEFAULT_MCP_RECONNECT.initialIntervalMs);
  const maximumIntervalMs = positive('reconnect.maximumInterval', config.reconnect?.maximumInterval, Math.max(initialIntervalMs, DEFAULT_MCP_RECONNECT.maximumIntervalMs));
  if (maximumIntervalMs < initialIntervalMs) throw new Error(`mcpServers.${name}: reconnect.maximumInterval must not be below reconnect.initialInterval`);
  return {
    listTimeoutMs: positive('listTimeout', config.listTimeout, DEFAULT_MCP_LIST_TIMEOUT_MS),
    unavailableTimeoutMs: positive('unavailableTimeout', config.unavailableTimeout, DEFAULT_MCP_UNAVAILABLE_TIMEOUT_MS),
    reconnect: { initialIntervalMs, maximumIntervalMs },
  };
}
