/**
 * One MCP server as the worker sees it: a client connected on first use and kept for every
 * later listing and call (a stdio server is one child process per worker, not one per call),
 * and its tool list, cached until the server says `notifications/tools/list_changed` or the
 * connection drops.
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
import type { McpHttpServerConfig, McpServerConfig, McpStdioServerConfig } from './mcp-servers.js';

export type { McpTool };

/** Answers a server's question for the call that is running (see elicitations in mcp-tool-source.ts). */
export type ElicitationHandler = (params: ElicitRequest['params'], signal: AbortSignal) => Promise<ElicitResult>;

const CLIENT_INFO = { name: 'turnpike', version: '0.1.0' };

export class McpConnection {
  private client?: Promise<Client>;
  private tools?: Promise<McpTool[]>;
  /** Bumped by every list change, so a listing that was in flight when one arrived is not cached. */
  private generation = 0;
  private closed = false;
  /** The calls in flight on this connection that can take a question, by request. */
  private readonly asking = new Set<ElicitationHandler>();

  constructor(
    readonly server: string,
    private readonly config: McpServerConfig,
  ) {}

  private transport() {
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
    if (this.closed) return Promise.reject(new Error(`MCP server "${this.server}": the worker is shutting down`));
    if (!this.client) {
      // Form elicitation only: a URL elicitation would send the user to a page turnpike cannot show.
      const client = new Client(CLIENT_INFO, { capabilities: { elicitation: { form: {} } } });
      client.setNotificationHandler(ToolListChangedNotificationSchema, async () => this.forgetTools());
      client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
        // MCP does not say which call a question belongs to: with one call in flight it is that
        // one's; with several on one connection turnpike cannot tell, and declines to guess.
        if (this.asking.size !== 1) return { action: 'cancel' };
        const [handler] = this.asking;
        return handler!(request.params, extra.signal);
      });
      const connecting = client.connect(this.transport()).then(() => client);
      this.client = connecting;
      // A dropped connection (the child exited, the HTTP session ended) is reopened on next use.
      client.onclose = () => {
        if (this.client === connecting) {
          this.client = undefined;
          this.forgetTools();
        }
      };
      connecting.catch(() => {
        if (this.client === connecting) this.client = undefined;
      });
    }
    return this.client;
  }

  private forgetTools(): void {
    this.generation++;
    this.tools = undefined;
  }

  /** The server's tools, from the cache when no list change has been announced since. */
  listTools(): Promise<McpTool[]> {
    if (!this.tools) {
      const generation = this.generation;
      const listing = (async () => {
        const client = await this.connect();
        const tools: McpTool[] = [];
        let cursor: string | undefined;
        do {
          // The client also keeps each tool's output schema from this listing, to check results.
          const page = await client.listTools(cursor ? { cursor } : undefined);
          tools.push(...page.tools);
          cursor = page.nextCursor;
        } while (cursor);
        return tools;
      })();
      this.tools = listing;
      listing.then(
        () => {
          if (this.generation !== generation && this.tools === listing) this.tools = undefined;
        },
        () => {
          if (this.tools === listing) this.tools = undefined;
        },
      );
    }
    return this.tools;
  }

  /** Calls a tool; `options` carries the abort signal, progress callback and timeout. */
  async callTool(
    name: string,
    args: Record<string, unknown>,
    meta: Record<string, unknown>,
    options: RequestOptions,
    onElicitation?: ElicitationHandler,
  ): Promise<CallToolResult> {
    // Listed on this connection first: the MCP client checks structured results against the
    // output schemas it saw in its own latest listing.
    await this.listTools();
    const client = await this.connect();
    if (onElicitation) this.asking.add(onElicitation);
    try {
      return (await client.callTool({ name, arguments: args, _meta: meta }, undefined, options)) as CallToolResult;
    } finally {
      if (onElicitation) this.asking.delete(onElicitation);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    this.client = undefined;
    if (client) await client.then((c) => c.close()).catch(() => undefined);
  }
}
