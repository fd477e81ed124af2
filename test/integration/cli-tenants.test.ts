/**
 * The turnpike CLI's tenants on the real dev server, in-process through `runCli` as in cli.test.ts:
 * `start` and `send` run for a tenant at a priority (the `TurnpikeTenant` search attribute and
 * Temporal's task priority on the start), `pending` and `decisions` list one tenant's, and a bad
 * tenant or priority is a usage error (exit 2) with the client's message, with nothing started.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TurnDecision } from '../../client/decisions.js';
import { TurnpikeClient, type ParkedCall } from '../../client/turnpike-client.js';
import { cliRunner } from '../support/cli-runner.js';
import { testTools, use } from '../support/test-tools.js';
import { startTurnpike, waitForPending, type TurnpikeHarness } from '../support/turnpike-harness.js';

let turnpike: TurnpikeHarness;
let client: TurnpikeClient;
beforeAll(async () => {
  turnpike = await startTurnpike({ tools: testTools });
  client = new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue });
});
afterAll(async () => turnpike?.stop());

const { cli, cliJson } = cliRunner(() => client);

/** Polls `read` until `done` holds: visibility lags a moment. */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const value = await read();
    if (done(value) || attempt >= 100) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function startedPriority(workflowId: string) {
  const { events } = await turnpike.client.workflow.getHandle(workflowId).fetchHistory();
  const priority = events?.[0]?.workflowExecutionStartedEventAttributes?.priority;
  return { priorityKey: priority?.priorityKey ?? 0, fairnessKey: priority?.fairnessKey ?? '' };
}

const GUARDED = use('guarded_action', { target: 'prod', count: 1 });

describe('turnpike CLI with tenants', () => {
  it('starts a turn for a tenant at a priority, and lists one tenant\'s parked calls and decisions', async () => {
    const acme = `cli-acme-${randomUUID()}`;
    const globex = `cli-globex-${randomUUID()}`;
    const started = await cliJson('start', '--model', 'scripted:demo', '--id', acme, '--tenant', 'acme', '--priority', 'interactive', GUARDED);
    expect(started).toEqual({ turnId: acme, taskQueue: turnpike.taskQueue, model: { provider: 'scripted', model: 'demo' }, tenant: 'acme', priority: 'interactive' });
    const text = await cli('start', '--model', 'scripted:demo', '--id', globex, '--tenant', 'globex', '--priority', 'batch', GUARDED);
    expect(text.stdout).toMatch(new RegExp(`^Started ${globex} \\(scripted:demo\\) on task queue \\S+ for tenant globex\\n`));
    expect((await client.describeStart(acme))?.tenant).toBe('acme');
    expect(await startedPriority(acme)).toEqual({ priorityKey: 1, fairnessKey: 'acme' });
    expect(await startedPriority(globex)).toEqual({ priorityKey: 5, fairnessKey: 'globex' });

    const ours = (items: Array<{ turnWorkflowId: string }>) => items.map((item) => item.turnWorkflowId).filter((id) => id === acme || id === globex);
    const calls = await Promise.all([acme, globex].map(async (turnId) => (await waitForPending(client.turn(turnId)))[0]!));
    const acmeParked = await until(() => cliJson<ParkedCall[]>('pending', '--tenant', 'acme'), (listed) => ours(listed).length === 1);
    expect(ours(acmeParked)).toEqual([acme]);
    expect(acmeParked.find((call) => call.turnWorkflowId === acme)?.tenant).toBe('acme');
    expect(ours(await cliJson<ParkedCall[]>('pending', '--tenant', 'globex'))).toEqual([globex]);
    // The table has a tenant column: the row of acme's turn says acme.
    const table = (await cli('pending', '--tenant', 'acme')).stdout.split('\n');
    expect(table.find((line) => line.includes('approvalId'))).toMatch(/│ turn\s+│ tenant\s+│ approvalId/);
    expect(table.find((line) => line.includes(acme))).toMatch(new RegExp(`│ ${acme}\\s+│ acme\\s+│ apr_`));
    expect(ours(await cliJson<ParkedCall[]>('pending', '--tenant', 'initech'))).toEqual([]);

    for (const [index, turnId] of [acme, globex].entries()) {
      expect((await cli('approve', turnId, calls[index]!.approvalId!, '--as', 'alice')).code).toBe(0);
      await client.turnResult(turnId);
    }
    const decided = await until(() => cliJson<TurnDecision[]>('decisions', '--tool', 'guarded_action', '--tenant', 'globex'), (listed) => ours(listed).length === 1);
    expect(ours(decided)).toEqual([globex]);
    expect(ours(await until(() => cliJson<TurnDecision[]>('decisions', '--tenant', 'acme'), (listed) => ours(listed).length === 1))).toEqual([acme]);
  });

  it('sends a conversation\'s first message for a tenant at a priority', async () => {
    const conversationId = `cli-conversation-${randomUUID()}`;
    expect((await cli('send', conversationId, '--model', 'scripted:demo', '--tenant', 'acme', '--priority', 'batch', 'look up order 1001')).code).toBe(0);
    expect((await client.describeStart(conversationId))?.tenant).toBe('acme');
    expect(await startedPriority(conversationId)).toEqual({ priorityKey: 5, fairnessKey: 'acme' });
    await client.conversation(conversationId).terminate('done');
  });

  it('refuses a bad tenant or priority as a usage error with the client\'s message, and starts nothing', async () => {
    const cases = [
      { argv: ['--priority', 'urgent'], message: /unknown priority "urgent"; use one of interactive, normal, batch/ },
      { argv: ['--tenant', 'é'.repeat(33)], message: /tenant is 66 bytes long; Temporal's fairness keys take at most 64 bytes/ },
      { argv: ['--tenant', ' '], message: /tenant must be a non-empty string/ },
    ];
    for (const { argv, message } of cases) {
      const turnId = `cli-bad-${randomUUID()}`;
      const run = await cli('start', '--model', 'scripted:demo', '--id', turnId, ...argv, GUARDED);
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(message);
      expect(await client.turn(turnId).describe().then(() => 'started', () => 'not started')).toBe('not started');
      const conversationId = `cli-bad-${randomUUID()}`;
      const sent = await cli('send', conversationId, ...argv, 'hello');
      expect(sent.code).toBe(2);
      expect(sent.stderr).toMatch(message);
      expect(await client.conversation(conversationId).describe().then(() => 'started', () => 'not started')).toBe('not started');
    }
    for (const command of [['pending'], ['decisions']]) {
      const run = await cli(...command, '--tenant', 'x'.repeat(65));
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(/tenant is 65 bytes long/);
    }
    const both = await cli('pending', '--tenant', 'acme', '--conversation', 'support-1');
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/option '--tenant <tenant>' cannot be used with option '--conversation <conversationId>'/);
  });
});
