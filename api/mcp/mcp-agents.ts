/**
 * The named agents the HTTP API serves as MCP tools (`buildApi({ mcp: { agents } })`): each is a
 * turn's settings (model, system prompt, tools, typed answer) under a name, listed as a tool that
 * takes a `prompt`. A call with a task runs as a durable turn whose id is the task's id.
 * No import of `@modelcontextprotocol/sdk` here, so that `ApiOptions` names none of its types.
 */
import { checkAgentNames, publishedAgentsFromEnvironment, type PublishedAgent } from '../published-agents.js';

/** One agent served as an MCP tool: what each call's turn runs with; an object answer of its typed `output` is the call's `structuredContent`. */
export type McpAgent = PublishedAgent;

/** Named agents served as MCP tools with Tasks at `/api/mcp` (docs/protocols.md). */
export interface McpOptions {
  /** Agent name → its settings; the name is the tool's name (1 to 64 letters, digits, `-` and `_`). */
  agents: Record<string, McpAgent>;
  /**
   * How long a call without a task waits for its turn before answering with an error that names
   * the task (turn) it started, which goes on. Default 50,000 ms: under the MCP SDK client's
   * 60-second request timeout.
   */
  plainCallTimeoutMs?: number;
  /** The `pollInterval` tasks suggest to clients. Default 2,000 ms. */
  pollIntervalMs?: number;
}

/** Where the endpoint lives: under `/api/`, so the API's authentication guards it. */
export const MCP_PATH = '/api/mcp';
/** How long a call without a task waits for its turn by default (`McpOptions.plainCallTimeoutMs`). */
export const DEFAULT_PLAIN_CALL_TIMEOUT_MS = 50_000;
/** The `pollInterval` tasks suggest by default (`McpOptions.pollIntervalMs`). */
export const DEFAULT_TASK_POLL_INTERVAL_MS = 2_000;
/** Refuses names a tool or a turn id could not carry, before anything is served. */
export function checkMcpOptions(options: McpOptions): void {
  checkAgentNames('mcp', options.agents);
}

/**
 * `npm run api`'s MCP agents: `TURNPIKE_MCP_AGENTS` (JSON, as `TURNPIKE_A2A_AGENTS`: name →
 * `{ description, model: { provider, model }, system?, tools?, maxSteps?, approvalTimeout? }`).
 * Undefined when unset; a malformed value is refused with the reason.
 */
export function mcpOptionsFromEnvironment(env: NodeJS.ProcessEnv = process.env): McpOptions | undefined {
  const agents = publishedAgentsFromEnvironment('TURNPIKE_MCP_AGENTS', env);
  if (!agents) return undefined;
  const options: McpOptions = { agents };
  checkMcpOptions(options);
  return options;
}

/** The task id (and turn id) prefix of an agent's calls: tasks/get reads only ids that carry one. */
export function mcpTaskPrefix(agent: string): string {
  return `mcp-${agent}-`;
}
