/**
 * Turning fairness on for a live task queue on Temporal server 1.29.1 (the CLI's dev server), as
 * docs/tenants-and-capacity.md ("Caution on server 1.29.1") tells an operator to, and what happens
 * when the check is skipped. Each case has a dev server of its own on a SQLite file, stopped and
 * started again on the same file and port with `matching.enableFairness` changed: the dev server
 * reads dynamic config only at start, where a cluster would pick the change up as it runs. The
 * history service saves how far it has handed its tasks to matching every second here (every 30 s
 * by default): a restart before that hands them again, and a workflow task handed again after
 * the switch lands in the new table, which a switch in a running cluster never does.
 *
 * a. The safe switch: turns parked on a person's approval, with the worker running, leave nothing
 *    waiting in the queue (`taskQueueBacklog` and `turnpike queue backlog` say 0). Fairness goes
 *    on; the worker, running throughout, serves the decisions sent through `TurnpikeClient`:
 *    every turn completes, each approved tool ran once, and turns started after the switch for
 *    tenants at priorities complete too.
 * b. What the check guards against: turns started while no worker polls leave their first
 *    workflow tasks waiting (the check says so and exits 5). Fairness goes on, a worker starts:
 *    those tasks stay undispatched while a turn started after the switch completes. With fairness
 *    off again they are dispatched and the turns complete.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { taskQueueBacklog, type TaskQueueBacklog } from '../../client/queue-backlog.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { turnpikeDataConverter } from '../../content/data-converter.js';
import { freePort, startDevServer, type DevServer } from '../../scripts/dev-server.js';
import { createWorker } from '../../worker/create-worker.js';
import { cliRunner } from '../support/cli-runner.js';
import { executionsOf, testTools, use } from '../support/test-tools.js';
import { waitForPending } from '../support/turnpike-harness.js';

try {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
} catch {
  // Already installed in this process.
}

const { EventType } = temporal.api.enums.v1;
const MODEL = { provider: 'scripted', model: 'demo' } as const;
const LOOKUP = { model: MODEL, messages: [{ role: 'user' as const, content: 'look up order 1001' }] };
/** How long a stranded backlog is watched for a dispatch while the worker serves the queue. */
const STRANDED_FOR_MS = 15_000;
/** How often the history service saves its transfer queue's progress (default 30 s), and a wait past it. */
const HANDED_OVER = { dynamicConfig: { 'history.transferProcessorUpdateAckInterval': '1s' }, savedWithinMs: 3_000 };

let directory: string;
beforeAll(() => {
  directory = mkdtempSync(path.join(tmpdir(), 'turnpike-fairness-live-'));
});
afterAll(() => rmSync(directory, { recursive: true, force: true }));

/** A dev server on one SQLite file and port, started again with fairness on or off; a client on it, a worker that outlives restarts. */
class LiveServer {
  server?: DevServer;
  connection?: Connection;
  turnpike?: TurnpikeClient;
  private native?: NativeConnection;
  private worker?: Worker;
  private running?: Promise<void>;

  private constructor(
    private readonly port: number,
    private readonly dbFile: string,
    readonly taskQueue: string,
  ) {}

  static async create(name: string): Promise<LiveServer> {
    return new LiveServer(await freePort(), path.join(directory, `${name}.sqlite`), `${name}-${randomUUID()}`);
  }

  async start(fairness: boolean): Promise<TurnpikeClient> {
    this.server = await startDevServer({ port: this.port, dbFile: this.dbFile, log: () => undefined, dynamicConfig: { ...HANDED_OVER.dynamicConfig, 'matching.enableFairness': fairness } });
    this.connection = await Connection.connect({ address: this.server.address });
    this.turnpike = new TurnpikeClient({ client: new Client({ connection: this.connection, namespace: this.server.namespace, dataConverter: turnpikeDataConverter }), taskQueue: this.taskQueue });
    return this.turnpike;
  }

  /** Stops the server; the worker, if running, keeps polling and reconnects when it is back. */
  async stopServer(): Promise<void> {
    await this.connection?.close();
    this.connection = undefined;
    await this.server?.stop();
    this.server = undefined;
  }

  async startWorker(): Promise<void> {
    this.native = await NativeConnection.connect({ address: this.server!.address });
    this.worker = await createWorker({ tools: testTools, taskQueue: this.taskQueue, connection: this.native, namespace: this.server!.namespace, workflowBundle: { codePath: inject('workflowBundlePath') } });
    this.running = this.worker.run();
  }

  workerState(): string | undefined {
    return this.worker?.getState();
  }

  async stop(): Promise<void> {
    if (this.worker?.getState() === 'RUNNING') this.worker.shutdown();
    await this.running?.catch(() => undefined);
    await this.native?.close();
    await this.stopServer();
  }
}

let live: LiveServer | undefined;
afterEach(async () => {
  await live?.stop();
  live = undefined;
});

