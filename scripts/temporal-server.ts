/**
 * Finds or builds the parts of a self-hosted Temporal cluster that `npm run cluster` and the
 * cluster test run: the Temporal server, its SQL schema tool with the PostgreSQL schema files,
 * and the Web UI server. All come from the Go module proxy (scripts/go-install.ts) and are
 * cached per version under ~/.cache/turnpike/, like the Temporal CLI.
 *
 * Run directly (`npm run temporal-server`, `-- --ui` for the Web UI too) it builds what is
 * missing and prints the paths.
 */
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { GoBuildError, goInstall, goModuleDirectory, isExecutable, turnpikeCacheRoot } from './go-install.js';

/**
 * The one place the server version is pinned: the release the Temporal CLI v1.5.1 embeds in
 * `temporal server start-dev` (its go.mod requires go.temporal.io/server v1.29.1), so the
 * cluster runs the same server the dev server and the rest of the test suite run.
 * docker-compose.yml pins the images of the same release.
 */
export const TEMPORAL_SERVER_VERSION = 'v1.29.1';
/**
 * The Web UI server the same CLI embeds (github.com/temporalio/ui-server/v2 v2.42.1). The
 * module carries the built UI (ui/assets, embedded with go:embed), so `go install` yields the
 * whole Web UI. docker-compose.yml pins temporalio/ui to the same version.
 */
export const TEMPORAL_UI_VERSION = 'v2.42.1';

const SERVER_MODULE = 'go.temporal.io/server';
const UI_MODULE = 'github.com/temporalio/ui-server/v2';

export interface TemporalServerBinaries {
  /** `temporal-server` */
  server: string;
  /** `temporal-sql-tool`, which creates and migrates the databases */
  sqlTool: string;
  /** `schema/postgresql/v12` from the server module: `temporal/` and `visibility/` */
  postgresSchema: string;
  /** Directory holding both binaries, for PATH (deploy/setup-postgres.sh calls `temporal-sql-tool`). */
  binDirectory: string;
}

export interface EnsureOptions {
  log?: (line: string) => void;
}

export function temporalServerCacheDirectory(): string {
  return path.join(turnpikeCacheRoot(), 'temporal-server', TEMPORAL_SERVER_VERSION);
}

export function temporalUiCacheDirectory(): string {
  return path.join(turnpikeCacheRoot(), 'temporal-ui', TEMPORAL_UI_VERSION);
}

function serverLayout(directory: string): TemporalServerBinaries {
  return {
    server: path.join(directory, 'temporal-server'),
    sqlTool: path.join(directory, 'temporal-sql-tool'),
    postgresSchema: path.join(directory, 'schema', 'postgresql', 'v12'),
    binDirectory: directory,
  };
}

function makeOwnerWritable(directory: string): void {
  chmodSync(directory, 0o755);
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const file = path.join(directory, entry.name);
    if (entry.isDirectory()) makeOwnerWritable(file);
    else chmodSync(file, 0o644);
  }
}

function complete(layout: TemporalServerBinaries): boolean {
  return isExecutable(layout.server) && isExecutable(layout.sqlTool) && existsSync(path.join(layout.postgresSchema, 'visibility', 'versioned'));
}

/**
 * Returns the cached server, schema tool and schema files, building them on first use
 * (`go install go.temporal.io/server/cmd/server@v1.29.1 .../cmd/tools/sql@v1.29.1`).
 * @throws GoBuildError with a message that says what to install.
 */
export async function ensureTemporalServer(options: EnsureOptions = {}): Promise<TemporalServerBinaries> {
  const log = options.log ?? ((line: string) => console.error(line));
  const target = temporalServerCacheDirectory();
  if (complete(serverLayout(target))) return serverLayout(target);

  const staging = `${target}.partial-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  try {
    log(`turnpike: building the Temporal server ${TEMPORAL_SERVER_VERSION} and its SQL tool with Go (first run only; takes a few minutes)...`);
    await goInstall({
      what: `the Temporal server ${TEMPORAL_SERVER_VERSION}`,
      packages: [`${SERVER_MODULE}/cmd/server@${TEMPORAL_SERVER_VERSION}`, `${SERVER_MODULE}/cmd/tools/sql@${TEMPORAL_SERVER_VERSION}`],
      binDirectory: staging,
      minimumGo: '1.25',
      log,
    });
    // go install names binaries after their directories; give them the names Temporal's
    // images and docs use, which deploy/setup-postgres.sh calls.
    renameSync(path.join(staging, 'server'), path.join(staging, 'temporal-server'));
    renameSync(path.join(staging, 'sql'), path.join(staging, 'temporal-sql-tool'));
    // The schema files are not in the binaries: copy them from the same module version, so
    // the cache needs neither Go nor the module cache afterwards.
    const moduleDirectory = await goModuleDirectory(`${SERVER_MODULE}@${TEMPORAL_SERVER_VERSION}`, `the Temporal server ${TEMPORAL_SERVER_VERSION} sources`);
    cpSync(path.join(moduleDirectory, 'schema', 'postgresql', 'v12'), serverLayout(staging).postgresSchema, { recursive: true });
    // The module cache is read-only; a read-only copy could not be replaced by a later build.
    makeOwnerWritable(serverLayout(staging).postgresSchema);
    // Rename, so a build interrupted half-way never leaves a broken cache entry.
    rmSync(target, { recursive: true, force: true });
    mkdirSync(path.dirname(target), { recursive: true });
    renameSync(staging, target);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  log(`turnpike: Temporal server ${TEMPORAL_SERVER_VERSION} -> ${target}`);
  return serverLayout(target);
}

/**
 * Returns the cached Web UI server binary, building it on first use
 * (`go install github.com/temporalio/ui-server/v2/cmd/server@v2.42.1`).
 * @throws GoBuildError
 */
export async function ensureTemporalUi(options: EnsureOptions = {}): Promise<string> {
  const log = options.log ?? ((line: string) => console.error(line));
  const target = temporalUiCacheDirectory();
  const binary = path.join(target, 'temporal-ui-server');
  if (isExecutable(binary)) return binary;
  const staging = `${target}.partial-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  try {
    log(`turnpike: building the Temporal Web UI ${TEMPORAL_UI_VERSION} with Go (first run only)...`);
    await goInstall({ what: `the Temporal Web UI ${TEMPORAL_UI_VERSION}`, packages: [`${UI_MODULE}/cmd/server@${TEMPORAL_UI_VERSION}`], binDirectory: staging, minimumGo: '1.24', log });
    mkdirSync(target, { recursive: true });
    renameSync(path.join(staging, 'server'), binary);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return binary;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const withUi = process.argv.includes('--ui');
  (async () => {
    const server = await ensureTemporalServer();
    console.log(`${server.server}\n${server.sqlTool}\n${server.postgresSchema}`);
    if (withUi) console.log(await ensureTemporalUi());
  })().catch((error: unknown) => {
    console.error(error instanceof GoBuildError ? error.message : error);
    process.exit(1);
  });
}
