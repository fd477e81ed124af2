/**
 * The Temporal server of a cluster, from the files docker-compose.yml uses (deploy/): its
 * environment, the databases' schema, the server process, and the namespace with turnpike's
 * search attributes.
 */
import { mkdirSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectTemporal } from '../connection/temporal-connection.js';
import type { ClusterPorts } from './cluster-ports.js';
import { ManagedProcess } from './managed-process.js';
import type { TemporalServerBinaries } from './temporal-server.js';

export const ROOT = fileURLToPath(new URL('../', import.meta.url));
export const DEPLOY_DIRECTORY = path.join(ROOT, 'deploy');
/** The server config shared with docker-compose.yml; `--env turnpike` selects turnpike.yaml in it. */
export const SERVER_CONFIG_DIRECTORY = path.join(DEPLOY_DIRECTORY, 'temporal-server');
export const DYNAMIC_CONFIG_FILE = path.join(DEPLOY_DIRECTORY, 'dynamicconfig', 'turnpike.yaml');

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
