// A tap between the worker and a stdio MCP server: `node mcp-stdio-tap.mjs <log> <command> [args…]`
// starts the server as its child and passes stdin and stdout through unchanged, appending to the
// log (JSON lines) one `{ "start": pid }` per server process and one `{ "in": message }` per
// message the server received. So a test sees, on the server's side of the pipe, how many
// processes (connections) the worker opened and what it sent (e.g. `notifications/cancelled`),
// with a server it did not write and cannot instrument.
import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';

const [log, command, ...args] = process.argv.slice(2);
const server = spawn(command, args, { stdio: ['pipe', 'inherit', 'inherit'] });
appendFileSync(log, `${JSON.stringify({ start: server.pid })}\n`);

let pending = '';
process.stdin.on('data', (chunk) => {
  server.stdin.write(chunk);
  pending += chunk.toString();
  const lines = pending.split('\n');
  pending = lines.pop() ?? '';
  for (const line of lines) if (line.trim()) appendFileSync(log, `${JSON.stringify({ pid: server.pid, in: JSON.parse(line) })}\n`);
});
// The worker closing the pipe is how it ends a stdio connection: the server sees the same. A
// server that stays up after that (server-everything does) is stopped as the MCP client would,
// so a worker process that ends without closing its connections leaves no server behind.
process.stdin.on('end', () => {
  server.stdin.end();
  setTimeout(() => server.kill('SIGTERM'), 2_000).unref();
});
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => server.kill(signal));
server.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