const { cli } = cliRunner(() => live!.turnpike!);

/** Reads the queue's backlog until `done` holds (the server's counts lag a dispatch by moments); the last read otherwise. */
async function backlogUntil(client: TurnpikeClient, taskQueue: string, done: (backlog: TaskQueueBacklog) => boolean, ms = 15_000): Promise<TaskQueueBacklog> {
  const ends = Date.now() + ms;
  for (;;) {
    const backlog = await taskQueueBacklog(client.client, taskQueue);
    if (done(backlog) || Date.now() > ends) return backlog;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Whether the turn's history has a started workflow task: a worker took one of its tasks. */
async function dispatched(client: TurnpikeClient, turnId: string): Promise<boolean> {
  const { events } = await client.turn(turnId).fetchHistory();
  return (events ?? []).some((event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED);
}

describe('turning fairness on for a live task queue (server 1.29.1)', () => {
  it('is safe with parked turns and no backlog: decisions after the switch complete every turn, each tool once', { timeout: 240_000 }, async () => {
    live = await LiveServer.create('live-a');
    let turnpike = await live.start(false);
    await live.startWorker();
    const parked = Array.from({ length: 3 }, (_, index) => `parked-${index}-${randomUUID()}`);
    for (const [index, turnId] of parked.entries()) {
      await turnpike.startTurn({ model: MODEL, messages: [{ role: 'user', content: use('guarded_action', { target: `target-${index}`, count: index + 1 }) }] }, { turnId, tenant: 'acme' });
    }
    const approvals = new Map<string, string>();
    for (const turnId of parked) approvals.set(turnId, (await waitForPending(turnpike.turn(turnId)))[0]!.approvalId!);

    // The check: parked turns wait on an update, not on a task. Nothing waits, and the worker polls.
    const before = await backlogUntil(turnpike, live.taskQueue, (backlog) => backlog.workflowTasks + backlog.activityTasks === 0 && backlog.pollers > 0);
    expect(before).toEqual({ taskQueue: live.taskQueue, workflowTasks: 0, activityTasks: 0, oldestTaskAgeMs: 0, pollers: 1 });
    const checked = await cli('queue', 'backlog', '--json');
    expect(checked.code, checked.stderr).toBe(0);
    expect(JSON.parse(checked.stdout)).toEqual([before]);
    expect(checked.stderr).toBe('');

    // Bad input: a name no worker uses has no backlog as the server tells it, and the check says
    // that nobody polls it; an empty name is refused before anything is sent.
    const unknown = `no-such-queue-${randomUUID()}`;
    expect(await taskQueueBacklog(turnpike.client, unknown)).toEqual({ taskQueue: unknown, workflowTasks: 0, activityTasks: 0, oldestTaskAgeMs: 0, pollers: 0 });
    const misspelled = await cli('queue', 'backlog', unknown);
    expect(misspelled.code).toBe(0);
    expect(misspelled.stderr).toContain(`no worker has polled ${unknown} lately: is the name right`);
    await expect(taskQueueBacklog(turnpike.client, ' ')).rejects.toThrow(/Invalid task queue: a task queue name must be a non-empty string/);
    const empty = await cli('queue', 'backlog', '');
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('expected a task queue name, not an empty one');

    // The switch, with the worker running throughout.
    await live.stopServer();
    turnpike = await live.start(true);
    for (const turnId of parked) {
      await turnpike.approveToolCall(turnId, { approvalId: approvals.get(turnId)!, approved: true, approver: 'bob' });
    }
    for (const [index, turnId] of parked.entries()) {
      const result = await turnpike.turnResult(turnId);
      expect(result.status).toBe('completed');
      expect(result.toolCalls.map((call) => call.outcome)).toEqual(['approved']);
      expect(executionsOf(turnId).map(({ toolName, input }) => [toolName, input])).toEqual([['guarded_action', { target: `target-${index}`, count: index + 1 }]]);
    }

    // New turns for tenants at priorities, after the switch.
    const fresh = [
      { turnId: `fresh-acme-${randomUUID()}`, tenant: 'acme', priority: 'batch' as const, priorityKey: 5 },
      { turnId: `fresh-globex-${randomUUID()}`, tenant: 'globex', priority: 'interactive' as const, priorityKey: 1 },
    ];
    for (const { turnId, tenant, priority } of fresh) await turnpike.startTurn(LOOKUP, { turnId, tenant, priority });
    for (const { turnId, tenant, priorityKey } of fresh) {
      expect((await turnpike.turnResult(turnId)).status).toBe('completed');
      const { events } = await turnpike.turn(turnId).fetchHistory();
      const priority = events?.[0]?.workflowExecutionStartedEventAttributes?.priority;
      expect({ priorityKey: priority?.priorityKey, fairnessKey: priority?.fairnessKey }).toEqual({ priorityKey, fairnessKey: tenant });
    }
    expect(live.workerState()).toBe('RUNNING');
  });

  it('strands a backlog present at the switch until fairness is off again; the check exits 5 on it', { timeout: 240_000 }, async () => {
    const BACKLOG = 4;
    live = await LiveServer.create('live-b');
    let turnpike = await live.start(false);
    const waiting = Array.from({ length: BACKLOG }, (_, index) => `waiting-${index}-${randomUUID()}`);
    for (const turnId of waiting) await turnpike.startTurn(LOOKUP, { turnId, tenant: 'acme' });

    // No worker polls: the turns' first workflow tasks wait in the queue.
    const before = await backlogUntil(turnpike, live.taskQueue, (backlog) => backlog.workflowTasks === BACKLOG);
    expect(before).toMatchObject({ taskQueue: live.taskQueue, workflowTasks: BACKLOG, activityTasks: 0, pollers: 0 });
    expect(before.oldestTaskAgeMs).toBeGreaterThan(0);
    // The CLI reads the turns' queue and the model queue its environment names.
    const modelQueue = `${live.taskQueue}-models`;
    const withModelQueue = new TurnpikeClient({ client: turnpike.client, taskQueue: live.taskQueue, modelTaskQueue: modelQueue });
    const { cli: cliWithModelQueue } = cliRunner(() => withModelQueue);
    const checked = await cliWithModelQueue('queue', 'backlog', '--json');
    expect(checked.code).toBe(5);
    const listed = JSON.parse(checked.stdout) as TaskQueueBacklog[];
    expect(listed.map(({ taskQueue, workflowTasks, activityTasks }) => ({ taskQueue, workflowTasks, activityTasks }))).toEqual([
      { taskQueue: live.taskQueue, workflowTasks: BACKLOG, activityTasks: 0 },
      { taskQueue: modelQueue, workflowTasks: 0, activityTasks: 0 },
    ]);
    expect(JSON.parse(checked.stderr)).toEqual({
      error: { exitCode: 5, kind: 'backlog', message: `tasks wait on ${live.taskQueue} (${BACKLOG} workflow, 0 activity): turning fairness on now would strand them (server 1.29.1); let the workers drain them first` },
    });
    const text = await cli('queue', 'backlog');
    expect(text.code).toBe(5);
    expect(text.stdout).toMatch(new RegExp(`${live.taskQueue}\\s*│\\s*${BACKLOG}\\s*│\\s*0\\s*│`));
    expect(text.stderr).toContain(`turnpike: backlog: tasks wait on ${live.taskQueue} (${BACKLOG} workflow, 0 activity)`);

    // The switch, skipping the check (once the history service has saved that it handed the tasks over).
    await new Promise((resolve) => setTimeout(resolve, HANDED_OVER.savedWithinMs));
    await live.stopServer();
    turnpike = await live.start(true);
    // The check run now would not see them: the queue reports its new table only.
    const afterSwitch = await taskQueueBacklog(turnpike.client, live.taskQueue);
    console.log(`fairness-live-queue: backlog as reported after the switch: ${JSON.stringify(afterSwitch)}`);
    expect(afterSwitch).toMatchObject({ workflowTasks: 0, activityTasks: 0 });
    await live.startWorker();
    const workerStarted = Date.now();
    const later = `after-switch-${randomUUID()}`;
    await turnpike.startTurn(LOOKUP, { turnId: later, tenant: 'globex' });
    expect((await turnpike.turnResult(later)).status).toBe('completed');
    const laterTook = Date.now() - workerStarted;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, workerStarted + STRANDED_FOR_MS - Date.now())));
    const stranded = await Promise.all(waiting.map(async (turnId) => ({ dispatched: await dispatched(turnpike, turnId), status: (await turnpike.turn(turnId).describe()).status.name })));
    console.log(`fairness-live-queue: a turn after the switch completed in ${laterTook} ms; after ${STRANDED_FOR_MS} ms the backlog's turns: ${JSON.stringify(stranded)}`);
    expect(stranded).toEqual(Array(BACKLOG).fill({ dispatched: false, status: 'RUNNING' }));
    const whileStranded = await taskQueueBacklog(turnpike.client, live.taskQueue);
    console.log(`fairness-live-queue: backlog as reported while stranded: ${JSON.stringify(whileStranded)}`);
    expect(whileStranded).toMatchObject({ workflowTasks: 0, activityTasks: 0 });

    // Fairness off again: the old table's tasks are dispatched, and the turns complete.
    await live.stopServer();
    turnpike = await live.start(false);
    for (const turnId of waiting) expect((await turnpike.turnResult(turnId)).status).toBe('completed');
    expect(await backlogUntil(turnpike, live.taskQueue, (backlog) => backlog.workflowTasks === 0 && backlog.pollers > 0)).toMatchObject({ workflowTasks: 0, activityTasks: 0, pollers: 1 });
    expect(live.workerState()).toBe('RUNNING');
  });
});
