/**
 * A self-hosted Temporal cluster on this machine, without Docker: PostgreSQL, the Temporal
 * server (all four services in one process) with SQL advanced visibility, the Web UI and N
 * turnpike worker processes. `npm run cluster` (scripts/cluster.ts) runs it for people; the
 * cluster test (test/cluster/) starts the same parts and kills and restarts them.
 *
 * It is docker-compose.yml's topology with the same files doing the work: the server reads
 * deploy/temporal-server/turnpike.yaml and deploy/dynamicconfig/turnpike.yaml, the databases
 * are made by deploy/setup-postgres.sh, and the namespace and search attributes by
 * deploy/register-search-attributes.sh.
 */
import { mkdirSync, symlinkSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectTemporal } from '../worker/temporal-connection.js';
import { ManagedProcess } from './managed-process.js';
import { startPostgres, type Postgres } from './postgres.js';
import { ensureTemporalCli } from './temporal-cli.js';
import { ensureTemporalServer, ensureTemporalUi, type TemporalServerBinaries } from './temporal-server.js';

export const ROOT = fileURLToPath(new URL('../', import.meta.url));
export const DEPLOY_DIRECTORY = path.join(ROOT, 'deploy');
/** The server config shared with docker-compose.yml; `--env turnpike` selects turnpike.yaml in it. */
export const SERVER_CONFIG_DIRECTORY = path.join(DEPLOY_DIRECTORY, 'temporal-server');
export const DYNAMIC_CONFIG_FILE = path.join(DEPLOY_DIRECTORY, 'dynamicconfig', 'turnpike.yaml');

export interface ClusterPorts {
  postgres: number;
  frontend: number;
  frontendHttp: number;
  frontendMembership: number;
  history: number;
  historyMembership: number;
  matching: number;
  matchingMembership: number;
  worker: number;
  workerMembership: number;
  ui: number;
}

/**
 * `npm run cluster`: Temporal's usual ports (clients default to 127.0.0.1:7233), the Web UI where
 * docker-compose.yml puts it, PostgreSQL next to the usual 5432 so a system PostgreSQL can stay.
 */
export const DEFAULT_CLUSTER_PORTS: ClusterPorts = {
  postgres: 5433,
  frontend: 7233,
  frontendHttp: 7243,
  frontendMembership: 6933,
  history: 7234,
  historyMembership: 6934,
  matching: 7235,
  matchingMembership: 6935,
  worker: 7239,
  workerMembership: 6939,
  ui: 8080,
};

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** The ports of `ports` that something on 127.0.0.1 already listens on, by name. */
export async function portsInUse(ports: ClusterPorts): Promise<Array<[keyof ClusterPorts, number]>> {
  const entries = Object.entries(ports) as Array<[keyof ClusterPorts, number]>;
  const free = await Promise.all(entries.map(([, port]) => portIsFree(port)));
  return entries.filter((_, index) => !free[index]);
}

/**
 * Free ports for a cluster of its own (tests). Drawn from 20000–32767, on purpose:
 * - the server stores each service's membership port in cluster_membership.rpc_port, a
 *   PostgreSQL SMALLINT, so a port above 32767 fails the server at start
 *   ("value ... is out of range for type smallint");
 * - below Linux's ephemeral range (32768+), so no outgoing connection takes one meanwhile.
 */
export async function randomClusterPorts(): Promise<ClusterPorts> {
  const taken = new Set<number>();
  const pick = async (): Promise<number> => {
    for (let attempt = 0; attempt < 200; attempt++) {
      const port = 20_000 + Math.floor(Math.random() * 12_768);
      if (taken.has(port) || !(await portIsFree(port))) continue;
      taken.add(port);
      return port;
    }
    throw new Error('No free port between 20000 and 32767 after 200 tries.');
  };
  const ports = {} as ClusterPorts;
  for (const name of Object.keys(DEFAULT_CLUSTER_PORTS) as Array<keyof ClusterPorts>) ports[name] = await pick();
  return ports;
}

function runScript(script: string, env: NodeJS.ProcessEnv, logFile: string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = new ManagedProcess({ name: path.basename(script), command: 'sh', args: [script], env, logFile });
    const timer = setTimeout(() => child.child.kill('SIGKILL'), timeoutMs);
    void child.exited.then(({ code, signal }) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`${path.relative(ROOT, script)} failed (${signal ?? `exit ${code}`}; log: ${logFile}):\n${child.output().trim().split('\n').slice(-15).join('\n')}`));
    });
  });
}

export interface PostgresConnection {
  host: string;
  port: number;
  user: string;
  password: string;
}

