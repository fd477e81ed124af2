/**
 * Finds Temporal's time-skipping test server, or builds it from Maven Central.
 *
 * `@temporalio/testing` downloads that server at run time from a host that locked-down build
 * machines and CI runners often cannot reach. The same server is published to Maven Central as
 * `io.temporal:temporal-test-server` (Java): a jar that needs its dependencies, so turnpike asks
 * Maven for the jar and its runtime dependencies once, keeps them in its cache, and writes a
 * launcher (`java -cp <jars> io.temporal.testserver.TestServer <port>`) that
 * `TestWorkflowEnvironment.createTimeSkipping` runs as an `existing-path` executable.
 *
 * Order: `TURNPIKE_TEST_SERVER` (a path to an executable taking the port as its argument), then
 * the cache, then a build with `mvn` (Java 17 or newer and Maven on PATH, or `JAVA`/`MVN`).
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, chmodSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';

/** The one place the test server's version is pinned: the newest Maven Central serves. */
export const TEST_SERVER_VERSION = '1.38.0';

/** A clear failure that says what to install; printed as one message, never as a stack trace. */
export class TestServerUnavailableError extends Error {
  override name = 'TestServerUnavailableError';
}

/** turnpike's cache root (`TURNPIKE_CACHE_DIR`, else `$XDG_CACHE_HOME/turnpike` or `~/.cache/turnpike`). */
function cacheRoot(): string {
  return process.env.TURNPIKE_CACHE_DIR ?? path.join(process.env.XDG_CACHE_HOME ?? path.join(homedir(), '.cache'), 'turnpike');
}

/** Where the server's jars and launcher are kept: outside any clone, so every project on the machine shares them. */
export function testServerDirectory(): string {
  return path.join(cacheRoot(), 'temporal-test-server', TEST_SERVER_VERSION);
}

const LAUNCHER = 'temporal-test-server';

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

function findOnPath(command: string): string | undefined {
  for (const directory of (process.env.PATH ?? '').split(path.delimiter)) {
    if (directory && isExecutable(path.join(directory, command))) return path.join(directory, command);
  }
  return undefined;
}

const OTHER_WAYS =
  'or set TURNPIKE_TEST_SERVER=/path/to/an/executable that starts the server on the port it is given ' +
  `(e.g. a script running \`java -cp '<jars>/*' io.temporal.testserver.TestServer "$1"\`).`;

/** The generated pom: the test server and its runtime dependencies, nothing else. */
function pom(): string {
  return `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>turnpike</groupId><artifactId>temporal-test-server-fetch</artifactId><version>1</version><packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>io.temporal</groupId><artifactId>temporal-test-server</artifactId><version>${TEST_SERVER_VERSION}</version></dependency>
  </dependencies>
</project>
`;
}

function run(command: string, args: string[], cwd: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', (error) => resolve({ code: -1, output: String(error) }));
    child.on('close', (code) => resolve({ code: code ?? -1, output }));
  });
}

async function build(log: (line: string) => void): Promise<string> {
  const java = process.env.JAVA ?? findOnPath('java');
  const mvn = process.env.MVN ?? findOnPath('mvn');
  if (!java || !mvn) {
    throw new TestServerUnavailableError(
      `turnpike's test kit needs Temporal's time-skipping test server and found none in ${testServerDirectory()}.\n` +
        `  Install Java 17 or newer and Maven (\`mvn\`) so turnpike can fetch io.temporal:temporal-test-server:${TEST_SERVER_VERSION} from Maven Central,\n  ${OTHER_WAYS}`,
    );
  }
  const target = testServerDirectory();
  // Fetched into a staging folder and renamed, so an interrupted fetch never leaves half a server.
  const staging = `${target}.partial-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  try {
    log(`turnpike: fetching Temporal's test server ${TEST_SERVER_VERSION} from Maven Central (first run only)...`);
    writeFileSync(path.join(staging, 'pom.xml'), pom());
    const fetched = await run(mvn, ['-B', '-q', 'dependency:copy-dependencies', '-DincludeScope=runtime', '-DoutputDirectory=lib'], staging);
    if (fetched.code !== 0 || !existsSync(path.join(staging, 'lib', `temporal-test-server-${TEST_SERVER_VERSION}.jar`))) {
      throw new TestServerUnavailableError(`Maven could not fetch io.temporal:temporal-test-server:${TEST_SERVER_VERSION}:\n${fetched.output.trim().slice(-2000)}\n  Or, instead, ${OTHER_WAYS}`);
    }
    // `exec`, so the process the SDK starts (and stops) is the server itself, not a shell around it.
    writeFileSync(
      path.join(staging, LAUNCHER),
      `#!/bin/sh\n# Temporal's time-skipping test server ${TEST_SERVER_VERSION}, fetched by turnpike from Maven Central.\n` +
        `exec "${java}" -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "$(dirname "$0")/lib/*" io.temporal.testserver.TestServer "$@"\n`,
    );
    chmodSync(path.join(staging, LAUNCHER), 0o755);
    rmSync(target, { recursive: true, force: true });
    mkdirSync(path.dirname(target), { recursive: true });
    renameSync(staging, target);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  log(`turnpike: Temporal's test server ${TEST_SERVER_VERSION} -> ${path.join(target, LAUNCHER)} (${readdirSync(path.join(target, 'lib')).length} jars)`);
  return path.join(target, LAUNCHER);
}

export interface EnsureTestServerOptions {
  log?: (line: string) => void;
}

/**
 * The path of an executable that starts the time-skipping test server on the port it is given,
 * fetching the server from Maven Central on first use.
 * @throws TestServerUnavailableError with a message that says what to install.
 */
export async function ensureTestServer(options: EnsureTestServerOptions = {}): Promise<string> {
  const log = options.log ?? ((line: string) => console.error(line));
  const explicit = process.env.TURNPIKE_TEST_SERVER;
  if (explicit) {
    if (!isExecutable(explicit)) throw new TestServerUnavailableError(`TURNPIKE_TEST_SERVER=${explicit} is not an executable file.`);
    return explicit;
  }
  const cached = path.join(testServerDirectory(), LAUNCHER);
  if (isExecutable(cached)) return cached;
  return build(log);
}
