/**
 * Runs the time-skipping test server's launcher as a child process of the test, on a free port,
 * and waits for it to accept connections. The SDK's own ephemeral-server start gives a server 5 s
 * to listen, which a JVM on a loaded CI machine often misses; here the wait is the caller's
 * (`startupTimeoutMs`), and `stop()` ends the process (and is called if the test's process exits).
 */
import { spawn } from 'node:child_process';
import { connect, createServer } from 'node:net';

export interface TestServerProcess {
  /** `127.0.0.1:<port>`. */
  address: string;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export async function startTestServerProcess(launcher: string, options: { startupTimeoutMs?: number } = {}): Promise<TestServerProcess> {
  const port = await freePort();
  const child = spawn(launcher, [String(port)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  let exited = false;
  const exit = new Promise<void>((resolve) => child.once('exit', () => ((exited = true), resolve())));
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const stop = async () => {
    process.off('exit', killOnExit);
    if (exited) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exit;
    clearTimeout(timer);
  };
  const deadline = Date.now() + (options.startupTimeoutMs ?? 120_000);
  while (!(await accepts(port))) {
    if (exited || Date.now() > deadline) {
      await stop();
      throw new Error(`Temporal's test server (${launcher}) did not listen on port ${port}${exited ? `; it exited: ${stderr.trim()}` : ` within ${options.startupTimeoutMs ?? 120_000} ms`}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { address: `127.0.0.1:${port}`, stop };
}
