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
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { ClusterPorts } from './cluster-ports.js';
import { registerNamespace, ROOT, setupSchema, startTemporalServer, type StartTemporalServerOptions, type TemporalServer } from './cluster-server.js';
import { startWebUi, type WebUi } from './cluster-web-ui.js';
import { ManagedProcess } from './managed-process.js';
import { startPostgres, type Postgres, type PostgresShutdown } from './postgres.js';
import { ensureTemporalCli } from './temporal-cli.js';
import { ensureTemporalServer, ensureTemporalUi, type TemporalServerBinaries } from './temporal-server.js';

export { DEFAULT_CLUSTER_PORTS, portsInUse, randomClusterPorts, type ClusterPorts } from './cluster-ports.js';
export {
  DEPLOY_DIRECTORY,
  DYNAMIC_CONFIG_FILE,
  registerNamespace,
  ROOT,
  serverEnvironment,
  SERVER_CONFIG_DIRECTORY,
  setupSchema,
  startTemporalServer,
  type PostgresConnection,
  type StartTemporalServerOptions,
  type TemporalServer,
} from './cluster-server.js';
export { startWebUi, type WebUi } from './cluster-web-ui.js';

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
  /**
   * Stops PostgreSQL (`fast` or `immediate` shutdown, see Postgres.restart) and starts it again
   * on the same data folder and port, under a running server and workers, which reconnect.
   */
  restartPostgres(mode: PostgresShutdown): Promise<{ downMs: number }>;
  /** One more worker process like the others (a replacement for one killed), added to `workers`. */
  startWorker(): Promise<ManagedProcess>;
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
    let workersStarted = 0;
    const startWorker = () => {
      const name = `worker-${++workersStarted}`;
      return startWorkerProcess({
        ...options.worker,
        name,
        env: { TEMPORAL_ADDRESS: server.address, TEMPORAL_NAMESPACE: namespace, ...options.worker.env },
        logFile: path.join(logDirectory, `${name}.log`),
        detached: options.detached,
      }).then((worker) => {
        stack.push(() => worker.stop('SIGTERM', 15_000));
        return worker;
      });
    };
    const workers = await timed(log, `${options.workers} turnpike worker process${options.workers === 1 ? '' : 'es'}`, () =>
      Promise.all(Array.from({ length: options.workers }, startWorker)),
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
      restartPostgres: (mode) => postgres.restart(mode),
      async startWorker() {
        const worker = await startWorker();
        workers.push(worker);
        return worker;
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
