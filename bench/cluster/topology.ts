/**
 * The cluster bench's topology, `npm run cluster`'s (scripts/temporal-cluster.ts): PostgreSQL, the
 * Temporal server on it with SQL visibility, three worker processes (worker-entry.ts) and two
 * HTTP API processes (api-entry.ts), workers and APIs on the PostgreSQL live channel. In a
 * temporary directory, on random ports; no Web UI. What the figures read from it: each
 * process's RSS, the databases' size, each API's `LISTEN` traffic.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { connectTemporal } from '../../connection/temporal-connection.js';
import { turnpikeDataConverter } from '../../content/data-converter.js';
import { freeLowPort } from '../../test/support/free-port.js';
import type { ManagedProcess } from '../../scripts/managed-process.js';
import { randomClusterPorts, ROOT, startCluster, startWorkerProcess, type Cluster } from '../../scripts/temporal-cluster.js';
import { treeCpuSeconds } from './process-cpu.js';

export const WORKERS = 3;
export const API_PROCESSES = 2;
export const TASK_QUEUE = 'cluster-bench';
/** Bearer token → identity, for every API process. */
export const TOKENS = { 'tok-approver-1': 'approver-1', 'tok-approver-2': 'approver-2', 'tok-approver-3': 'approver-3', 'tok-mallory': 'mallory', 'tok-reader': 'reader' } as const;

export interface ApiProcess {
  base: string;
  process: ManagedProcess;
}

export interface ClusterTopology {
  cluster: Cluster;
  client: Client;
  apis: ApiProcess[];
  /** The cluster's PostgreSQL, as the live channel's connection string. */
  postgresUrl: string;
  /** RSS in bytes of each worker and API process, read from /proc. */
  rss(): { workers: number[]; apis: number[] };
  /** pg_database_size of the Temporal and visibility databases together, in bytes. */
  databaseBytes(): Promise<number>;
  /** CPU seconds (user + system) each process has used so far: workers, then API processes. */
  /** CPU seconds so far: each worker and API process, the Temporal server, PostgreSQL (the postmaster and its backends). */
  cpuSeconds(): { workers: number[]; apis: number[]; server: number; postgres: number };
  /** PostgreSQL's counters for Temporal's two databases since the cluster started (`pg_stat_database`). */
  databaseActivity(): Promise<DatabaseActivity>;
  /** What each API process's `LISTEN` connection has received so far. */
  liveReceived(): Promise<Array<{ notifications: number; characters: number }>>;
  stop(): Promise<void>;
}

/** Transactions committed and rows written in `temporal` + `temporal_visibility`, and rows read. */
export interface DatabaseActivity {
  commits: number;
  rowsWritten: number;
  rowsRead: number;
}

/** A process's user + system CPU time so far, from /proc (clock ticks of 1/100 s on Linux). */
function cpuSecondsOf(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function rssOf(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((row) => row.startsWith('VmRSS:'));
  return Number(line?.match(/(\d+)/)?.[1] ?? NaN) * 1024;
}

export async function startClusterTopology(options: { bundlePath: string; openaiBaseURL: string; log: (line: string) => void }): Promise<ClusterTopology> {
  const directory = mkdtempSync(path.join(tmpdir(), 'turnpike-cluster-bench-'));
  // PostgreSQL runs as the postgres user when we are root: it must reach <directory>/pg.
  chmodSync(directory, 0o755);
  const ports = await randomClusterPorts();
  const postgresUrl = `postgresql://temporal:temporal@127.0.0.1:${ports.postgres}/postgres`;
  const shared = { TURNPIKE_TASK_QUEUE: TASK_QUEUE, TURNPIKE_LIVE_POSTGRES_URL: postgresUrl };
  const cluster = await startCluster({
    directory,
    ports,
    workers: WORKERS,
    worker: {
      entry: path.join(ROOT, 'bench', 'cluster', 'worker-entry.ts'),
      env: { ...shared, WORKFLOW_BUNDLE: options.bundlePath, OPENAI_API_KEY: 'sk-bench-cluster', OPENAI_BASE_URL: options.openaiBaseURL },
      readyPattern: /^ready/,
    },
    ui: false,
    log: (line) => options.log(`  cluster: ${line.trim()}`),
  });
  const apis: ApiProcess[] = [];
  try {
    for (let index = 0; index < API_PROCESSES; index++) {
      const port = await freeLowPort();
      const child = await startWorkerProcess({
        name: `api-${index + 1}`,
        entry: path.join(ROOT, 'bench', 'cluster', 'api-entry.ts'),
        env: {
          ...shared,
          TEMPORAL_ADDRESS: cluster.address,
          TEMPORAL_NAMESPACE: cluster.namespace,
          TURNPIKE_API_TOKENS: Object.entries(TOKENS).map(([token, identity]) => `${token}:${identity}`).join(','),
          TURNPIKE_API_PORT: String(port),
        },
        readyPattern: /^ready/,
        logFile: path.join(cluster.logDirectory, `api-${index + 1}.log`),
      });
      apis.push({ base: `http://127.0.0.1:${port}`, process: child });
    }
  } catch (error) {
    await Promise.all(apis.map((api) => api.process.stop('SIGTERM', 5_000)));
    await cluster.stop();
    throw error;
  }
  const connection = await connectTemporal({ address: cluster.address });
  const client = new Client({ connection, namespace: cluster.namespace, dataConverter: turnpikeDataConverter });
  const { default: pg } = await import('pg');
  const database = new pg.Client({ connectionString: postgresUrl });
  await database.connect();
  return {
    cluster,
    client,
    apis,
    postgresUrl,
    rss: () => ({ workers: cluster.workers.map((worker) => rssOf(worker.pid)), apis: apis.map((api) => rssOf(api.process.pid)) }),
    async databaseBytes() {
      const { rows } = await database.query<{ bytes: string }>("SELECT pg_database_size('temporal') + pg_database_size('temporal_visibility') AS bytes");
      return Number(rows[0]!.bytes);
    },
    cpuSeconds: () => ({
      workers: cluster.workers.map((worker) => cpuSecondsOf(worker.pid)),
      apis: apis.map((api) => cpuSecondsOf(api.process.pid)),
      server: treeCpuSeconds(cluster.server.process.pid),
      postgres: treeCpuSeconds(cluster.postgres.process.pid),
    }),
    async databaseActivity() {
      // Statistics reach pg_stat_database when a backend goes idle (at most a second later): wait that out.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await database.query('SELECT pg_stat_clear_snapshot()');
      const { rows } = await database.query<{ commits: string; written: string; read: string }>(
        "SELECT sum(xact_commit) AS commits, sum(tup_inserted + tup_updated + tup_deleted) AS written, sum(tup_fetched) AS read FROM pg_stat_database WHERE datname IN ('temporal', 'temporal_visibility')",
      );
      return { commits: Number(rows[0]!.commits), rowsWritten: Number(rows[0]!.written), rowsRead: Number(rows[0]!.read) };
    },
    liveReceived: () => Promise.all(apis.map(async (api) => ((await (await fetch(`${api.base}/bench/process`)).json()) as { liveReceived: { notifications: number; characters: number } }).liveReceived)),
    async stop() {
      await database.end().catch(() => undefined);
      await connection.close();
      await Promise.all(apis.map((api) => api.process.stop('SIGTERM', 10_000)));
      await cluster.stop();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
