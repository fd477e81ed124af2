/**
 * Builds Go programs from the Go module proxy into turnpike's cache, for the parts of a
 * Temporal cluster that `npm run cluster` and the cluster test run without Docker: the
 * Temporal CLI (scripts/temporal-cli.ts), and the Temporal server, its SQL schema tool and the
 * Web UI server (scripts/temporal-server.ts).
 *
 * Only `go install module/cmd@version` and `go mod download` are used: both fetch from the
 * module proxy (GOPROXY), never from a release page, and `go install` at a version refuses a
 * module with a `replace` directive, so what is built is exactly the published module.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';

/** A clear, user-facing failure: printed as one message, never as a stack trace. */
export class GoBuildError extends Error {
  override name = 'GoBuildError';
}

export function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Where Go's official installer puts it, for shells whose PATH lacks it. */
const WELL_KNOWN_GO = ['/usr/local/go/bin/go'];

/** The first executable called `command` on PATH. */
export function findOnPath(command: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && isExecutable(path.join(dir, command))) return path.join(dir, command);
  }
  return undefined;
}

/**
 * `GO`, then `go` on PATH, then Go's default install location (or `candidates`); undefined
 * when there is none.
 */
export function findGo(candidates: string[] = WELL_KNOWN_GO): string | undefined {
  if (process.env.GO) return isExecutable(process.env.GO) ? process.env.GO : undefined;
  return findOnPath('go') ?? candidates.find(isExecutable);
}

/** turnpike's cache root, shared with scripts/temporal-cli.ts: outside the clone, so clones share it. */
export function turnpikeCacheRoot(): string {
  return process.env.TURNPIKE_CACHE_DIR ?? path.join(process.env.XDG_CACHE_HOME ?? path.join(homedir(), '.cache'), 'turnpike');
}

function goEnvironment(extra: Record<string, string>): NodeJS.ProcessEnv {
  // -mod=mod: the build never depends on a go.mod/vendor dir that happens to surround the cwd.
  // GOTOOLCHAIN=local: use the Go that is installed; never download another toolchain.
  return { ...process.env, GOFLAGS: '-mod=mod', GOTOOLCHAIN: process.env.GOTOOLCHAIN ?? 'local', ...extra };
}

interface GoRun {
  code: number;
  stdout: string;
  output: string;
}

// cwd by default outside any module, so no surrounding go.mod changes what is resolved.
function runGo(go: string, args: string[], env: NodeJS.ProcessEnv, onTick?: (seconds: number) => void, limitMs = 60 * 60_000, cwd = tmpdir()): Promise<GoRun> {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(go, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let output = '';
    const tick = onTick ? setInterval(() => onTick(Math.round((Date.now() - started) / 1000)), 30_000) : undefined;
    // Bounded: a hung download must not hang `npm run cluster` or CI for ever.
    const limit = setTimeout(() => child.kill('SIGKILL'), limitMs);
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const done = (code: number) => {
      clearInterval(tick);
      clearTimeout(limit);
      resolve({ code, stdout, output });
    };
    child.on('error', (error) => {
      output += String(error);
      done(-1);
    });
    child.on('close', (code) => done(code ?? -1));
  });
}

export interface GoInstallOptions {
  /** What is being built, for messages: e.g. "the Temporal server v1.29.1". */
  what: string;
  /** `module/path/cmd@version` entries; several of one module build in one `go install`. */
  packages: string[];
  /** GOBIN: the directory the binaries land in, named after their package directory. */
  binDirectory: string;
  /** The oldest Go the modules accept (their go.mod `go` line), for the error message. */
  minimumGo: string;
  log: (line: string) => void;
  /** Paths tried for `go` after `GO` and PATH; Go's default install location unless given. */
  goCandidates?: string[];
}

/** Runs `go install` for the packages; throws GoBuildError with the tail of Go's output. */
export async function goInstall(options: GoInstallOptions): Promise<void> {
  const go = findGo(options.goCandidates);
  if (!go) {
    throw new GoBuildError(
      `turnpike needs Go ${options.minimumGo} or newer to build ${options.what} and found none${process.env.GO ? ` (GO=${process.env.GO} is not an executable)` : ''}: install it (https://go.dev/dl/) or set GO=/path/to/go.`,
    );
  }
  const started = Date.now();
  const result = await runGo(go, ['install', ...options.packages], goEnvironment({ GOBIN: options.binDirectory }), (seconds) =>
    options.log(`turnpike: still building ${options.what} (${seconds}s)...`),
  );
  if (result.code !== 0) {
    // The first line says what failed and why (Go's last line); Go's output follows for detail.
    const lines = result.output.trim().split('\n');
    throw new GoBuildError(
      `turnpike could not build ${options.what} with ${go} (needs Go ${options.minimumGo}+ and the Go module proxy): ${lines.at(-1) ?? `exit ${result.code}`}\n` +
        `  go install output:\n  ${lines.slice(-15).join('\n  ')}`,
    );
  }
  options.log(`turnpike: built ${options.what} in ${Math.round((Date.now() - started) / 1000)}s`);
}

/** The directory of a module's source in the module cache (`go mod download -json`). */
export async function goModuleDirectory(moduleAtVersion: string, what: string): Promise<string> {
  const go = findGo();
  if (!go) throw new GoBuildError(`turnpike needs Go to download ${what} and found none: install it (https://go.dev/dl/) or set GO=/path/to/go.`);
  const result = await runGo(go, ['mod', 'download', '-json', moduleAtVersion], goEnvironment({}), undefined, 20 * 60_000);
  let directory: string | undefined;
  try {
    directory = (JSON.parse(result.stdout) as { Dir?: string }).Dir;
  } catch {
    directory = undefined;
  }
  if (result.code !== 0 || !directory) {
    throw new GoBuildError(`turnpike could not download ${what} (go mod download ${moduleAtVersion} exited with ${result.code}):\n  ${result.output.trim().split('\n').slice(-10).join('\n  ')}`);
  }
  return directory;
}
