/**
 * `npm run cluster [-- --workers 3] [-- --no-ui]`: the production topology on this machine,
 * without Docker — PostgreSQL, the Temporal server on it with SQL advanced visibility, the
 * Web UI, and N turnpike worker processes (demo/worker.ts, the same entry docker-compose.yml's
 * worker runs). Data stays in .turnpike/cluster/pg, so parked turns survive Ctrl-C and the next
 * run finds them. Everything is built from the Go module proxy on first use and cached.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@temporalio/client';
import { AGENT_TURN_WORKFLOW, DEFAULT_TASK_QUEUE, connectTemporal } from '../client/index.js';
import { GoBuildError } from './go-install.js';
import { PostgresUnavailableError } from './postgres.js';
import { TemporalCliUnavailableError } from './temporal-cli.js';
import { DEFAULT_CLUSTER_PORTS, portsInUse, ROOT, startCluster, type Cluster } from './temporal-cluster.js';
import { TEMPORAL_SERVER_VERSION, TEMPORAL_UI_VERSION } from './temporal-server.js';

const USAGE = `usage: npm run cluster [-- --workers N] [-- --no-ui] [-- --data DIR]
  --workers N   turnpike worker processes (default 2)
  --no-ui       do not build or start the Web UI
  --data DIR    where PostgreSQL keeps its data and the logs go (default .turnpike/cluster)`;

function parseOptions(): { workers: number; ui: boolean; directory: string } {
  try {
    const { values } = parseArgs({
      options: { workers: { type: 'string', default: '2' }, 'no-ui': { type: 'boolean', default: false }, data: { type: 'string' }, help: { type: 'boolean' } },
      strict: true,
    });
    if (values.help) {
      console.log(USAGE);
      process.exit(0);
    }
    const workers = Number(values.workers);
    if (!Number.isInteger(workers) || workers < 1 || workers > 16) throw new Error(`--workers must be a whole number from 1 to 16, not ${values.workers}`);
    return { workers, ui: !values['no-ui'], directory: path.resolve(values.data ?? path.join(ROOT, '.turnpike', 'cluster')) };
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
    process.exit(2);
  }
}

async function parkedTurns(address: string, namespace: string): Promise<number> {
  const connection = await connectTemporal({ address });
  try {
    const client = new Client({ connection, namespace });
    const { count } = await client.workflow.count(`WorkflowType="${AGENT_TURN_WORKFLOW}" AND AgentTurnStatus="awaiting-input"`);
    return count;
  } finally {
    await connection.close();
  }
}

async function main(): Promise<void> {
  const options = parseOptions();
  const started = Date.now();
  const busy = await portsInUse(DEFAULT_CLUSTER_PORTS);
  if (busy.length > 0) {
    console.error(
      `These ports are in use on 127.0.0.1: ${busy.map(([name, port]) => `${port} (${name})`).join(', ')}.\n` +
        'Is another `npm run cluster`, `npm start` or `docker compose up` running? Stop it first.',
    );
    process.exit(1);
  }
  // Paths inside the clone are shown relative to it, others in full.
  const relative = (file: string) => {
    const inside = path.relative(process.cwd(), file);
    return inside.startsWith('..') || path.isAbsolute(inside) ? file : inside || '.';
  };
  console.log(`turnpike cluster: Temporal server ${TEMPORAL_SERVER_VERSION} on PostgreSQL, ${options.workers} worker(s)${options.ui ? `, Web UI ${TEMPORAL_UI_VERSION}` : ''}; data in ${relative(options.directory)}`);

  // Set once everything runs. A Ctrl-C while starting (a first run builds for minutes) exits at
  // once instead, and the parts started so far are killed on the way out (ManagedProcess).
  const running: { cluster?: Cluster } = {};
  let stopping: Promise<void> | undefined;
  let stoppingSince = 0;
  const stop = (reason: string, exitCode: number) => {
    if (stopping) {
      // npm and tsx relay the terminal's SIGINT as well: one Ctrl-C can arrive twice.
      if (Date.now() - stoppingSince > 1_000) console.log('  (still stopping; each part gets a deadline, then it is killed)');
      return;
    }
    stoppingSince = Date.now();
    console.log(`\n${reason} Stopping workers, Web UI, Temporal server, PostgreSQL...`);
    stopping = (running.cluster?.stop() ?? Promise.resolve()).then(
      () => {
        console.log(`turnpike cluster stopped. Data kept in ${relative(options.directory)}.`);
        process.exit(exitCode);
      },
      (error: unknown) => {
        console.error('Stopping failed:', error);
        process.exit(1);
      },
    );
  };
  // Ctrl-C reaches only this process (the parts run in their own process groups), so the parts
  // stop in order: workers, then the server, then the database it writes to.
  process.on('SIGINT', () => stop('Ctrl-C.', 0));
  process.on('SIGTERM', () => stop('SIGTERM.', 0));

  const cluster = await startCluster({
    directory: options.directory,
    ports: DEFAULT_CLUSTER_PORTS,
    workers: options.workers,
    worker: { entry: path.join(ROOT, 'demo', 'worker.ts'), env: {}, readyPattern: /turnpike worker polling task queue/ },
    ui: options.ui,
    detached: true,
    log: (line) => console.log(line),
  });
  running.cluster = cluster;
  if (stopping) return;

  // Any part that dies on its own takes the cluster down with a pointer to its log, rather
  // than leaving a half-working cluster that looks healthy.
  const parts = [cluster.postgres.process, cluster.server.process, ...(cluster.ui ? [cluster.ui.process] : []), ...cluster.workers];
  for (const part of parts) {
    void part.exited.then(({ code, signal }) => {
      if (!stopping) {
        console.error(`\n${part.name} exited unexpectedly (${signal ?? `exit ${code}`}); its log: ${relative(part.logFile)}\n${part.output().trim().split('\n').slice(-8).join('\n')}`);
        stop('A part of the cluster failed.', 1);
      }
    });
  }

  const parked = await parkedTurns(cluster.address, cluster.namespace).catch(() => undefined);
  const cli = relative(cluster.cli);
  console.log(`
turnpike cluster is up (${((Date.now() - started) / 1000).toFixed(1)}s).
  Temporal:   ${cluster.address} (namespace ${cluster.namespace}), server ${TEMPORAL_SERVER_VERSION}, SQL visibility
  PostgreSQL: 127.0.0.1:${cluster.ports.postgres}, data in ${relative(path.join(options.directory, 'pg'))} (kept across runs)${cluster.ui ? `\n  Web UI:     ${cluster.ui.url}` : ''}
  Workers:    ${cluster.workers.length} processes (pids ${cluster.workers.map((worker) => worker.pid).join(', ')}) on task queue "${DEFAULT_TASK_QUEUE}", demo tools
  Logs:       ${relative(cluster.logDirectory)}/${parked ? `\n  Parked:     ${parked} turn(s) from earlier runs are waiting for a decision` : ''}

Try it (the frontend is on the port clients use by default):
  npx turnpike start --wait 'look up order 1001 then refund $250 on order 1001'    # parks on the refund
  npx turnpike pending
  ${cli} workflow list --query 'AgentTurnStatus="awaiting-input"'
  TEMPORAL_ADDRESS=${cluster.address} npm start                                   # the demo and dashboard on this cluster

Ctrl-C stops everything; the next npm run cluster starts on the same data.`);
}

main().catch((error: unknown) => {
  const known = error instanceof GoBuildError || error instanceof PostgresUnavailableError || error instanceof TemporalCliUnavailableError;
  console.error(known ? error.message : error);
  process.exit(1);
});
