/**
 * Deploying while a turn is parked, with Temporal's Worker Versioning (worker deployments) on
 * the real dev server: a turn parks on build 'old', build 'new' becomes the deployment's current
 * version, build 'old' stops, and then the decision arrives (docs/versioning.md).
 *
 * Both builds run the same workflow bundle; their `deploy_marker` tool says which build ran it,
 * so the turn's result proves where the step after the decision ran. The history's completed
 * workflow tasks say the same from the server's side.
 */
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import type { VersioningBehavior } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../activities/tools.js';
import { TurnpikeClient } from '../../client/index.js';
import { turnpikeDataConverter } from '../../content/data-converter.js';
import { createWorker } from '../../worker/create-worker.js';
import { turnStateQuery } from '../../workflows/messages/definitions.js';
import type { agentTurn } from '../../workflows/index.js';
import type { AgentTurnResult } from '../../workflows/types/index.js';
import { use } from '../support/test-tools.js';
import { waitForPending } from '../support/turnpike-harness.js';

try {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
} catch {
  // Already installed in this process (the harness installs the same).
}

type Build = 'old' | 'new';

/** An approval-gated tool whose output names the build whose worker ran it. */
function markerTool(build: Build) {
  return defineTool({
    name: 'deploy_marker',
    description: 'Records which build ran it.',
    inputSchema: z.object({ note: z.string() }),
    approval: true,
    async execute(input) {
      return { ranOn: build, note: input.note };
    },
  });
}

let connection: Connection;
let client: Client;
beforeAll(async () => {
  connection = await Connection.connect({ address: inject('temporalAddress') });
  client = new Client({ connection, namespace: inject('temporalNamespace'), dataConverter: turnpikeDataConverter });
});
afterAll(async () => connection?.close());

interface RunningWorker {
  worker: Worker;
  stop(): Promise<void>;
}
const running = new Set<RunningWorker>();
afterEach(async () => {
  await Promise.all([...running].map((entry) => entry.stop()));
});

/** A turnpike worker of one build in `deploymentName`, with Worker Versioning on. */
async function startBuild(taskQueue: string, deploymentName: string, build: Build, behavior: VersioningBehavior): Promise<RunningWorker> {
  const nativeConnection = await NativeConnection.connect({ address: inject('temporalAddress') });
  const worker = await createWorker({
    tools: [markerTool(build)],
    taskQueue,
    connection: nativeConnection,
    namespace: inject('temporalNamespace'),
    workflowBundle: { codePath: inject('workflowBundlePath') },
    workerOptions: {
      workerDeploymentOptions: {
        version: { deploymentName, buildId: build },
        useWorkerVersioning: true,
        defaultVersioningBehavior: behavior,
      },
    },
  });
  const run = worker.run();
  const entry: RunningWorker = {
    worker,
    async stop() {
      running.delete(entry);
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await run;
      await nativeConnection.close();
    },
  };
  running.add(entry);
  return entry;
}

/**
 * Makes `buildId` the deployment's current version. The server knows a deployment and a version
 * only once a worker of it has polled (until then: FAILED_PRECONDITION "no Worker Deployment
 * found", NOT_FOUND "Version not found in deployment"), so this retries.
 */
async function setCurrent(deploymentName: string, buildId: Build): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await client.workflowService.setWorkerDeploymentCurrentVersion({
        namespace: inject('temporalNamespace'),
        deploymentName,
        buildId,
        identity: 'deploy-across-park test',
      });
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

/** The build of every completed workflow task, in order, with the behavior it reported. */
async function completedTaskBuilds(workflowId: string): Promise<Array<{ buildId: string; behavior: string }>> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const { VersioningBehavior: Behavior } = temporal.api.enums.v1;
  return (history.events ?? []).flatMap((event) => {
    const attributes = event.workflowTaskCompletedEventAttributes;
    if (!attributes) return [];
    return [{ buildId: attributes.deploymentVersion?.buildId ?? '', behavior: Behavior[attributes.versioningBehavior ?? 0] ?? '' }];
  });
}

