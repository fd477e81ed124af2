/**
 * A small MCP server, built with the official SDK's `McpServer`, served over streamable HTTP
 * from the test process so a test can see what reached it: which tools were called with which
 * `_meta`, which calls were cancelled, and can change its tool list while a turn runs. The
 * reference server (`@modelcontextprotocol/server-everything`) has no destructive tool and no
 * way to change its tool list from outside, so these two behaviours are checked here.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

export interface RecordedCall {
  tool: string;
  args: unknown;
  meta: Record<string, unknown> | undefined;
}

export interface McpTestServer {
  url: string;
  calls: RecordedCall[];
  cancelled: string[];
  notes: Map<string, string>;
  /** Adds a tool; the server announces `notifications/tools/list_changed` to its client. */
  addTool(name: string): void;
  close(): Promise<void>;
}

export async function startMcpTestServer(): Promise<McpTestServer> {
  const calls: RecordedCall[] = [];
  const cancelled: string[] = [];
  const notes = new Map<string, string>([['n1', 'buy milk']]);
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

  // One session: the worker keeps one connection per server.
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID() });
  await mcp.connect(transport);
  const http: Server = createServer((request, response) => {
    void transport.handleRequest(request, response);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls,
    cancelled,
    notes,
    addTool(name) {
      mcp.registerTool(name, { description: `Added later: ${name}`, inputSchema: {}, annotations: { readOnlyHint: true } }, async () => ({
        content: [{ type: 'text', text: `${name} ran` }],
      }));
    },
    async close() {
      await mcp.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
