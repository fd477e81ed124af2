/**
 * turnpike/testing from the packed tarball, as a team uses it: `npm pack`, the tarball installed
 * into a fresh copy of examples/order-desk, and the app's own tests (test/order-desk.test.ts,
 * node:test, written with the kit) built and run with its `npm test`: the refund policy, a denial
 * with its reason, a client tool, a 24-hour expiry in under 2 s of wall time, and an MCP tool
 * behind approval, on Temporal's time-skipping test server. Nothing here uses the dev server.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packedTurnpike } from '../support/packed-tarball.js';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const EXAMPLE = path.join(REPO, 'examples', 'order-desk');

/** npm settings of the `npm test` that runs us must not leak into the app's own npm calls. */
function cleanEnvironment(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key) && !/^VITEST/.test(key)));
}

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
    ]) {
      expect(output).toContain(`ok `);
      expect(output).toMatch(new RegExp(`^ok \\d+ - ${name.replace(/[.*+?^${}()|[\]\\$]/g, '\\$&')}$`, 'm'));
    }
    expect(output).toMatch(/^# pass 5$/m);
    expect(output).toMatch(/^# fail 0$/m);
    // The kit's teardown stopped its test server: no server of this app's run is left.
    const { stdout: processes } = await run('ps', ['-eo', 'args']);
    expect(processes.split('\n').filter((line) => line.includes('io.temporal.testserver.TestServer') && line.includes(app))).toEqual([]);
  }, 600_000);
});
