/**
 * The S3-compatible server the S3 content store is tested against
 * (test/integration/content-stores.test.ts): moto's S3, a Python emulation of AWS's S3 API, run by
 * scripts/s3-server/server.py with SigV4 signatures checked against one access key of its own.
 *
 * moto and its dependencies are installed from PyPI, every version pinned in
 * scripts/s3-server/requirements.txt, into a virtual environment cached under
 * ~/.cache/turnpike/s3-server/ and named after that file and the Python that runs it: wheels
 * only, nothing built, under a minute the first time; no network at all once cached.
 *
 * Run directly (`npm run s3-server`) it installs what is missing and prints the environment's
 * Python.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { findOnPath, isExecutable, turnpikeCacheRoot } from './go-install.js';
import { ManagedProcess } from './managed-process.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REQUIREMENTS = path.join(HERE, 's3-server', 'requirements.txt');
const SERVER_SCRIPT = path.join(HERE, 's3-server', 'server.py');
/** Some of the pinned wheels (e.g. Flask 3.1) require it. */
const MINIMUM_PYTHON: [number, number] = [3, 11];

/** A clear, user-facing failure: printed as one message, never as a stack trace. */
export class S3ServerUnavailableError extends Error {
  override name = 'S3ServerUnavailableError';
}

interface Run {
  code: number;
  output: string;
}

/** Runs a command to its end (or `limitMs`), with its output kept for error messages. */
function run(command: string, args: string[], limitMs: number): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: '1', PIP_NO_INPUT: '1' } });
    let output = '';
    const limit = setTimeout(() => child.kill('SIGKILL'), limitMs);
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', (error) => (output += String(error)));
    child.on('close', (code) => {
      clearTimeout(limit);
      resolve({ code: code ?? -1, output });
    });
  });
}

const tail = (output: string, lines = 15) => output.trim().split('\n').slice(-lines).join('\n  ');

/** `PYTHON`, else `python3` on PATH, with its version; throws when it is missing or too old. */
async function findPython(): Promise<{ python: string; version: string }> {
  const python = process.env.PYTHON ?? findOnPath('python3');
  const wanted = MINIMUM_PYTHON.join('.');
  if (!python || !isExecutable(python)) {
    throw new S3ServerUnavailableError(
      `turnpike's S3 content store tests need Python ${wanted} or newer (with its venv module) and found none${process.env.PYTHON ? ` (PYTHON=${process.env.PYTHON} is not an executable)` : ''}: install python3 and python3-venv, or set PYTHON=/path/to/python3.`,
    );
  }
  const probe = await run(python, ['-c', 'import sys, venv; print("%d.%d.%d" % sys.version_info[:3])'], 60_000);
  const version = probe.output.trim().split('\n').at(-1) ?? '';
  const [major = 0, minor = 0] = version.split('.').map(Number);
  if (probe.code !== 0 || major < MINIMUM_PYTHON[0] || (major === MINIMUM_PYTHON[0] && minor < MINIMUM_PYTHON[1])) {
    throw new S3ServerUnavailableError(
      `turnpike's S3 content store tests need Python ${wanted} or newer with its venv module; ${python} ${probe.code === 0 ? `is ${version}` : `failed:\n  ${tail(probe.output)}`}. Install python3 and python3-venv, or set PYTHON=/path/to/python3.`,
    );
  }
  return { python, version };
}

/** The cached environment of this requirements file and this Python. */
function environmentDirectory(python: string, version: string): string {
  const hash = createHash('sha256').update(readFileSync(REQUIREMENTS)).update(`\0${python}\0${version}`).digest('hex').slice(0, 16);
  return path.join(turnpikeCacheRoot(), 's3-server', hash);
}

/**
 * The cached environment's Python, with moto installed on first use (from PyPI; under a minute).
 * @throws S3ServerUnavailableError saying what to install.
 */
