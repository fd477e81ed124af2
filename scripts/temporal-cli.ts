/**
 * Finds the Temporal CLI, or builds it from the Go module proxy.
 *
 * turnpike's tests, `npm start` and the benchmarks run the real Temporal dev server
 * (`temporal server start-dev`). The SDK's own test environment downloads that server at
 * run time from a host that restricted build machines cannot reach, so turnpike builds the
 * official CLI from source with `go install` instead and caches the binary.
 *
 * Order: `TEMPORAL_CLI` (a path), then `temporal` on PATH, then the cache, then a build.
 * Run directly (`npm run temporal-cli`) it prints the path it settled on.
 */
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, mkdirSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The one place the CLI version is pinned. v1.5.1 is the newest tag whose go.mod has no
 * `replace` directive, which `go install pkg@version` refuses.
 */
export const TEMPORAL_CLI_VERSION = 'v1.5.1';
const TEMPORAL_CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal';

/** A clear, user-facing failure: printed as one message, never as a stack trace. */
export class TemporalCliUnavailableError extends Error {
  override name = 'TemporalCliUnavailableError';
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function findOnPath(command: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && isExecutable(path.join(dir, command))) return path.join(dir, command);
  }
  return undefined;
}

/** Where built CLIs are kept: outside the clone, so a fresh clone on the same machine reuses it. */
export function cacheDirectory(): string {
  const base = process.env.TURNPIKE_CACHE_DIR ?? path.join(process.env.XDG_CACHE_HOME ?? path.join(homedir(), '.cache'), 'turnpike');
  return path.join(base, 'temporal-cli', TEMPORAL_CLI_VERSION);
}

/** Where Go's official installer puts it, for shells whose PATH lacks it. */
const WELL_KNOWN_GO = ['/usr/local/go/bin/go'];

export interface EnsureTemporalCliOptions {
  log?: (line: string) => void;
  /** Paths tried for `go` after `GO` and PATH. */
  goCandidates?: string[];
}

async function buildCli(log: (line: string) => void, goCandidates: string[]): Promise<string> {
  const go = process.env.GO || findOnPath('go') || goCandidates.find(isExecutable);
  if (!go) {
    throw new TemporalCliUnavailableError(
      'turnpike needs the Temporal CLI and could not find one.\n' +
        '  Either install Go 1.23 or newer (https://go.dev/dl/) so turnpike can build the CLI,\n' +
        '  or put `temporal` on your PATH, or set TEMPORAL_CLI=/path/to/temporal.',
    );
  }
  const target = cacheDirectory();
  const staging = `${target}.partial-${process.pid}`;
  mkdirSync(staging, { recursive: true });
  log(`turnpike: building the Temporal CLI ${TEMPORAL_CLI_VERSION} with ${go} (first run only; takes a few minutes)...`);
  const started = Date.now();
  const output: string[] = [];
  const code = await new Promise<number>((resolve) => {
    const child = spawn(go, ['install', `${TEMPORAL_CLI_MODULE}@${TEMPORAL_CLI_VERSION}`], {
      env: { ...process.env, GOBIN: staging, GOFLAGS: '-mod=mod', GOTOOLCHAIN: process.env.GOTOOLCHAIN ?? 'local' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const tick = setInterval(() => log(`turnpike: still building the Temporal CLI (${Math.round((Date.now() - started) / 1000)}s)...`), 30_000);
    const collect = (chunk: Buffer) => output.push(chunk.toString());
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.on('error', (error) => {
      output.push(String(error));
      clearInterval(tick);
      resolve(-1);
    });
    child.on('close', (exitCode) => {
      clearInterval(tick);
      resolve(exitCode ?? -1);
    });
  });
  const built = path.join(staging, 'temporal');
  if (code !== 0 || !isExecutable(built)) {
    rmSync(staging, { recursive: true, force: true });
    const tail = output.join('').trim().split('\n').slice(-15).join('\n  ');
    throw new TemporalCliUnavailableError(
      `turnpike could not build the Temporal CLI ${TEMPORAL_CLI_VERSION} (go install exited with ${code}):\n  ${tail}\n` +
        '  Check that Go 1.23 or newer is installed and the Go module proxy is reachable,\n' +
        '  or put `temporal` on your PATH, or set TEMPORAL_CLI=/path/to/temporal.',
    );
  }
  mkdirSync(target, { recursive: true });
  // Rename, so a build interrupted half-way never leaves a broken binary in the cache.
  renameSync(built, path.join(target, 'temporal'));
  rmSync(staging, { recursive: true, force: true });
  log(`turnpike: built the Temporal CLI in ${Math.round((Date.now() - started) / 1000)}s -> ${path.join(target, 'temporal')}`);
  return path.join(target, 'temporal');
}

/**
 * Returns the path of a working Temporal CLI, building it on first use.
 * @throws TemporalCliUnavailableError with a message that says what to install.
 */
export async function ensureTemporalCli(options: EnsureTemporalCliOptions = {}): Promise<string> {
  const log = options.log ?? ((line: string) => console.error(line));
  const explicit = process.env.TEMPORAL_CLI;
  if (explicit) {
    if (!isExecutable(explicit)) throw new TemporalCliUnavailableError(`TEMPORAL_CLI=${explicit} is not an executable file.`);
    return explicit;
  }
  const onPath = findOnPath('temporal');
  if (onPath) return onPath;
  const cached = path.join(cacheDirectory(), 'temporal');
  if (isExecutable(cached)) return cached;
  return buildCli(log, options.goCandidates ?? WELL_KNOWN_GO);
}

/** `temporal --version`, for logs and reports. */
export function temporalCliVersion(cli: string): string {
  return spawnSync(cli, ['--version'], { encoding: 'utf8' }).stdout.trim();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const quiet = process.argv.includes('--quiet');
  ensureTemporalCli()
    .then((cli) => {
      if (!quiet) console.log(`${cli}\n${temporalCliVersion(cli)}`);
    })
    .catch((error: unknown) => {
      console.error(error instanceof TemporalCliUnavailableError ? error.message : error);
      process.exit(1);
    });
}
