// An MCP server (the official SDK's `Server`, over stdio) that completes the handshake and then
// never answers `tools/list`: a server that is up but stuck, as a third-party one can be.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const server = new Server({ name: 'hanging', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, () => new Promise(() => {}));
await server.connect(new StdioServerTransport());
