/**
 * A fresh app outside the repository that installs the run's packed tarball of turnpike
 * (packed-tarball.ts), as a team would: its install, type-check and run steps, shared by
 * test/integration/packed-package.test.ts and packed-bedrock.test.ts. Every command runs in the
 * app's folder with the environment of the `npm test` that runs us, less its npm settings (and
 * whatever else the app is told to leave out), and fails with the command's whole output.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { inject } from 'vitest';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../../', import.meta.url));
/** The example app whose Temporal packages, zod and tooling every fresh app installs. */
export const EXAMPLE = path.join(REPO, 'examples', 'order-desk');

/** The settings of the `npm test` that runs us: they must not leak into the app's own npm calls. */
export const NPM_SETTINGS = /^npm_/i;

/** The environment of an app's commands: ours without the variables `leaveOut` matches, plus `extra`. */
export function cleanEnvironment(extra: Record<string, string> = {}, leaveOut: RegExp = NPM_SETTINGS): NodeJS.ProcessEnv {
  const environment = Object.fromEntries(Object.entries(process.env).filter(([key]) => !leaveOut.test(key)));
  return { ...environment, ...extra };
}

/** The strict NodeNext tsconfig.json of a fresh app, library checks on. */
export const STRICT_APP_TSCONFIG = JSON.stringify({
  compilerOptions: {
    target: 'ES2022',
    lib: ['ES2023'],
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    types: ['node'],
    strict: true,
    // A strict app checks its libraries too: turnpike's typings must need no package the app left out.
    skipLibCheck: false,
    outDir: 'dist',
    rootDir: 'src',
  },
  include: ['src'],
});

/** One fresh app in its folder. */
export class PackedApp {
  constructor(
    readonly folder: string,
    private readonly leaveOut: RegExp = NPM_SETTINGS,
  ) {}

  /** `command args` in the app; throws with its output when it fails. */
  async run(command: string, args: string[], extra: Record<string, string> = {}): Promise<{ stdout: string; stderr: string }> {
    try {
      return await run(command, args, { cwd: this.folder, env: cleanEnvironment(extra, this.leaveOut), maxBuffer: 64 * 1024 * 1024, timeout: 240_000 });
    } catch (error) {
      const failed = error as { stdout?: string; stderr?: string; message: string };
      throw new Error(`${command} ${args.join(' ')} failed in ${this.folder}:\n${failed.stdout ?? ''}\n${failed.stderr ?? ''}\n${failed.message}`);
    }
  }

  /** `command args` in the app, however it ends: its exit code (0 when it succeeded) and output. */
  async outcome(command: string, args: string[], timeout = 240_000, extra: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
    return run(command, args, { cwd: this.folder, env: cleanEnvironment(extra, this.leaveOut), maxBuffer: 64 * 1024 * 1024, timeout }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: { code?: unknown; stdout?: string; stderr?: string }) => ({ code: typeof error.code === 'number' ? error.code : -1, stdout: error.stdout ?? '', stderr: error.stderr ?? '' }),
    );
  }

  /** `npm install` from the app's package.json. */
  async install(): Promise<void> {
    await this.run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline']);
  }

  /** The app's built `dist/run.js` against the test dev server: the JSON of the last line it printed. */
  async runScript(extra: Record<string, string>): Promise<unknown> {
    const { stdout } = await this.run('node', ['dist/run.js'], {
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_NAMESPACE: inject('temporalNamespace'),
      ...extra,
    });
    return JSON.parse(stdout.trim().split('\n').at(-1)!);
  }
}

/** A copy of examples/order-desk in `folder`, with turnpike from `tarball`; installed. */
export async function installExampleApp(folder: string, tarball: string): Promise<PackedApp> {
  cpSync(EXAMPLE, folder, { recursive: true, filter: (source) => !/node_modules|dist$/.test(source) });
  const manifest = JSON.parse(readFileSync(path.join(folder, 'package.json'), 'utf8'));
  manifest.dependencies.turnpike = `file:${tarball}`;
  writeFileSync(path.join(folder, 'package.json'), JSON.stringify(manifest, null, 2));
  const app = new PackedApp(folder);
  await app.install();
  return app;
}