/** The variables deploy/temporal-server/turnpike.yaml reads (Temporal's own template's names). */
export function serverEnvironment(ports: ClusterPorts, postgres: PostgresConnection, logLevel: string): Record<string, string> {
  return {
    DB: 'postgres12',
    POSTGRES_SEEDS: postgres.host,
    DB_PORT: String(postgres.port),
    POSTGRES_USER: postgres.user,
    POSTGRES_PWD: postgres.password,
    DBNAME: 'temporal',
    VISIBILITY_DBNAME: 'temporal_visibility',
    BIND_ON_IP: '127.0.0.1',
    FRONTEND_GRPC_PORT: String(ports.frontend),
    FRONTEND_HTTP_PORT: String(ports.frontendHttp),
    FRONTEND_MEMBERSHIP_PORT: String(ports.frontendMembership),
    HISTORY_GRPC_PORT: String(ports.history),
    HISTORY_MEMBERSHIP_PORT: String(ports.historyMembership),
    MATCHING_GRPC_PORT: String(ports.matching),
    MATCHING_MEMBERSHIP_PORT: String(ports.matchingMembership),
    WORKER_GRPC_PORT: String(ports.worker),
    WORKER_MEMBERSHIP_PORT: String(ports.workerMembership),
    DYNAMIC_CONFIG_FILE_PATH: DYNAMIC_CONFIG_FILE,
    LOG_LEVEL: logLevel,
  };
}

/** Creates or upgrades the `temporal` and `temporal_visibility` databases (idempotent). */
export async function setupSchema(options: { binaries: TemporalServerBinaries; postgres: PostgresConnection; logFile: string }): Promise<void> {
  await runScript(
    path.join(DEPLOY_DIRECTORY, 'setup-postgres.sh'),
    {
      PATH: `${options.binaries.binDirectory}${path.delimiter}${process.env.PATH}`,
      DB: 'postgres12',
      POSTGRES_SEEDS: options.postgres.host,
      DB_PORT: String(options.postgres.port),
      POSTGRES_USER: options.postgres.user,
      SQL_PASSWORD: options.postgres.password,
      SCHEMA_ROOT: options.binaries.postgresSchema,
    },
    options.logFile,
    180_000,
  );
}

export interface TemporalServer {
  /** host:port of the frontend, for clients and workers */
  address: string;
  process: ManagedProcess;
  /** SIGTERM: the server hands its shards over and stops. */
  stop(): Promise<void>;
  /** SIGKILL: as a crash would. */
  kill(): Promise<void>;
}

export interface StartTemporalServerOptions {
  binaries: TemporalServerBinaries;
  ports: ClusterPorts;
  postgres: PostgresConnection;
  logFile: string;
  logLevel?: string;
  detached?: boolean;
}

/** Waits until the frontend reports SERVING to a gRPC health check, as `temporal operator cluster health` does. */
async function waitUntilServing(address: string, server: ManagedProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (!server.running) throw new Error(`temporal-server exited while starting (log: ${server.logFile}):\n${server.output().trim().split('\n').slice(-10).join('\n')}`);
    try {
      const connection = await connectTemporal({ address, connectTimeout: 1_000 });
      try {
        const response = await connection.healthService.check({ service: 'temporal.api.workflowservice.v1.WorkflowService' });
        if (response.status === 1) return; // SERVING
        lastError = new Error(`health status ${response.status}`);
      } finally {
        await connection.close();
      }
    } catch (error) {
      lastError = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`Temporal server at ${address} was not serving after ${timeoutMs / 1000}s: ${String(lastError)} (log: ${server.logFile})`);
}

/** Starts `temporal-server start` on the cluster's ports and waits until its frontend serves. */
export async function startTemporalServer(options: StartTemporalServerOptions): Promise<TemporalServer> {
  const address = `127.0.0.1:${options.ports.frontend}`;
  const server = new ManagedProcess({
    name: 'temporal-server',
    // The script docker-compose.yml starts the server with; it execs temporal-server, so this
    // process is the server itself and a kill reaches it.
    command: 'sh',
    args: [path.join(DEPLOY_DIRECTORY, 'start-temporal.sh')],
    env: {
      PATH: `${options.binaries.binDirectory}${path.delimiter}${process.env.PATH}`,
      HOME: process.env.HOME,
      TURNPIKE_SERVER_CONFIG_DIR: SERVER_CONFIG_DIRECTORY,
      ...serverEnvironment(options.ports, options.postgres, options.logLevel ?? 'warn'),
    },
    logFile: options.logFile,
    detached: options.detached,
  });
  try {
    await waitUntilServing(address, server, 120_000);
  } catch (error) {
    await server.kill();
    throw error;
  }
  return {
    address,
    process: server,
    // Graceful shutdown drains for a few seconds; a stuck one is killed after 30s.
    stop: () => server.stop('SIGTERM', 30_000),
    kill: () => server.kill(),
  };
}