export async function ensureS3Server(options: { log?: (line: string) => void } = {}): Promise<string> {
  const log = options.log ?? ((line: string) => console.error(line));
  const { python, version } = await findPython();
  const target = environmentDirectory(python, version);
  const targetPython = path.join(target, 'bin', 'python');
  // Written last: a folder without it is an interrupted install, never used.
  const marker = path.join(target, 'installed');
  if (existsSync(marker) && isExecutable(targetPython)) return targetPython;

  // Installed beside its final name and renamed: an interrupted install never leaves a broken one.
  const staging = `${target}.partial-${process.pid}`;
  const stagingPython = path.join(staging, 'bin', 'python');
  mkdirSync(path.dirname(target), { recursive: true });
  // A folder without the marker was never finished (or was tampered with): install afresh.
  if (existsSync(target) && !existsSync(marker)) rmSync(target, { recursive: true, force: true });
  rmSync(staging, { recursive: true, force: true });
  try {
    const started = Date.now();
    log(`turnpike: installing the S3 test server (moto, from PyPI; first run only)...`);
    const venv = await run(python, ['-m', 'venv', staging], 5 * 60_000);
    if (venv.code !== 0) throw new S3ServerUnavailableError(`turnpike could not make a Python virtual environment with ${python} ${version} (install python3-venv):\n  ${tail(venv.output)}`);
    const install = await run(stagingPython, ['-m', 'pip', 'install', '--no-deps', '--only-binary=:all:', '--quiet', '-r', REQUIREMENTS], 20 * 60_000);
    if (install.code !== 0) {
      throw new S3ServerUnavailableError(`turnpike could not install the S3 test server's packages (${REQUIREMENTS}) from PyPI with ${python} ${version}:\n  ${tail(install.output)}`);
    }
    const check = await run(stagingPython, ['-c', 'import boto3, flask_cors, moto.server, requests'], 5 * 60_000);
    if (check.code !== 0) throw new S3ServerUnavailableError(`turnpike installed the S3 test server's packages but cannot import them:\n  ${tail(check.output)}`);
    writeFileSync(path.join(staging, 'installed'), `${new Date().toISOString()}\n`);
    try {
      renameSync(staging, target);
    } catch (error) {
      // Another process installed the same environment meanwhile: use that one.
      if (!existsSync(marker)) throw error;
    }
    log(`turnpike: installed the S3 test server in ${Math.round((Date.now() - started) / 1000)}s -> ${target}`);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return targetPython;
}

export interface S3ServerOptions {
  /** Its port on 127.0.0.1. */
  port: number;
  /** Its output (request log and errors). */
  logFile: string;
  log?: (line: string) => void;
}

export interface S3Server {
  /** `http://127.0.0.1:<port>` */
  endpoint: string;
  region: string;
  /** The one access key it takes; a request signed with anything else gets 403. */
  credentials: { accessKeyId: string; secretAccessKey: string };
  process: ManagedProcess;
  stop(): Promise<void>;
}

/** Starts the S3 server on 127.0.0.1:`port`; resolves once it takes only requests signed with its key. */
export async function startS3Server(options: S3ServerOptions): Promise<S3Server> {
  const python = await ensureS3Server({ log: options.log });
  const server = new ManagedProcess({ name: 's3-server', command: python, args: [SERVER_SCRIPT, String(options.port)], logFile: options.logFile });
  let credentials: S3Server['credentials'];
  try {
    const line = await server.waitForLine(/^\{"accessKeyId"/, 120_000);
    credentials = JSON.parse(line.slice(line.indexOf('{"accessKeyId"')).split('\n')[0]!) as S3Server['credentials'];
  } catch (error) {
    await server.kill();
    throw error;
  }
  const endpoint = `http://127.0.0.1:${options.port}`;
  options.log?.(`S3 server (moto): ${endpoint} (log in ${options.logFile})`);
  return { endpoint, region: 'us-east-1', credentials, process: server, stop: () => server.stop('SIGTERM', 20_000) };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  ensureS3Server()
    .then((python) => console.log(python))
    .catch((error: unknown) => {
      console.error(error instanceof S3ServerUnavailableError ? error.message : error);
      process.exit(1);
    });
}
