/**
 * The S3-compatible server the S3 content store is tested against
 * (test/integration/content-stores.test.ts): moto's S3, a Python emulation of AWS's S3 API, run by
 * scripts/s3-server/server.py with SigV4 signatures checked against one access key of its own.
 *
 * moto and its dependencies are installed from PyPI, every version pinned in
 * scripts/s3-server/requirements.txt, into a virtual environment cached under
 * ~/.cache/turnpike/s3-server/ (scripts/python-env.ts): wheels only, nothing built, under a
 * minute the first time; no network at all once cached.
 *
 * Run directly (`npm run s3-server`) it installs what is missing and prints the environment's
 * Python.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ManagedProcess } from './managed-process.js';
import { ensurePythonEnvironment, PythonEnvironmentError } from './python-env.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SERVER_SCRIPT = path.join(HERE, 's3-server', 'server.py');

/**
 * The cached environment's Python, with moto installed on first use (from PyPI; under a minute).
 * @throws PythonEnvironmentError saying what to install.
 */
export function ensureS3Server(options: { log?: (line: string) => void } = {}): Promise<string> {
  return ensurePythonEnvironment(
    { name: 's3-server', what: "the S3 content store tests' server (moto)", requirements: path.join(HERE, 's3-server', 'requirements.txt'), imports: ['boto3', 'flask_cors', 'moto.server', 'requests'] },
    options.log,
  );
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
      console.error(error instanceof PythonEnvironmentError ? error.message : error);
      process.exit(1);
    });
}
