/**
 * turnpike from outside the repository, as a team installs it: `npm pack`, the tarball
 * installed into a fresh copy of examples/order-desk (its own package.json and strict NodeNext
 * tsconfig), type-checked, built and run against the test dev server. The app's own worker has
 * its own workflow and activity plus `TurnpikePlugin`; its workflow runs an agent turn as a
 * child, the turn parks on a refund, the app approves it through `turnpike/client`, and the
 * order workflow completes with the turn's typed result. A type error in the published .d.ts,
 * a file missing from the tarball or a dependency left out of package.json fails this test.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const EXAMPLE = path.join(REPO, 'examples', 'order-desk');

/** npm settings of the `npm test` that runs us must not leak into the app's own npm calls. */
function cleanEnvironment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const environment = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)));
  return { ...environment, ...extra };
}

async function inApp(app: string, command: string, args: string[], extra: Record<string, string> = {}) {
  try {
    return await run(command, args, { cwd: app, env: cleanEnvironment(extra), maxBuffer: 64 * 1024 * 1024, timeout: 240_000 });
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${command} ${args.join(' ')} failed in ${app}:\n${failed.stdout ?? ''}\n${failed.stderr ?? ''}\n${failed.message}`);
  }
}

describe('the packed package in a fresh app', { timeout: 300_000 }, () => {
  let directory: string;
  let app: string;
  let tarball: string;

  beforeAll(async () => {
    directory = mkdtempSync(path.join(tmpdir(), 'turnpike-packed-'));
    // prepack builds dist/ with tsc first, exactly as a publish would.
    const { stdout } = await inApp(REPO, 'npm', ['pack', '--json', '--pack-destination', directory]);
    const [packed] = JSON.parse(stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
    tarball = path.join(directory, packed.filename);
    writeFileSync(path.join(directory, 'files.json'), JSON.stringify(packed.files.map((file) => file.path)));

    app = path.join(directory, 'app');
    cpSync(EXAMPLE, app, { recursive: true, filter: (source) => !/node_modules|dist$/.test(source) });
    const manifest = JSON.parse(readFileSync(path.join(app, 'package.json'), 'utf8'));
    manifest.dependencies.turnpike = `file:${tarball}`;
    writeFileSync(path.join(app, 'package.json'), JSON.stringify(manifest, null, 2));
    await inApp(app, 'npm', ['install', '--no-audit', '--no-fund', '--prefer-offline']);
  }, 480_000);

  afterAll(() => {
    if (directory) rmSync(directory, { recursive: true, force: true });
  });

  it('ships the built entry points, the dashboard and the CLI, and no tests or sources', () => {
    const files = JSON.parse(readFileSync(path.join(directory, 'files.json'), 'utf8')) as string[];
    for (const entry of ['index', 'worker/index', 'client/index', 'workflows/index', 'api/index']) {
      expect(files).toContain(`dist/${entry}.js`);
      expect(files).toContain(`dist/${entry}.d.ts`);
    }
    expect(files).toContain('dist/workflows/preload.js');
    expect(files).toContain('dist/api/dashboard/index.html');
    expect(files).toContain('bin/turnpike.js');
    expect(files.filter((file) => /^(test|bench|scripts|demo|examples)\/|\.ts$/.test(file) && !file.endsWith('.d.ts'))).toEqual([]);
  });

  it('type-checks with strict NodeNext, and the published .d.ts files have no errors of their own', async () => {
    await inApp(app, 'npx', ['tsc', '-p', '.', '--noEmit']);
    // With library checks on, every error must come from other packages' typings, never turnpike's.
    const checked = await run('npx', ['tsc', '-p', '.', '--noEmit', '--skipLibCheck', 'false'], { cwd: app, env: cleanEnvironment() }).then(
      ({ stdout }) => stdout,
      (error: { stdout?: string }) => error.stdout ?? '',
    );
    expect(checked.split('\n').filter((line) => line.includes('node_modules/turnpike/'))).toEqual([]);
  });

  it('runs a turn started by the app\'s own workflow: parked, approved through turnpike/client, completed', async () => {
    await inApp(app, 'npx', ['tsc', '-p', '.']);
    const taskQueue = `order-desk-${randomUUID()}`;
    const { stdout } = await inApp(app, 'node', ['dist/run.js'], {
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_NAMESPACE: inject('temporalNamespace'),
      ORDER_DESK_TASK_QUEUE: taskQueue,
    });
    const result = JSON.parse(stdout.trim().split('\n').at(-1)!);
    expect(result.parked).toEqual({ toolName: 'issue_refund', input: { orderId: '1001', amount: 250 }, reason: 'refunds above $100 need a lead' });
    expect(result.listedByApi).toBe(1);
    expect(result.dashboardServed).toBe(true);
    expect(result.order).toMatchObject({ orderId: '1001', turnStatus: 'completed', refunded: true, approvedBy: 'lead@orders.example' });
    // The approved refund ran exactly once, with the turn's idempotency key, and the app's own activity ran after the turn.
    expect(result.refundsMade).toEqual([{ orderId: '1001', amount: 250, idempotencyKey: expect.stringMatching(new RegExp(`^${result.turnId}/`)) }]);
    expect(result.sentNotices).toEqual(['1001: Your refund is on its way.']);

    // The package's CLI finds the finished turn on the app's task queue.
    const shown = await inApp(app, 'npx', ['turnpike', 'show', result.turnId, '--json'], {
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_NAMESPACE: inject('temporalNamespace'),
      TURNPIKE_TASK_QUEUE: taskQueue,
    });
    expect(JSON.parse(shown.stdout)).toMatchObject({ turnId: result.turnId, execution: 'COMPLETED', result: { status: 'completed' } });
  });
});
