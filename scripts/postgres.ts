/**
 * Debian's PostgreSQL, run as a private instance for a Temporal cluster: its own data folder,
 * its own loopback port, no Unix socket, no system service. `npm run cluster` keeps the data
 * in .turnpike/cluster/pg (so parked turns survive a restart); the cluster test in a temp dir.
 */
import { spawn } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import net from 'node:net';
import path from 'node:path';
import { isExecutable } from './go-install.js';
import { ManagedProcess } from './managed-process.js';

export class PostgresUnavailableError extends Error {
  override name = 'PostgresUnavailableError';
}

/** `PG_BIN`, else the newest /usr/lib/postgresql/<major>/bin (Debian's layout). */
export function findPostgresBin(): string {
  const candidates: string[] = [];
  if (process.env.PG_BIN) candidates.push(process.env.PG_BIN);
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const majors = readdirSync(debian).filter((name) => /^\d+$/.test(name)).sort((a, b) => Number(b) - Number(a));
    candidates.push(...majors.map((major) => path.join(debian, major, 'bin')));
  }
  const found = candidates.find((dir) => isExecutable(path.join(dir, 'postgres')) && isExecutable(path.join(dir, 'initdb')));
  if (!found) {
    throw new PostgresUnavailableError(
      'turnpike needs PostgreSQL for the cluster and could not find it.\n' +
        '  On Debian or Ubuntu: apt-get install postgresql (the cluster runs its own instance; the system service is not used),\n' +
        '  or set PG_BIN to the directory holding initdb and postgres.',
    );
  }
  return found;
}

/**
 * PostgreSQL refuses to run as root. When we are root, run it as the `postgres` system user that
 * Debian's package creates (or TURNPIKE_POSTGRES_USER); otherwise as ourselves.
 */
function runAs(): { uid: number; gid: number; name: string } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const name = process.env.TURNPIKE_POSTGRES_USER ?? 'postgres';
  const entry = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .map((line) => line.split(':'))
    .find((fields) => fields[0] === name);
  if (!entry) {
    throw new PostgresUnavailableError(
      `PostgreSQL will not run as root, and there is no "${name}" user to run it as.\n` +
        '  Installing Debian\'s postgresql package creates one; or: useradd --system --no-create-home postgres',
    );
  }
  return { uid: Number(entry[2]), gid: Number(entry[3]), name };
}

export interface PostgresOptions {
  dataDirectory: string;
  port: number;
  /** The bootstrap superuser that Temporal connects as; created by initdb. */
  user?: string;
  password?: string;
  logFile: string;
  log?: (line: string) => void;
  detached?: boolean;
}

export interface Postgres {
  host: string;
  port: number;
  user: string;
  password: string;
  /** The running postmaster; a new one after restart(). */
  readonly process: ManagedProcess;
  /** Fast shutdown (SIGINT): disconnects clients, writes a checkpoint, exits. */
  stop(): Promise<void>;
  /**
   * Stops the database and starts it again on the same data folder and port, resolving once it
   * answers queries (pg_isready). `fast` is an operator's restart (SIGINT: open transactions are
   * rolled back, clients told and disconnected, a checkpoint written); `immediate` is a crash
   * (SIGQUIT: every backend exits at once, no checkpoint, and the start replays the WAL).
   * Resolves with how long the database was down: from the signal to ready again.
   */
  restart(mode: PostgresShutdown): Promise<{ downMs: number }>;
}

/** PostgreSQL's shutdown modes that end open sessions: `fast` (SIGINT) and `immediate` (SIGQUIT). */
export type PostgresShutdown = 'fast' | 'immediate';


function run(command: string, args: string[], options: { uid?: number; gid?: number; timeoutMs: number }): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH, LANG: 'C', LC_ALL: 'C' },
      ...(options.uid !== undefined ? { uid: options.uid, gid: options.gid } : {}),
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.on('error', (error) => (output += String(error)));
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, output });
    });
  });
}

function acceptsConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.setTimeout(1_000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Starts PostgreSQL on 127.0.0.1:`port` with its data in `dataDirectory`, running initdb first
 * when the folder is new. Resolves once it accepts connections.
 */
export async function startPostgres(options: PostgresOptions): Promise<Postgres> {
  const log = options.log ?? (() => {});
  const bin = findPostgresBin();
  const user = options.user ?? 'temporal';
  const password = options.password ?? 'temporal';
  const owner = runAs();
  const dataDirectory = path.resolve(options.dataDirectory);

  if (!existsSync(path.join(dataDirectory, 'PG_VERSION'))) {
    mkdirSync(dataDirectory, { recursive: true });
    // initdb insists on a data folder only its owner can read.
    chmodSync(dataDirectory, 0o700);
    if (owner) chownSync(dataDirectory, owner.uid, owner.gid);
    log(`PostgreSQL: creating a new database cluster in ${dataDirectory}${owner ? ` (owned by ${owner.name})` : ''}`);
    const passwordFile = path.join(tmpdir(), `turnpike-pg-${process.pid}-${Date.now()}`);
    writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
    if (owner) chownSync(passwordFile, owner.uid, owner.gid);
    const init = await run(
      path.join(bin, 'initdb'),
      [
        '--pgdata', dataDirectory,
        '--username', user,
        // From a file readable only by the database's owner, and removed right after: never
        // in a process listing.
        '--pwfile', passwordFile,
        // Passwords even on loopback: other local users must not reach Temporal's data.
        '--auth', 'scram-sha-256',
        // C collation: text ordering cannot change under the data with an OS (glibc) upgrade.
        '--encoding', 'UTF8', '--locale', 'C',
      ],
      { uid: owner?.uid, gid: owner?.gid, timeoutMs: 120_000 },
    ).finally(() => rmSync(passwordFile, { force: true }));
    if (init.code !== 0) {
      throw new PostgresUnavailableError(
        `initdb failed for ${dataDirectory} (exit ${init.code}):\n${init.output.trim()}\n` +
          (owner ? `  The folder and every folder above it must be reachable by the "${owner.name}" user.` : ''),
      );
    }
  }

  if (await acceptsConnections(options.port)) {
    throw new PostgresUnavailableError(`Something already listens on 127.0.0.1:${options.port}; PostgreSQL for the cluster needs that port.`);
  }
  const launchOptions = { bin, dataDirectory, user, owner, port: options.port, logFile: options.logFile, detached: options.detached };
  let postgres = await launch(launchOptions);
  return {
    host: '127.0.0.1',
    port: options.port,
    user,
    password,
    get process() {
      return postgres;
    },
    // SIGINT is PostgreSQL's "fast" shutdown; SIGTERM ("smart") would wait for every client
    // to disconnect. After 30s, SIGKILL: crash recovery on the next start still keeps the data.
    stop: () => postgres.stop('SIGINT', 30_000),
    async restart(mode) {
      const began = Date.now();
      await postgres.stop(mode === 'fast' ? 'SIGINT' : 'SIGQUIT', 30_000);
      log(`PostgreSQL: ${mode} shutdown done in ${((Date.now() - began) / 1000).toFixed(1)}s, starting again`);
      postgres = await launch(launchOptions);
      return { downMs: Date.now() - began };
    },
  };
}

interface LaunchOptions {
  bin: string;
  dataDirectory: string;
  user: string;
  owner: { uid: number; gid: number } | undefined;
  port: number;
  logFile: string;
  detached?: boolean;
}

/** Starts the postmaster on an initialized data folder; resolves once it answers queries. */
async function launch(options: LaunchOptions): Promise<ManagedProcess> {
  const { bin, dataDirectory, user, owner } = options;
  const postgres = new ManagedProcess({
    name: 'postgres',
    command: path.join(bin, 'postgres'),
    args: [
      '-D', dataDirectory,
      '-p', String(options.port),
      '-c', 'listen_addresses=127.0.0.1',
      // No Unix socket: nothing else on the machine finds this instance by accident, and no
      // socket directory has to be writable by the postgres user.
      '-c', 'unix_socket_directories=',
    ],
    env: { PATH: process.env.PATH, LANG: 'C', LC_ALL: 'C' },
    logFile: options.logFile,
    uid: owner?.uid,
    gid: owner?.gid,
    detached: options.detached,
  });
  const deadline = Date.now() + 60_000;
  while (!(await acceptsConnections(options.port))) {
    if (!postgres.running) {
      const output = postgres.output();
      const stale = /lock file "postmaster.pid" already exists/.test(output)
        ? `\n  A PostgreSQL from an earlier run still uses ${dataDirectory}: stop it (its pid is the first line of ${path.join(dataDirectory, 'postmaster.pid')}).`
        : '';
      throw new PostgresUnavailableError(`PostgreSQL exited while starting (see ${options.logFile}):\n${output.trim().split('\n').slice(-10).join('\n')}${stale}`);
    }
    if (Date.now() > deadline) {
      await postgres.kill();
      throw new PostgresUnavailableError(`PostgreSQL did not accept connections on 127.0.0.1:${options.port} within 60s (see ${options.logFile}).`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  // Accepting TCP connections is not yet accepting queries (crash recovery after a kill runs
  // first): wait for pg_isready, which asks the server itself.
  const ready = path.join(bin, 'pg_isready');
  while (isExecutable(ready)) {
    const check = await run(ready, ['-h', '127.0.0.1', '-p', String(options.port), '-U', user, '-d', 'postgres', '-t', '2'], { timeoutMs: 10_000 });
    if (check.code === 0) break;
    if (!postgres.running || Date.now() > deadline) {
      await postgres.kill();
      throw new PostgresUnavailableError(`PostgreSQL did not become ready (pg_isready: ${check.output.trim()}); see ${options.logFile}.`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return postgres;
}