/** The repository's own pins (the versions its tests run) and the example app's. */
const REPO_MANIFEST = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
const EXAMPLE_MANIFEST = JSON.parse(readFileSync(path.join(EXAMPLE, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

/**
 * A fresh app in `directory/name`: `files`, and a package.json with the example's Temporal
 * packages and zod, turnpike from `tarball`, and `packages` at the repository's own pins; installed.
 */
export async function installApp(
  directory: string,
  name: string,
  tarball: string,
  files: Record<string, string>,
  packages: string[],
  leaveOut: RegExp = NPM_SETTINGS,
): Promise<PackedApp> {
  const folder = path.join(directory, name);
  const pick = (versions: Record<string, string>, names: string[]) => Object.fromEntries(names.map((name) => [name, versions[name]]));
  const manifest = {
    name: `turnpike-${name}`,
    private: true,
    type: 'module',
    dependencies: {
      ...pick(EXAMPLE_MANIFEST.dependencies, Object.keys(EXAMPLE_MANIFEST.dependencies).filter((name) => name.startsWith('@temporalio/') || name === 'zod')),
      ...pick(REPO_MANIFEST.devDependencies, packages),
      turnpike: `file:${tarball}`,
    },
    devDependencies: {
      ...pick(EXAMPLE_MANIFEST.devDependencies, ['@types/node', 'typescript']),
      // What the README's install section says a strict app needs for the Temporal SDK's typings.
      '@types/ms': '2.1.0',
    },
  };
  for (const [file, text] of Object.entries({ ...files, 'package.json': JSON.stringify(manifest, null, 2) })) {
    mkdirSync(path.dirname(path.join(folder, file)), { recursive: true });
    writeFileSync(path.join(folder, file), text);
  }
  const app = new PackedApp(folder, leaveOut);
  await app.install();
  return app;
}

/**
 * `src/turns.ts` of a fresh app, shared by the apps' `src/run.ts`: `main` connects to Temporal
 * from the environment and prints what its body returns as one JSON line; `parkedCall` waits for
 * a turn's first parked call; `outcomeOf` runs a one-step turn and tells how it ended (the failure
 * and its causes, outermost first).
 */
export const APP_TURNS_FILE = `
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { ModelSettings } from 'turnpike';
import type { TurnpikeClient } from 'turnpike/client';
import { connectionOptionsFromEnvironment, TurnpikePlugin } from 'turnpike/worker';

/** The failure and its causes, outermost first. */
export function chainOf(error: unknown): Array<{ type?: string; message: string }> {
  const chain: Array<{ type?: string; message: string }> = [];
  for (let current: unknown = error; current instanceof Error; current = current.cause) {
    const type = (current as { type?: unknown }).type;
    chain.push({ ...(typeof type === 'string' ? { type } : {}), message: current.message });
  }
  return chain;
}

export async function outcomeOf(turnpike: TurnpikeClient, turnId: string, model: ModelSettings) {
  const handle = await turnpike.startTurn({ model, messages: [{ role: 'user', content: 'Say hello.' }], modelCallOptions: { retry: { maximumAttempts: 1 } } }, { turnId });
  return handle.result().then(() => [{ message: 'completed' }], chainOf);
}

/** The turn's first parked call, once it has one. */
export async function parkedCall(turnpike: TurnpikeClient, turnId: string) {
  let parked = (await turnpike.turnState(turnId).catch(() => undefined))?.pending[0];
  for (let attempt = 0; !parked && attempt < 300; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    parked = (await turnpike.turnState(turnId).catch(() => undefined))?.pending[0];
  }
  if (!parked) throw new Error('the turn never parked');
  return parked;
}

export interface Temporal {
  namespace: string;
  client: Client;
  workerConnection: NativeConnection;
}

/** Runs \`body\` connected to Temporal, and prints what it returns as one JSON line. */
export function main(plugin: TurnpikePlugin, body: (temporal: Temporal) => Promise<unknown>): void {
  const run = async () => {
    const { connectionOptions, namespace } = connectionOptionsFromEnvironment();
    const workerConnection = await NativeConnection.connect(connectionOptions);
    const connection = await Connection.connect(connectionOptions);
    const client = new Client({ connection, namespace, plugins: [plugin] });
    try {
      console.log(JSON.stringify(await body({ namespace, client, workerConnection })));
    } finally {
      await connection.close();
      await workerConnection.close();
    }
  };
  run().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
`;