/**
 * Namespace `namespace` and turnpike's search attributes, by deploy/register-search-attributes.sh
 * with the Temporal CLI turnpike builds (the same script docker-compose.yml runs in admin-tools).
 */
export async function registerNamespace(options: { cli: string; address: string; namespace: string; directory: string; logFile: string }): Promise<void> {
  // The script calls `temporal` from PATH; TEMPORAL_CLI may name a binary called otherwise.
  let binDirectory = path.dirname(options.cli);
  if (path.basename(options.cli) !== 'temporal') {
    binDirectory = path.join(options.directory, 'bin');
    mkdirSync(binDirectory, { recursive: true });
    rmSync(path.join(binDirectory, 'temporal'), { force: true });
    symlinkSync(options.cli, path.join(binDirectory, 'temporal'));
  }
  await runScript(
    path.join(DEPLOY_DIRECTORY, 'register-search-attributes.sh'),
    {
      PATH: `${binDirectory}${path.delimiter}${process.env.PATH}`,
      HOME: process.env.HOME,
      TEMPORAL_ADDRESS: options.address,
      TEMPORAL_NAMESPACE: options.namespace,
    },
    options.logFile,
    300_000,
  );
}

export interface WebUi {
  url: string;
  process: ManagedProcess;
}

/** The Web UI server (ui-server, with the built UI embedded) for the cluster's frontend. */
export async function startWebUi(options: { binary: string; address: string; port: number; namespace: string; directory: string; logFile: string; detached?: boolean }): Promise<WebUi> {
  const configDirectory = path.join(options.directory, 'ui', 'config');
  mkdirSync(configDirectory, { recursive: true });
  // ui-server reads <config dir>/<env>.yaml; written each start because the ports may change.
  writeFileSync(
    path.join(configDirectory, 'turnpike.yaml'),
    [
      `temporalGrpcAddress: ${options.address}`,
      'host: 127.0.0.1',
      `port: ${options.port}`,
      'enableUi: true',
      `defaultNamespace: ${options.namespace}`,
      // Plain HTTP on loopback: a Secure cookie would never be sent back.
      'cors:',
      '  cookieInsecure: true',
      'hideLogs: true',
      '',
    ].join('\n'),
  );
  const ui = new ManagedProcess({
    name: 'temporal-ui-server',
    command: options.binary,
    args: ['--root', '/', '--config', configDirectory, '--env', 'turnpike', 'start'],
    env: { PATH: process.env.PATH, HOME: process.env.HOME },
    logFile: options.logFile,
    detached: options.detached,
  });
  const url = `http://127.0.0.1:${options.port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (!ui.running) throw new Error(`The Web UI server exited while starting (log: ${options.logFile}):\n${ui.output()}`);
    const ok = await fetch(url, { signal: AbortSignal.timeout(2_000) }).then((response) => response.ok, () => false);
    if (ok) return { url, process: ui };
    if (Date.now() > deadline) {
      await ui.kill();
      throw new Error(`The Web UI did not answer on ${url} within 30s (log: ${options.logFile}).`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

export interface WorkerProcessOptions {
  name: string;
  /** A TypeScript entry run with `node --import tsx` (demo/worker.ts, or a test's own). */
  entry: string;
  env: Record<string, string>;
  /** A line the worker prints once it polls. */
  readyPattern: RegExp;
  logFile: string;
  detached?: boolean;
}

/** Starts a turnpike worker as its own process and resolves once it polls. */
export async function startWorkerProcess(options: WorkerProcessOptions): Promise<ManagedProcess> {
  // `node --import tsx`, not the tsx CLI: the CLI runs the script in a child process, which a
  // SIGKILL of the CLI would leave running.
  const worker = new ManagedProcess({
    name: options.name,
    command: process.execPath,
    args: ['--import', 'tsx', options.entry],
    cwd: ROOT,
    env: { ...process.env, ...options.env },
    logFile: options.logFile,
    detached: options.detached,
  });
  try {
    // Bundling the workflows takes seconds per worker, more when several start on two cores.
    await worker.waitForLine(options.readyPattern, 180_000);
  } catch (error) {
    await worker.kill();
    throw error;
  }
  return worker;
}

export interface ClusterOptions {
  /** Holds pg/ (the database, kept across runs), logs/ and the Web UI's config. */
  directory: string;
  ports: ClusterPorts;
  namespace?: string;
  workers: number;
  worker: Omit<WorkerProcessOptions, 'name' | 'logFile' | 'detached'>;
  ui: boolean;
  serverLogLevel?: string;
  /** Own process groups for the parts (see ManagedProcess): for the interactive script. */
  detached?: boolean;
  log?: (line: string) => void;
}

export interface Cluster {
  address: string;
  namespace: string;
  ports: ClusterPorts;
  cli: string;
  binaries: TemporalServerBinaries;
  postgres: Postgres;
  server: TemporalServer;
  ui?: WebUi;
  workers: ManagedProcess[];
  logDirectory: string;
  /** Starts the Temporal server again on the same ports and database, after stop() or kill(). */
  restartServer(): Promise<void>;
  /** Workers, Web UI, server, PostgreSQL: each after what depends on it has stopped. */
  stop(): Promise<void>;
}

async function timed<T>(log: (line: string) => void, what: string, work: () => Promise<T>): Promise<T> {
  const started = Date.now();
  log(`• ${what}...`);
  const result = await work();
  log(`  ${what}: done in ${((Date.now() - started) / 1000).toFixed(1)}s`);
  return result;
}

/** Builds what is missing, then starts every part in dependency order; stops what it started on failure. */
export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const log = options.log ?? (() => {});
  const namespace = options.namespace ?? 'default';
  const logDirectory = path.join(options.directory, 'logs');
  const stack: Array<() => Promise<void>> = [];
  const unwind = async () => {
    for (const stop of stack.reverse()) await stop().catch(() => undefined);
  };
  try {
    const binaries = await timed(log, 'Temporal server and SQL tool (built from the Go module proxy once, then cached)', () => ensureTemporalServer({ log }));
    const cli = await timed(log, 'Temporal CLI (built once, then cached)', () => ensureTemporalCli({ log }));
    const uiBinary = options.ui ? await timed(log, 'Temporal Web UI (built once, then cached)', () => ensureTemporalUi({ log })) : undefined;

    const existing = existsSync(path.join(options.directory, 'pg', 'PG_VERSION'));
    const postgres = await timed(log, `PostgreSQL on 127.0.0.1:${options.ports.postgres}${existing ? ' (existing data)' : ''}`, () =>
      startPostgres({ dataDirectory: path.join(options.directory, 'pg'), port: options.ports.postgres, logFile: path.join(logDirectory, 'postgres.log'), log, detached: options.detached }),
    );
    stack.push(postgres.stop);
    await timed(log, 'Schema: databases temporal and temporal_visibility (deploy/setup-postgres.sh)', () =>
      setupSchema({ binaries, postgres, logFile: path.join(logDirectory, 'schema.log') }),
    );
    const serverOptions: StartTemporalServerOptions = {
      binaries,
      ports: options.ports,
      postgres,
      logFile: path.join(logDirectory, 'temporal-server.log'),
      logLevel: options.serverLogLevel,
      detached: options.detached,
    };
    let server = await timed(log, `Temporal server on ${options.ports.frontend}`, () => startTemporalServer(serverOptions));
    stack.push(() => server.stop());
    await timed(log, `Namespace ${namespace} and turnpike's search attributes (deploy/register-search-attributes.sh)`, () =>
      registerNamespace({ cli, address: server.address, namespace, directory: options.directory, logFile: path.join(logDirectory, 'namespace.log') }),
    );
    const workers = await timed(log, `${options.workers} turnpike worker process${options.workers === 1 ? '' : 'es'}`, () =>
      Promise.all(
        Array.from({ length: options.workers }, (_, index) =>
          startWorkerProcess({
            ...options.worker,
            name: `worker-${index + 1}`,
            env: { TEMPORAL_ADDRESS: server.address, TEMPORAL_NAMESPACE: namespace, ...options.worker.env },
            logFile: path.join(logDirectory, `worker-${index + 1}.log`),
            detached: options.detached,
          }).then((worker) => {
            stack.push(() => worker.stop('SIGTERM', 15_000));
            return worker;
          }),
        ),
      ),
    );
    let ui: WebUi | undefined;
    if (uiBinary) {
      ui = await timed(log, `Web UI on ${options.ports.ui}`, () =>
        startWebUi({ binary: uiBinary, address: server.address, port: options.ports.ui, namespace, directory: options.directory, logFile: path.join(logDirectory, 'ui.log'), detached: options.detached }),
      );
      stack.push(() => ui!.process.stop('SIGTERM', 5_000));
    }
    const cluster: Cluster = {
      address: server.address,
      namespace,
      ports: options.ports,
      cli,
      binaries,
      postgres,
      get server() {
        return server;
      },
      ui,
      workers,
      logDirectory,
      async restartServer() {
        if (server.process.running) await server.stop();
        server = await startTemporalServer(serverOptions);
      },
      async stop() {
        await Promise.all(workers.map((worker) => worker.stop('SIGTERM', 15_000)));
        await ui?.process.stop('SIGTERM', 5_000);
        await server.stop();
        await postgres.stop();
      },
    };
    return cluster;
  } catch (error) {
    await unwind();
    throw error;
  }
}
