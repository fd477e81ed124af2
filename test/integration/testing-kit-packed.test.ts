/**
 * turnpike/testing from the packed tarball, as a team uses it: `npm pack`, the tarball installed
 * into a fresh copy of examples/order-desk, and the app's own tests (test/order-desk.test.ts,
 * node:test, written with the kit) built and run with its `npm test`: the refund policy, a denial
 * with its reason, a client tool, a 24-hour expiry in under 2 s of wall time, and an MCP tool
 * behind approval, on Temporal's time-skipping test server. Nothing here uses the dev server.
 * Its second test file (test/order-workflow.test.ts) tests the app's own workflow: `nextParked`
 * waits for the child turn it starts, and awaiting one turn leaves another's call parked.
 *
 * The app's runs share one workflow bundle: both files bundle the app's workflows file, through
 * a cache of the run's own (`TURNPIKE_CACHE_DIR`), which holds one bundle after them; a later
 * process reuses it as it is, and an edit of a module the workflows import makes a new one.
 */
import { execFile } from 'node:child_process';
import { appendFileSync, cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packedTurnpike } from '../support/packed-tarball.js';
import { testServerDirectory } from '../../testing/index.js';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const EXAMPLE = path.join(REPO, 'examples', 'order-desk');

/** npm settings of the `npm test` that runs us must not leak into the app's own npm calls. */
function cleanEnvironment(): NodeJS.ProcessEnv {
  return { ...Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key) && !/^VITEST/.test(key))), ...appCache };
}

/** The app's cache of its own (its workflow bundles), and the machine's test server. */
let appCache: Record<string, string> = {};

async function inApp(app: string, command: string, args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await run(command, args, { cwd: app, env: cleanEnvironment(), maxBuffer: 64 * 1024 * 1024, timeout: 420_000 });
    return { stdout, stderr, code: 0 };
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; code?: number };
    return { stdout: failed.stdout ?? '', stderr: failed.stderr ?? '', code: typeof failed.code === 'number' ? failed.code : 1 };
  }
}

let directory: string;
let app: string;

beforeAll(async () => {
  directory = mkdtempSync(path.join(tmpdir(), 'turnpike-testing-kit-'));
  appCache = { TURNPIKE_CACHE_DIR: path.join(directory, 'cache'), TURNPIKE_TEST_SERVER: path.join(testServerDirectory(), 'temporal-test-server') };
  // One pack per run, shared with the other files that install the package (packed-tarball.ts).
  const { tarball, files } = await packedTurnpike(cleanEnvironment());
  expect(files).toContain('dist/testing/index.js');
  app = path.join(directory, 'app');
  cpSync(EXAMPLE, app, { recursive: true, filter: (source) => !/node_modules|dist(-test)?$/.test(source) });
  const manifest = JSON.parse(readFileSync(path.join(app, 'package.json'), 'utf8'));
  manifest.dependencies.turnpike = `file:${tarball}`;
  writeFileSync(path.join(app, 'package.json'), JSON.stringify(manifest, null, 2));
  const installed = await inApp(app, 'npm', ['install', '--no-audit', '--no-fund', '--prefer-offline']);
  expect(installed.code, installed.stderr).toBe(0);
}, 600_000);

afterAll(() => {
  if (directory) rmSync(directory, { recursive: true, force: true });
});

describe("the order desk's own tests, written with turnpike/testing, from the packed package", () => {
  it('pass: refund policy, denial with a reason, client tool, 24-hour expiry, MCP tool behind approval', async () => {
    const tested = await inApp(app, 'npm', ['test']);
    const output = `${tested.stdout}\n${tested.stderr}`;
    expect(tested.code, output).toBe(0);
    for (const name of [
      'refunds up to $100 run at once; above, they wait for a lead',
      'a denial and its reason reach the model, and nothing is refunded',
      'the customer answers a client tool',
      'an approval left for 25 hours expires at once, and the model is told',
      "the carrier's MCP tool waits for a lead's approval before it cancels",
      "the order workflow's child turn: nextParked waits for it to start and park, and the order completes once approved",
      'awaiting a turn moves the clock to its own expiry only: a call parked for 24 hours in another turn stays parked',
    ]) {
      expect(output).toContain(`ok `);
      expect(output).toMatch(new RegExp(`^ok \\d+ - ${name.replace(/[.*+?^${}()|[\]\\$]/g, '\\$&')}$`, 'm'));
    }
    expect(output).toMatch(/^# pass 7$/m);
    console.log(`environments (ms, first bundles): ${[...output.matchAll(/environment-ms (\d+)/g)].map((match) => match[1]).join(', ')}`);
    expect(output).toMatch(/^# fail 0$/m);
    // The kit's teardown stopped its test server: no server of this app's run is left.
    const { stdout: processes } = await run('ps', ['-eo', 'args']);
    expect(processes.split('\n').filter((line) => line.includes('io.temporal.testserver.TestServer') && line.includes(app))).toEqual([]);
  }, 600_000);

  it('bundle the workflows file once: a later process reuses the bundle on disk, and an edit of a module it imports makes a new one', async () => {
    const bundles = path.join(appCache.TURNPIKE_CACHE_DIR!, 'workflow-bundles');
    const [key, ...others] = readdirSync(bundles);
    expect(others, 'one bundle for both test files').toEqual([]);
    const bundle = path.join(bundles, key!, 'bundle.js');
    const inputs = JSON.parse(readFileSync(path.join(bundles, key!, 'inputs.json'), 'utf8')) as Record<string, string>;
    const workflowFile = path.join(app, 'dist-test', 'src', 'order-workflow.js');
    expect(Object.keys(inputs)).toEqual(expect.arrayContaining([workflowFile, path.join(app, 'dist-test', 'src', 'workflows.js')]));
    expect(Object.keys(inputs).some((file) => file.includes(`${path.sep}node_modules${path.sep}turnpike${path.sep}dist${path.sep}workflows${path.sep}`))).toBe(true);
    const made = statSync(bundle);

    const again = await inApp(app, 'node', ['--test', 'dist-test/test/order-workflow.test.js']);
    expect(again.code, `${again.stdout}\n${again.stderr}`).toBe(0);
    const reused = statSync(bundle);
    expect({ ino: reused.ino, mtimeMs: reused.mtimeMs }, 'the later process read the bundle as it was').toEqual({ ino: made.ino, mtimeMs: made.mtimeMs });
    console.log(`environment, bundle cached (ms): ${/environment-ms (\d+)/.exec(again.stdout)?.[1]}`);

    appendFileSync(workflowFile, '\n// edited\n');
    const edited = await inApp(app, 'node', ['--test', 'dist-test/test/order-workflow.test.js']);
    expect(edited.code, `${edited.stdout}\n${edited.stderr}`).toBe(0);
    expect(readdirSync(bundles)).toEqual([key]);
    const remade = statSync(bundle);
    expect(remade.ino !== made.ino || remade.mtimeMs !== made.mtimeMs, 'a new bundle after the edit').toBe(true);
    expect(JSON.parse(readFileSync(path.join(bundles, key!, 'inputs.json'), 'utf8'))[workflowFile]).not.toBe(inputs[workflowFile]);
  }, 600_000);
});
