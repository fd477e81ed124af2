/**
 * Starts and stops a real Temporal dev server (`temporal server start-dev`) with turnpike's
 * search attributes registered. Used by `npm start`, the test suite and the benchmarks.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { ensureTemporalCli } from './temporal-cli.js';
import { SEARCH_ATTRIBUTE_TYPES } from '../workflows/search-attributes.js';

export interface DevServerOptions {
  /** Defaults to a free port. */
  port?: number;
  /** Web UI port; `undefined` with `headless: false` means the CLI's default (port + 1000). */
  uiPort?: number;
  headless?: boolean;
  /** SQLite file that keeps workflows across restarts; in memory when absent. */
  dbFile?: string;
  namespace?: string;
  /** Extra `--dynamic-config-value KEY=VALUE` settings, e.g. to lower history limits in a test (on top of {@link TURNPIKE_DYNAMIC_CONFIG}). */
  dynamicConfig?: Record<string, string | number | boolean>;
  /** Where the server's own log goes; ignored when absent. */
  logFile?: string;
  log?: (line: string) => void;
}

/**
 * Dynamic config of every dev server turnpike starts (a cluster's is in
 * deploy/dynamicconfig/turnpike.yaml, with the same value and why).
 *
 * `history.maxInFlightUpdatePayloads`: 2 MiB instead of the server's 20 MiB. A worker answers
 * every update of a workflow task in that task's completion, and the SDK (sdk-core's update
 * Rejection and Acceptance messages) sends each update's request back with its answer, payload
 * and all. The server delivers every update in flight to the next workflow task, so with 20 MiB
 * ten concurrent updates of 1.9 MB make a completion of 19 MB, which the server refuses
 * (`GRPC Message too large`, gRPC's 4 MiB limit) and the turn's workflow task fails until they
 * stop. With 2 MiB in flight per workflow the echo stays under 2 MiB, next to at most a ~1 MiB
 * transcript page answering a query; a sender beyond it gets `ResourceExhausted` and retries.
 * A lower limit, not a higher one: every update turnpike takes is far smaller (a decision with
 * an edited input is at most ~320 KiB, see workflows/field-limits.ts).
 */
export const TURNPIKE_DYNAMIC_CONFIG: Record<string, number> = {
  'history.maxInFlightUpdatePayloads': 2 * 1024 * 1024,
};

export interface DevServer {
  address: string;
  namespace: string;
  uiUrl?: string;
  cli: string;
  /** The server process, for its memory and CPU (the benchmark reads them from /proc). */
  pid?: number;
  stop(): Promise<void>;
}

/** Asks the kernel for a port nobody listens on. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function waitUntilReady(address: string, namespace: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 90_000;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new Error(`temporal server start-dev exited with ${child.exitCode}:\n${output()}`);
    }
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1_000 });
      try {
        const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
        const registered = Object.keys(SEARCH_ATTRIBUTE_TYPES).every((name) => customAttributes && name in customAttributes);
        if (registered) return;
        lastError = new Error('search attributes not registered yet');
      } finally {
        await connection.close();
      }
    } catch (error) {
      lastError = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`Temporal dev server at ${address} was not ready after 90s: ${String(lastError)}\n${output()}`);
}

export async function startDevServer(options: DevServerOptions = {}): Promise<DevServer> {
  const cli = await ensureTemporalCli({ log: options.log });
  const port = options.port ?? (await freePort());
  const namespace = options.namespace ?? 'default';
  const headless = options.headless ?? true;
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(port), '--namespace', namespace, '--log-level', 'warn'];
  if (headless) args.push('--headless');
  else if (options.uiPort !== undefined) args.push('--ui-port', String(options.uiPort));
  if (options.dbFile) {
    mkdirSync(path.dirname(options.dbFile), { recursive: true });
    args.push('--db-filename', options.dbFile);
  }
  for (const [name, type] of Object.entries(SEARCH_ATTRIBUTE_TYPES)) args.push('--search-attribute', `${name}=${type}`);
  for (const [key, value] of Object.entries({ ...TURNPIKE_DYNAMIC_CONFIG, ...options.dynamicConfig })) {
    args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  }
  const child = spawn(cli, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let captured = '';
  const capture = (chunk: Buffer) => {
    captured = (captured + chunk.toString()).slice(-8_000);
  };
  child.stdout?.on('data', capture);
  child.stderr?.on('data', capture);
  const address = `127.0.0.1:${port}`;
  // Never leave a server behind: if this process exits without stop(), kill it on the way out.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const stop = async () => {
    process.removeListener('exit', killOnExit);
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
  try {
    await waitUntilReady(address, namespace, child, () => captured);
  } catch (error) {
    await stop();
    throw error;
  }
  const uiUrl = headless ? undefined : `http://127.0.0.1:${options.uiPort ?? port + 1000}`;
  return { address, namespace, uiUrl, cli, pid: child.pid, stop };
}
