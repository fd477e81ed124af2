/**
 * Starts and stops a real Temporal dev server (`temporal server start-dev`) with turnpike's
 * search attributes registered. Used by `npm start`, the test suite and the benchmarks.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { connectTemporal } from '../connection/temporal-connection.js';
import { ensureTemporalCli } from './temporal-cli.js';
import proto from '@temporalio/proto';
import { SEARCH_ATTRIBUTE_TYPES } from '../workflows/context/search-attributes.js';

const { IndexedValueType } = proto.temporal.api.enums.v1;
const INDEXED_VALUE_TYPES = {
  Keyword: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  KeywordList: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
  Datetime: IndexedValueType.INDEXED_VALUE_TYPE_DATETIME,
} as const;

export interface DevServerOptions {
  /** Defaults to a free port. */
  port?: number;
  /** Web UI port; `undefined` with `headless: false` means the CLI's default (port + 1000). */
  uiPort?: number;
  headless?: boolean;
  /** SQLite file that keeps workflows across restarts; in memory when absent. */
  dbFile?: string;
  namespace?: string;
  /** Extra `--dynamic-config-value KEY=VALUE` settings, e.g. to lower history limits in a test. */
  dynamicConfig?: Record<string, string | number | boolean>;
  /** Where the server's own log goes; ignored when absent. */
  logFile?: string;
  log?: (line: string) => void;
}

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

/**
 * The server binds ports of its own besides `--port` (the HTTP API's, the metrics', its services'),
 * each picked free and bound a moment later. Another process on a busy machine (the test suite
 * starts servers in parallel) can take one in between; then the server exits with "address
 * already in use", and a second start, with fresh ports, succeeds. When the port lost is one of
 * its services' gRPC ports, the server logs the bind failure first and then panics with a long
 * stack trace, so the marker is looked for in all of the output, not in what is kept of it.
 */
const START_ATTEMPTS = 3;

class PortTakenError extends Error {}

/** A lost port, or a panic while the server wires itself up (how a lost service port can also show). */
const PORT_TAKEN = /address already in use|^panic: /m;

interface ServerOutput {
  /** The start and the end of what the server printed (a panic's stack trace can run to 30 KB). */
  text(): string;
  portTaken: boolean;
  /** Settles once the process's output streams have closed. */
  closed: Promise<void>;
}

function captureOutput(child: ChildProcess): ServerOutput {
  let head = '';
  let tail = '';
  let seam = '';
  const output: ServerOutput = {
    portTaken: false,
    closed: new Promise((resolve) => child.once('close', () => resolve())),
    text: () => (head.length < 4_000 ? head : `${head}\n[...]\n${tail}`),
  };
  const capture = (chunk: Buffer) => {
    const text = chunk.toString();
    if (PORT_TAKEN.test(seam + text)) output.portTaken = true;
    seam = text.slice(-64);
    if (head.length < 4_000) head += text.slice(0, 4_000 - head.length);
    tail = (tail + text).slice(-8_000);
  };
  child.stdout?.on('data', capture);
  child.stderr?.on('data', capture);
  return output;
}

async function waitUntilReady(address: string, namespace: string, child: ChildProcess, output: ServerOutput): Promise<void> {
  const deadline = Date.now() + 90_000;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      // 'exit' can come before the last of the output: read to the end before judging it.
      await Promise.race([output.closed, new Promise((resolve) => setTimeout(resolve, 2_000))]);
      const message = `temporal server start-dev exited with ${child.exitCode}:\n${output.text()}`;
      throw output.portTaken ? new PortTakenError(message) : new Error(message);
    }
    try {
      const connection = await connectTemporal({ address, connectTimeout: 1_000 });
      try {
        const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
        const missing = Object.entries(SEARCH_ATTRIBUTE_TYPES).filter(([name]) => !customAttributes || !(name in customAttributes));
        if (missing.length === 0) return;
        // `--search-attribute` registers attributes only in a new database: one kept from an earlier
        // `npm start` lacks those added since, so they are registered here.
        if (customAttributes && Object.keys(customAttributes).length > 0) {
          await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: Object.fromEntries(missing.map(([name, type]) => [name, INDEXED_VALUE_TYPES[type]])) });
        }
        lastError = new Error(`search attributes not registered yet: ${missing.map(([name]) => name).join(', ')}`);
      } finally {
        await connection.close();
      }
    } catch (error) {
      lastError = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`Temporal dev server at ${address} was not ready after 90s: ${String(lastError)}\n${output.text()}`);
}

export async function startDevServer(options: DevServerOptions = {}): Promise<DevServer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options);
    } catch (error) {
      if (attempt >= START_ATTEMPTS || !(error instanceof PortTakenError)) throw error;
      options.log?.(`temporal server start-dev: ${error.message.split('\n')[0]}; starting again (${attempt + 1}/${START_ATTEMPTS})`);
    }
  }
}

async function startOnce(options: DevServerOptions): Promise<DevServer> {
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
  for (const [key, value] of Object.entries(options.dynamicConfig ?? {})) {
    args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  }
  const child = spawn(cli, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const output = captureOutput(child);
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
    await waitUntilReady(address, namespace, child, output);
  } catch (error) {
    await stop();
    throw error;
  }
  const uiUrl = headless ? undefined : `http://127.0.0.1:${options.uiPort ?? port + 1000}`;
  return { address, namespace, uiUrl, cli, pid: child.pid, stop };
}
