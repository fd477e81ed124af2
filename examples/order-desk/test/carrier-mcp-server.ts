/**
 * The carrier's MCP server, as a stdio process the worker starts: `track_parcel` (read-only) and
 * `cancel_shipment` (destructive, so turnpike parks its calls for a person). Each cancellation it
 * makes is appended to the file `CARRIER_LOG` names, for the tests to read.
 */
import { appendFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'carrier', version: '1.0.0' });

server.registerTool(
  'track_parcel',
  { description: 'Where a parcel is.', inputSchema: { shipmentId: z.string() }, annotations: { readOnlyHint: true } },
  async ({ shipmentId }) => ({ content: [{ type: 'text', text: `${shipmentId}: out for delivery` }] }),
);

server.registerTool(
  'cancel_shipment',
  { description: 'Cancels a shipment for good.', inputSchema: { shipmentId: z.string() }, annotations: { readOnlyHint: false, destructiveHint: true } },
  async ({ shipmentId }) => {
    if (process.env.CARRIER_LOG) appendFileSync(process.env.CARRIER_LOG, `${shipmentId}\n`);
    return { content: [{ type: 'text', text: `cancelled ${shipmentId}` }] };
  },
);

await server.connect(new StdioServerTransport());
