/**
 * One connection to an MCP server: an official SDK client over stdio (one child process) or
 * streamable HTTP (one session). A connection serves one call at a time (see
 * mcp-connection-pool.ts), so a question the server asks on it (`elicitation/create`) belongs
 * to the call that holds it: MCP itself does not say which request a question is about.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  ElicitRequestSchema,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type ElicitRequest,
  type ElicitResult,
  type Tool as McpTool,
} from '@modelcontextprotocol/sdk/types.js';
import { mcpServerTimings, type McpHttpServerConfig, type McpServerConfig, type McpStdioServerConfig } from './mcp-servers.js';

export type { McpTool };

/** Answers a server's question for the call that holds the connection (see elicitations in mcp-tool-call.ts). */
export type ElicitationHandler = (params: ElicitRequest['params'], signal: AbortSignal) => Promise<ElicitResult>;

/** What a connection tells its pool. */
export interface McpConnectionEvents {
  /** The server announced `notifications/tools/list_changed`. */
  listChanged(): void;
  /** The connection ended (the child exited, the session ended, or it was closed). */
  closed(): void;
}

const CLIENT_INFO = { name: 'turnpike', version: '0.1.0' };

export class McpConnection {
  private client?: Promise<Client>;
  private transport?: StdioClientTransport | StreamableHTTPClientTransport;
  /** Bumped by every list change the server announces on this connection. */
  private changes = 0;
  /** `changes` as of this client's latest complete listing; -1 before the first. */
  private listedAt = -1;
  private ended = false;
  /** The call holding this connection, which the server's questions are for. */
  asker?: ElicitationHandler;
  /** Connecting and listing take at most this long: a slow server never holds a turn longer. */
  private readonly listTimeoutMs: number;

  constructor(
    readonly server: string,
    private readonly config: McpServerConfig,
    private readonly events: McpConnectionEvents,
  ) {
    this.listTimeoutMs = mcpServerTimings(server, config).listTimeoutMs;
  }

  /** False once the connection ended: it is not handed out again. */
  get usable(): boolean {
    return !this.ended;
  }

  /**
   * Whether this client has listed the tools since the server last changed them: the MCP client
   * checks a structured result against the output schema from its own latest listing.
   */
  get listed(): boolean {
    return this.listedAt === this.changes;
  }

  private newTransport(): StdioClientTransport | StreamableHTTPClientTransport {
    if ('url' in this.config) {
      const { url, headers } = this.config as McpHttpServerConfig;
      return new StreamableHTTPClientTransport(new URL(url), headers ? { requestInit: { headers } } : undefined);
    }
    const { command, args, env, cwd } = this.config as McpStdioServerConfig;
    return new StdioClientTransport({
      command,
      ...(args ? { args } : {}),
      env: { ...getDefaultEnvironment(), ...env },
      ...(cwd ? { cwd } : {}),
      // The server's own logs go to the worker's stderr, where operators look.
      stderr: 'inherit',
    });
  }

  private connect(): Promise<Client> {
    if (this.ended) return Promise.reject(new Error(`MCP server "${this.server}": the connection is closed`));
    if (!this.client) {
      // Form elicitation only: a URL elicitation would send the user to a page turnpike cannot show.
      const client = new Client(CLIENT_INFO, { capabilities: { elicitation: { form: {} } } });
      client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
        this.changes++;
        this.events.listChanged();
      });
      // No call holds the connection (it is idle, or only listing): nobody can be asked.
      client.setRequestHandler(ElicitRequestSchema, async (request, extra) => (this.asker ? this.asker(request.params, extra.signal) : { action: 'cancel' }));
      client.onclose = () => this.end();
      const transport = this.newTransport();
      this.transport = transport;
      this.client = client.connect(transport, { timeout: this.listTimeoutMs }).then(() => client);
      this.client.catch(() => this.end());
    }
    return this.client;
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    this.events.closed();
  }

  /** The server's tools, listed on this connection. */
  async listTools(): Promise<McpTool[]> {
    const client = await this.connect();
    const changes = this.changes;
    const tools: McpTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : undefined, { timeout: this.listTimeoutMs });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    this.listedAt = changes;
    return tools;
  }

  /** Calls a tool; `options` carries the abort signal, progress callback and timeout. */
  async callTool(name: string, args: Record<string, unknown>, meta: Record<string, unknown>, options: RequestOptions): Promise<CallToolResult> {
    if (!this.listed) await this.listTools();
    const client = await this.connect();
    return (await client.callTool({ name, arguments: args, _meta: meta }, undefined, options)) as CallToolResult;
  }

  async close(): Promise<void> {
    const { client, transport } = this;
    this.end();
    if (!client) return;
    // An HTTP session is ended on the server too (DELETE), not left to its own expiry.
    if (transport instanceof StreamableHTTPClientTransport) await transport.terminateSession().catch(() => undefined);
    await client.then((c) => c.close()).catch(() => undefined);
  }
}
