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
import { spawnSync } from 'node:child_process';
import { mkdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { GoBuildError, findGo, findOnPath, goInstall, isExecutable, turnpikeCacheRoot } from './go-install.js';

/**
 * The one place the CLI version is pinned. v1.5.1 is the newest tag whose go.mod has no
 * `replace` directive, which `go install pkg@version` refuses.
 */
export const TEMPORAL_CLI_VERSION = 'v1.5.1';
const TEMPORAL_CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal';
/** The CLI's go.mod `go` line. */
const MINIMUM_GO = '1.23';

/** A clear, user-facing failure: printed as one message, never as a stack trace. */
export class TemporalCliUnavailableError extends Error {
  override name = 'TemporalCliUnavailableError';
}

/** Where built CLIs are kept: outside the clone, so a fresh clone on the same machine reuses it. */
export function cacheDirectory(): string {
  return path.join(turnpikeCacheRoot(), 'temporal-cli', TEMPORAL_CLI_VERSION);
}

export interface EnsureTemporalCliOptions {
  log?: (line: string) => void;
  /** Paths tried for `go` after `GO` and PATH; Go's default install location unless given. */
  goCandidates?: string[];
}

const OTHER_WAYS = 'or put `temporal` on your PATH, or set TEMPORAL_CLI=/path/to/temporal.';

async function buildCli(log: (line: string) => void, goCandidates: string[] | undefined): Promise<string> {
  if (!findGo(goCandidates)) {
    throw new TemporalCliUnavailableError(
      'turnpike needs the Temporal CLI and could not find one' +
        (process.env.GO ? ` (GO=${process.env.GO} is not an executable file)` : '') +
        '.\n' +
        `  Either install Go ${MINIMUM_GO} or newer (https://go.dev/dl/) so turnpike can build the CLI,\n  ${OTHER_WAYS}`,
    );
  }
  const target = cacheDirectory();
  // Built into a staging folder and renamed, so a build interrupted half-way never leaves a
  // broken binary in the cache.
  const staging = `${target}.partial-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  const what = `the Temporal CLI ${TEMPORAL_CLI_VERSION}`;
  log(`turnpike: building ${what} (first run only; takes a few minutes)...`);
  try {
    await goInstall({ what, packages: [`${TEMPORAL_CLI_MODULE}@${TEMPORAL_CLI_VERSION}`], binDirectory: staging, minimumGo: MINIMUM_GO, log, goCandidates });
    mkdirSync(target, { recursive: true });
    renameSync(path.join(staging, 'temporal'), path.join(target, 'temporal'));
  } catch (error) {
    if (error instanceof GoBuildError) throw new TemporalCliUnavailableError(`${error.message}\n  Or, instead of building it, ${OTHER_WAYS}`);
    throw error;
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  log(`turnpike: ${what} -> ${path.join(target, 'temporal')}`);
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
  return buildCli(log, options.goCandidates);
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
