/**
 * `turnpike replay` (replay before deploy) against the dev server: a user's own workflows file on
 * its own worker, 20 orders whose turns are parked and 20 whose turns ended. Their histories
 * replay against the same file (exit 0); after a deliberately non-deterministic change to that
 * file, the command exits 1 naming a history and the event; the set it saved with `--save`
 * reproduces the failure offline.
 */
import { randomUUID } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../cli/main.js';
import type { TurnpikeClient } from '../../client/index.js';
import { use } from '../support/test-tools.js';
import { waitForPending } from '../support/turnpike-harness.js';
import { startUserWorker, type UserWorker } from '../support/user-worker.js';
import type { orderDesk } from '../support/user-workflows.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
// Two folders down from the root, as test/support is, so the file's relative imports resolve.
const WORK = path.join(ROOT, '.turnpike', `replay-command-${process.pid}`);
const USER_WORKFLOWS = path.join(WORK, 'user-workflows.ts');
const SAVED = path.join(WORK, 'saved');
const SCRIPTED = { provider: 'scripted' as const, model: 'demo' };
const taskQueue = `replay-command-${randomUUID()}`;

let user: UserWorker;
let client: Client;
let turnpike: TurnpikeClient;
const parkedOrders: string[] = [];

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function cli(argv: string[], withClient = true): Promise<Run> {
  const run: Run = { code: -1, stdout: '', stderr: '' };
  run.code = await runCli(argv, {
    stdout: { write: (chunk: string | Uint8Array) => (run.stdout += String(chunk)) },
    stderr: { write: (chunk: string | Uint8Array) => (run.stderr += String(chunk)) },
    ...(withClient ? { client: turnpike } : {}),
  });
  return run;
}

beforeAll(async () => {
  rmSync(WORK, { recursive: true, force: true });
  mkdirSync(WORK, { recursive: true });
  copyFileSync(fileURLToPath(new URL('../support/user-workflows.ts', import.meta.url)), USER_WORKFLOWS);
  user = await startUserWorker({ taskQueue, workflowsPath: USER_WORKFLOWS, activities: { recordOrderNote: async () => undefined } });
  ({ client, turnpike } = user);

  const ended = [];
  for (let n = 0; n < 20; n++) {
    const parkedId = `order-parked-${n}-${randomUUID()}`;
    await client.workflow.start<typeof orderDesk>('orderDesk', { taskQueue, workflowId: parkedId, args: [{ request: use('guarded_action', { target: `db-${n}`, count: 1 }), model: SCRIPTED }] });
    parkedOrders.push(parkedId);
    const endedId = `order-ended-${n}-${randomUUID()}`;
    ended.push(client.workflow.start<typeof orderDesk>('orderDesk', { taskQueue, workflowId: endedId, args: [{ request: use('record_action', { action: `note ${n}` }), model: SCRIPTED }] }).then((handle) => handle.result()));
  }
  await Promise.all(ended);
  for (const id of parkedOrders) await waitForPending(client.workflow.getHandle(`${id}/agent`));
  // 40 orders and their 40 turns, as visibility lists them.
  const query = `TaskQueue="${taskQueue}"`;
  for (let tries = 0; (await client.workflow.count(query)).count < 80; tries++) {
    if (tries > 300) throw new Error('visibility did not list the 80 workflows');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
});

afterAll(async () => {
  for (const id of parkedOrders) await client.workflow.getHandle(id).terminate('test over').catch(() => undefined);
  await user?.stop();
  rmSync(WORK, { recursive: true, force: true });
});

describe('turnpike replay', () => {
  it('replays 20 parked and 20 ended turns, and their orders, against the user\'s workflows file', async () => {
    const run = await cli(['replay', '--query', `TaskQueue="${taskQueue}"`, '--since', '1d', '--workflows', USER_WORKFLOWS]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const checked = run.stdout.split('\n').filter((line) => line.startsWith('ok'));
    expect(checked).toHaveLength(80);
    for (const id of parkedOrders) {
      expect(checked.some((line) => line.includes(` ${id} `))).toBe(true);
      expect(checked.some((line) => line.includes(` ${id}/agent `))).toBe(true);
    }
    expect(run.stdout).toContain('80 histories checked, 0 did not replay');
  });

  it('exits 1 naming the history and the event after a non-deterministic change, and the saved set fails the same way offline', async () => {
    const source = readFileSync(USER_WORKFLOWS, 'utf8');
    const changed = source.replace("const workflowId = `${wf.workflowInfo().workflowId}/agent`;", "const workflowId = `${wf.workflowInfo().workflowId}/agent`;\n  await wf.sleep('1s');");
    expect(changed).not.toBe(source);
    writeFileSync(USER_WORKFLOWS, changed);

    const run = await cli(['replay', '--query', `TaskQueue="${taskQueue}" AND WorkflowType="orderDesk"`, '--workflows', USER_WORKFLOWS, '--save', SAVED]);
    expect(run.code).toBe(1);
    const failure = /turnpike: error: (order-(?:parked|ended)-\S+) \(run [0-9a-f-]+\) does not replay at event (\d+): (.+)/.exec(run.stderr);
    expect(failure, run.stderr).not.toBeNull();
    expect(failure![3]).toMatch(/[Nn]ondeterminism|TMPRL1100/);
    expect(run.stdout).toContain(`FAIL  ${failure![1]}`);
    expect(readdirSync(SAVED).filter((file) => file.endsWith('.json'))).toHaveLength(40);

    // Offline: nothing to connect to, the saved set alone.
    const address = process.env.TEMPORAL_ADDRESS;
    process.env.TEMPORAL_ADDRESS = '127.0.0.1:1';
    try {
      const offline = await cli(['replay', '--from', SAVED, '--workflows', USER_WORKFLOWS], false);
      expect(offline.code).toBe(1);
      expect(offline.stderr).toContain(`${failure![1]} does not replay at event ${failure![2]}`);
      writeFileSync(USER_WORKFLOWS, source);
      const fixed = await cli(['replay', '--from', SAVED, '--workflows', USER_WORKFLOWS], false);
      expect(fixed.code).toBe(0);
      expect(fixed.stdout).toContain('40 histories checked, 0 did not replay');
    } finally {
      if (address === undefined) delete process.env.TEMPORAL_ADDRESS;
      else process.env.TEMPORAL_ADDRESS = address;
    }
  });
});
