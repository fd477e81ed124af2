/**
 * SeaweedFS, an S3-compatible object store, for the S3 content store's tests
 * (test/integration/content-stores.test.ts): built from the Go module proxy (scripts/go-install.ts)
 * and cached per version under ~/.cache/turnpike/, like the Temporal server.
 *
 * `startSeaweedS3` runs `weed server` with a master, a volume server, a filer and the S3 gateway,
 * all on 127.0.0.1 and on free ports, with its data in a folder of the caller's and one access key.
 *
 * Run directly (`npm run seaweedfs`) it builds what is missing and prints the binary's path.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { GoBuildError, goBuildInModule, isExecutable, turnpikeCacheRoot } from './go-install.js';
import { ManagedProcess } from './managed-process.js';

/**
 * The one place the version is pinned. The module proxy serves SeaweedFS only as pseudo-versions
 * of its main branch (its release tags are not Go-module versions); this is the 2026-11-09 commit,
 * which reports itself as `weed version` 4.53.
 * Its go.mod asks for Go 1.26.6 and has a `replace`, so it is built with `go build` inside the
 * downloaded module rather than with `go install ...@version`.
 */
export const SEAWEEDFS_VERSION = 'v0.0.0-20261109003541-7506e5f91cd6';
const SEAWEEDFS_MODULE = 'github.com/seaweedfs/seaweedfs';

export function seaweedFsCacheDirectory(): string {
  return path.join(turnpikeCacheRoot(), 'seaweedfs', SEAWEEDFS_VERSION);
}

/**
 * The cached `weed` binary, built on first use (minutes).
 * @throws GoBuildError with a message that says what to install.
 */
export async function ensureSeaweedFs(options: { log?: (line: string) => void } = {}): Promise<string> {
  const log = options.log ?? ((line: string) => console.error(line));
  const target = seaweedFsCacheDirectory();
  const binary = path.join(target, 'weed');
  if (isExecutable(binary)) return binary;
  mkdirSync(target, { recursive: true });
  // Built beside its final name and renamed: an interrupted build never leaves a broken binary.
  const staging = `${binary}.partial-${process.pid}`;
  try {
    log(`turnpike: building SeaweedFS ${SEAWEEDFS_VERSION} with Go (first run only; takes several minutes)...`);
    await goBuildInModule({
      what: `SeaweedFS ${SEAWEEDFS_VERSION}`,
      moduleAtVersion: `${SEAWEEDFS_MODULE}@${SEAWEEDFS_VERSION}`,
      package: './weed',
      output: staging,
      minimumGo: '1.26.6',
      log,
    });
    renameSync(staging, binary);
  } finally {
    rmSync(staging, { force: true });
  }
  log(`turnpike: SeaweedFS ${SEAWEEDFS_VERSION} -> ${binary}`);
  return binary;
}

export interface SeaweedS3Options {
  /** The S3 gateway's port on 127.0.0.1; the other services take free ports. */
  port: number;
  /** Holds the volumes, the filer's metadata, the S3 config and the log. */
  dataDirectory: string;
  log?: (line: string) => void;
}

export interface SeaweedS3 {
  /** `http://127.0.0.1:<port>` */
  endpoint: string;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  process: ManagedProcess;
  stop(): Promise<void>;
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * `count` distinct free ports in 20000–32767: below Linux's ephemeral range (32768+), so no
 * outgoing connection takes one between the check and SeaweedFS's listen.
 */
async function freePorts(count: number, taken: number[]): Promise<number[]> {
  const ports: number[] = [];
  for (let attempt = 0; ports.length < count && attempt < 500; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_768);
    if (!taken.includes(port) && !ports.includes(port) && (await portIsFree(port))) ports.push(port);
  }
  if (ports.length < count) throw new Error(`SeaweedFS: found only ${ports.length} of ${count} free ports between 20000 and 32767.`);
  return ports;
}

