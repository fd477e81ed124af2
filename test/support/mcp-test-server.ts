/**
 * A small MCP server, built with the official SDK's `McpServer`, served over streamable HTTP
 * from the test process so a test can see what reached it: which tools were called with which
 * `_meta`, every JSON-RPC message the worker sent (e.g. `notifications/cancelled`), how many
 * sessions (connections) the worker opened, and it can change its tool list while a turn runs.
 * The reference servers have no way to change their tool list from outside, so that behaviour
 * is checked here; a destructive tool is also checked on `@modelcontextprotocol/server-filesystem`.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

export interface RecordedCall {
  tool: string;
  args: unknown;
  meta: Record<string, unknown> | undefined;
}

/** A JSON-RPC message as it reached the server over HTTP. */
export interface ReceivedMessage {
  session: string | undefined;
  id?: string | number;
  method?: string;
  params?: Record<string, unknown>;
}

export interface McpTestServer {
  url: string;
  calls: RecordedCall[];
  cancelled: string[];
  received: ReceivedMessage[];
  /** Sessions opened so far (each is one connection of the worker). */
  sessionsOpened(): number;
  notes: Map<string, string>;
  /** Adds a tool; each open session announces `notifications/tools/list_changed` to its client. */
  addTool(name: string): void;
  close(): Promise<void>;
}

export async function startMcpTestServer(): Promise<McpTestServer> {
  const calls: RecordedCall[] = [];
  const cancelled: string[] = [];
  const received: ReceivedMessage[] = [];
  const notes = new Map<string, string>([['n1', 'buy milk']]);
  const addedTools: string[] = [];
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; mcp: McpServer }>();
  let opened = 0;

  function registerAdded(mcp: McpServer, name: string): void {
    mcp.registerTool(name, { description: `Added later: ${name}`, inputSchema: {}, annotations: { readOnlyHint: true } }, async () => ({
      content: [{ type: 'text', text: `${name} ran` }],
    }));
  }

  /** One server per session, over the shared state above (as the SDK's multi-session examples do). */
  function newServer(): McpServer {
    const mcp = new McpServer({ name: 'turnpike-test', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
    mcp.registerTool(
      'read_note',
      { description: 'Reads a note', inputSchema: { id: z.string() }, annotations: { readOnlyHint: true } },
      async ({ id }, extra) => {
        calls.push({ tool: 'read_note', args: { id }, meta: extra._meta });
        return { content: [{ type: 'text', text: notes.get(id) ?? 'no such note' }] };
      },
    );
    mcp.registerTool(
      'delete_note',
      { description: 'Deletes a note for good', inputSchema: { id: z.string() }, annotations: { readOnlyHint: false, destructiveHint: true } },
      async ({ id }, extra) => {
        calls.push({ tool: 'delete_note', args: { id }, meta: extra._meta });
        notes.delete(id);
        return { content: [{ type: 'text', text: `deleted ${id}` }] };
      },
    );
    mcp.registerTool(
      'wait_forever',
      { description: 'Waits until cancelled', inputSchema: {}, annotations: { readOnlyHint: true } },
      async (_args, extra) => {
        calls.push({ tool: 'wait_forever', args: {}, meta: extra._meta });
        await new Promise<void>((resolve) => extra.signal.addEventListener('abort', () => resolve(), { once: true }));
        cancelled.push(String(extra.requestId));
        return { content: [{ type: 'text', text: 'stopped' }] };
      },
    );
    mcp.registerTool(
      'count_stock',
      { description: 'Counts an item in stock', inputSchema: { item: z.string() }, outputSchema: { item: z.string(), count: z.number() }, annotations: { readOnlyHint: true } },
      async ({ item }, extra) => {
        calls.push({ tool: 'count_stock', args: { item }, meta: extra._meta });
        const structured = { item, count: item.length };
        return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
      },
    );
    mcp.registerTool(
      'reach_warehouse',
      { description: 'Asks the warehouse', inputSchema: {}, annotations: { readOnlyHint: true } },
      async (_args, extra) => {
        calls.push({ tool: 'reach_warehouse', args: {}, meta: extra._meta });
        return { content: [{ type: 'text', text: 'the warehouse is offline' }], isError: true };
      },
    );
    for (const name of addedTools) registerAdded(mcp, name);
    return mcp;
  }

  const http: Server = createServer((request, response) => {
    void (async () => {
      const body = request.method === 'POST' ? await readJson(request) : undefined;
      const header = request.headers['mcp-session-id'];
      const sessionId = typeof header === 'string' ? header : undefined;
      for (const message of Array.isArray(body) ? body : body ? [body] : []) {
        const { id, method, params } = message as ReceivedMessage;
        received.push({ session: sessionId, ...(id !== undefined ? { id } : {}), ...(method ? { method } : {}), ...(params ? { params } : {}) });
      }
      let session = sessionId ? sessions.get(sessionId) : undefined;
      if (!session && !sessionId) {
        const mcp = newServer();
        const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => {
            opened++;
            sessions.set(id, { transport, mcp });
          },
        });
        transport.onclose = () => {
          if (transport.sessionId) sessions.delete(transport.sessionId);
        };
        await mcp.connect(transport);
        session = { transport, mcp };
      }
      if (!session) {
        response.writeHead(404).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
        return;
      }
      await session.transport.handleRequest(request, response, body);
    })();
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls,
    cancelled,
    received,
    sessionsOpened: () => opened,
    notes,
    addTool(name) {
      addedTools.push(name);
      for (const { mcp } of sessions.values()) registerAdded(mcp, name);
    },
    async close() {
      for (const { mcp } of sessions.values()) await mcp.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString();
  return text ? (JSON.parse(text) as unknown) : undefined;
}