async function startParkedTurn(taskQueue: string) {
  const handle = await client.workflow.start<typeof agentTurn>('agentTurn', {
    taskQueue,
    workflowId: `deploy-${randomUUID()}`,
    args: [{ model: { provider: 'scripted', model: 'demo' }, messages: [{ role: 'user', content: use('deploy_marker', { note: 'refund 42' }) }] }],
  });
  const [pending] = await waitForPending(handle);
  expect(pending).toMatchObject({ kind: 'approval', toolName: 'deploy_marker' });
  return { handle, approvalId: pending.approvalId! };
}

function markerOutput(result: AgentTurnResult): unknown {
  return result.toolCalls.find((call) => call.toolName === 'deploy_marker')?.output;
}

/** Settles with 'pending' when `promise` has not settled within `ms`. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | 'pending'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'pending'>((resolve) => {
    timer = setTimeout(() => resolve('pending'), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

describe('a turn parked across a deploy (Worker Versioning)', () => {
  it('auto-upgrade: the parked turn moves to the new build and is decided there', async () => {
    const taskQueue = `deploy-${randomUUID()}`;
    const deploymentName = `turnpike-${randomUUID()}`;
    const turnpike = new TurnpikeClient({ client, taskQueue });
    const oldBuild = await startBuild(taskQueue, deploymentName, 'old', 'AUTO_UPGRADE');
    await setCurrent(deploymentName, 'old');
    const { handle, approvalId } = await startParkedTurn(taskQueue);

    // The deploy: the new build starts and becomes current, then the old build stops.
    await startBuild(taskQueue, deploymentName, 'new', 'AUTO_UPGRADE');
    await setCurrent(deploymentName, 'new');
    await oldBuild.stop();

    await turnpike.approveToolCall(handle.workflowId, { approvalId, approved: true, approver: 'alice' });
    const result = await handle.result();
    expect(result.status).toBe('completed');
    expect(markerOutput(result)).toEqual({ ranOn: 'new', note: 'refund 42' });

    const builds = await completedTaskBuilds(handle.workflowId);
    expect(builds[0]).toEqual({ buildId: 'old', behavior: 'VERSIONING_BEHAVIOR_AUTO_UPGRADE' });
    expect(builds.at(-1)).toEqual({ buildId: 'new', behavior: 'VERSIONING_BEHAVIOR_AUTO_UPGRADE' });
    const { raw } = await handle.describe();
    expect(raw.workflowExecutionInfo?.versioningInfo?.deploymentVersion?.buildId).toBe('new');
  });

  it('pinned: the parked turn stays on its build, waits while that build is gone, and is decided on it', async () => {
    const taskQueue = `deploy-${randomUUID()}`;
    const deploymentName = `turnpike-${randomUUID()}`;
    const turnpike = new TurnpikeClient({ client, taskQueue });
    const oldBuild = await startBuild(taskQueue, deploymentName, 'old', 'PINNED');
    await setCurrent(deploymentName, 'old');
    const { handle, approvalId } = await startParkedTurn(taskQueue);

    await startBuild(taskQueue, deploymentName, 'new', 'PINNED');
    await setCurrent(deploymentName, 'new');
    await oldBuild.stop();

    // The decision (and a query) waits for a worker of the turn's own build: the new build never takes it.
    const decided = turnpike.approveToolCall(handle.workflowId, { approvalId, approved: true, approver: 'alice' });
    decided.catch(() => undefined);
    expect(await within(decided, 5_000)).toBe('pending');
    expect(await within(handle.result(), 1_000)).toBe('pending');
    const asked = handle.query(turnStateQuery);
    asked.catch(() => undefined);
    expect(await within(asked, 2_000)).toBe('pending');

    // The old build comes back (as a deploy that keeps it until its turns drain would keep it).
    await startBuild(taskQueue, deploymentName, 'old', 'PINNED');
    await expect(decided).resolves.toMatchObject({ approvalId });
    await expect(asked).resolves.toHaveProperty('status');
    const result = await handle.result();
    expect(result.status).toBe('completed');
    expect(markerOutput(result)).toEqual({ ranOn: 'old', note: 'refund 42' });

    const builds = await completedTaskBuilds(handle.workflowId);
    expect(builds.length).toBeGreaterThan(1);
    expect(builds.every((build) => build.buildId === 'old' && build.behavior === 'VERSIONING_BEHAVIOR_PINNED')).toBe(true);
    const { raw } = await handle.describe();
    expect(raw.workflowExecutionInfo?.versioningInfo?.deploymentVersion?.buildId).toBe('old');
  });
});