/** Resolves once an S3 request that needs the filer and a volume (writing an object) succeeds. */
async function waitUntilWritable(endpoint: string, credentials: SeaweedS3['credentials'], weed: ManagedProcess, timeoutMs: number): Promise<void> {
  const { S3Client, CreateBucketCommand, PutObjectCommand, DeleteObjectCommand, DeleteBucketCommand } = await import('@aws-sdk/client-s3');
  const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials });
  const bucket = `turnpike-ready-${randomBytes(4).toString('hex')}`;
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  try {
    while (Date.now() < deadline) {
      if (!weed.running) throw new Error(`SeaweedFS exited while starting (see ${weed.logFile}):\n${weed.output().trim().split('\n').slice(-15).join('\n')}`);
      try {
        await client.send(new CreateBucketCommand({ Bucket: bucket })).catch((error: { name?: string }) => {
          if (error.name !== 'BucketAlreadyOwnedByYou' && error.name !== 'BucketAlreadyExists') throw error;
        });
        await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'ready', Body: 'ready' }));
        await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'ready' }));
        await client.send(new DeleteBucketCommand({ Bucket: bucket }));
        return;
      } catch (error) {
        last = error;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
    throw new Error(`SeaweedFS's S3 gateway at ${endpoint} did not take a write within ${timeoutMs / 1000}s (last error: ${String(last)}; see ${weed.logFile})`);
  } finally {
    client.destroy();
  }
}

/** Starts SeaweedFS with its S3 gateway on 127.0.0.1:`port`; resolves once it stores objects. */
export async function startSeaweedS3(options: SeaweedS3Options): Promise<SeaweedS3> {
  const weed = await ensureSeaweedFs({ log: options.log });
  const dataDirectory = path.resolve(options.dataDirectory);
  mkdirSync(dataDirectory, { recursive: true });
  const credentials = { accessKeyId: 'turnpike', secretAccessKey: randomBytes(16).toString('hex') };
  const configFile = path.join(dataDirectory, 's3.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      identities: [
        { name: 'turnpike', credentials: [{ accessKey: credentials.accessKeyId, secretKey: credentials.secretAccessKey }], actions: ['Admin', 'Read', 'Write', 'List', 'Tagging'] },
      ],
    }),
    { mode: 0o600 },
  );
  const [master, masterGrpc, volume, volumeGrpc, filer, filerGrpc, s3Grpc] = await freePorts(7, [options.port]);
  const args = [
    'server',
    '-ip=127.0.0.1',
    '-ip.bind=127.0.0.1',
    `-dir=${dataDirectory}`,
    `-master.port=${master}`,
    `-master.port.grpc=${masterGrpc}`,
    // No usage reports: this server is a test fixture, and it has no network to send them on.
    '-master.telemetry=false',
    // Small volumes, grown on demand: a few test buckets need little disk.
    '-master.volumeSizeLimitMB=64',
    '-volume.max=0',
    `-volume.port=${volume}`,
    `-volume.port.grpc=${volumeGrpc}`,
    '-filer',
    `-filer.port=${filer}`,
    `-filer.port.grpc=${filerGrpc}`,
    `-filer.localSocket=${path.join(dataDirectory, 'filer.sock')}`,
    '-s3',
    `-s3.port=${options.port}`,
    `-s3.port.grpc=${s3Grpc}`,
    '-s3.port.iceberg=0',
    '-s3.port.lance=0',
    `-s3.config=${configFile}`,
  ];
  const server = new ManagedProcess({ name: 'seaweedfs', command: weed, args, cwd: dataDirectory, logFile: path.join(dataDirectory, 'seaweedfs.log') });
  const endpoint = `http://127.0.0.1:${options.port}`;
  try {
    await waitUntilWritable(endpoint, credentials, server, 120_000);
  } catch (error) {
    await server.kill();
    throw error;
  }
  options.log?.(`SeaweedFS: S3 at ${endpoint} (data in ${dataDirectory})`);
  return { endpoint, region: 'us-east-1', credentials, process: server, stop: () => server.stop('SIGTERM', 20_000) };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  ensureSeaweedFs()
    .then((binary) => console.log(binary))
    .catch((error: unknown) => {
      console.error(error instanceof GoBuildError ? error.message : error);
      process.exit(1);
    });
}
