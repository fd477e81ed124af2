/**
 * A real Worker on the shared dev server, on a task queue of its own, plus a Client.
 *
 *   const turnpike = await startTurnpike({ tools: demoTools });
 *   ... turnpike.client.workflow.start(agentTurn, { taskQueue: turnpike.taskQueue, ... })
 *   await turnpike.stop();
 */
import { STARTED_BY_MEMO_KEY, TurnpikeClient, type ParkedCall } from '../../client/turnpike-client.js';
import { randomUUID } from 'node:crypto';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { afterAll, beforeAll, beforeEach, inject } from 'vitest';
import { useFakeProviders } from './fake-providers.js';
import type { McpServerConfig } from '../../activities/mcp/mcp-servers.js';
import type { Tool } from '../../activities/tools.js';
import { createTurnpikeDataConverter, turnpikeDataConverter } from '../../content/data-converter.js';
import type { ContentStore } from '../../content/content-store.js';
import { createWorker, type CreateWorkerOptions } from '../../worker/create-worker.js';
import { turnStateQuery } from '../../workflows/messages/definitions.js';
import type { agentTurn } from '../../workflows/index.js';
import type { AgentTurnInput, TurnState } from '../../workflows/types/index.js';
import { noteStarted, saveStarted, snapshotParked } from './history-recorder.js';
import { turnpikeGrpcRetryInterceptor } from '../../connection/query-retry.js';

// The tests provoke activity failures and invalid signals on purpose; the worker logs those at
// WARN with stack traces, which would drown real failures. Errors still show.
// Runtime.install may run once per process; test files run in separate processes.
try {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
} catch {
  // Already installed in this process.
}

export interface TurnpikeHarness {
  client: Client;
  taskQueue: string;
  /** Starts an agentTurn with the scripted demo model unless `model` says otherwise. */
  startTurn(input: Partial<AgentTurnInput> & { text?: string; startedBy?: string }, workflowId?: string): Promise<WorkflowHandle<typeof agentTurn>>;
  /** Starts a second worker on the same task queue (e.g. after `stopWorker`). */
  startWorker(): Promise<void>;
  stopWorker(): Promise<void>;
  stop(): Promise<void>;
}

export async function startTurnpike({
  tools,
  maxCachedWorkflows,
  shutdownGraceTime,
  mcpServers,
  notifications,
  slack,
  contentStore,
  prices,
  models,
  endpoints,
  clouds,
  liveDeltas,
  a2aPushAllow,
  a2aPushSigningKey,
  workerOptions,
}: {
  /** The key A2A push notifications' JWTs are signed with (see `createWorker`); none by default. */
  a2aPushSigningKey?: CreateWorkerOptions['a2aPushSigningKey'];
  /** Private A2A push receivers the worker may reach (see `createWorker`); none by default. */
  a2aPushAllow?: CreateWorkerOptions['a2aPushAllow'];
  /** More options of the Worker (e.g. `sinks`), over the harness's. */
  workerOptions?: CreateWorkerOptions['workerOptions'];
  /** Where streaming model steps push each delta (see `createWorker`). */
  liveDeltas?: CreateWorkerOptions['liveDeltas'];
  /** Bedrock, Vertex AI and Azure OpenAI settings by name (see `createWorker`). */
  clouds?: CreateWorkerOptions['clouds'];
  /** AI SDK models by name, for turns of provider `ai-sdk` (see `createWorker`). */
  models?: CreateWorkerOptions['models'];
  /** Named OpenAI-compatible endpoints (see `createWorker`). */
  endpoints?: CreateWorkerOptions['endpoints'];
  /** Model prices over the built-in table (see `createWorker`). */
  prices?: CreateWorkerOptions['prices'];
  tools: readonly Tool[];
  /** The workers' and the client's content store (default: `TURNPIKE_CONTENT_STORE`'s, `.turnpike/content`). */
  contentStore?: ContentStore;
  maxCachedWorkflows?: number;
  /** How long `stopWorker` lets running activities finish (a graceful restart); none by default. */
  shutdownGraceTime?: string;
  mcpServers?: Record<string, McpServerConfig>;
  /** Webhook nudges for parked calls (see `createWorker`). */
  notifications?: CreateWorkerOptions['notifications'];
  /** Approval messages in Slack (see `createWorker`). */
  slack?: CreateWorkerOptions['slack'];
}): Promise<TurnpikeHarness> {
  const address = inject('temporalAddress');
  const namespace = inject('temporalNamespace');
  const taskQueue = `test-${randomUUID()}`;
  // The retries of every Connection turnpike opens (connection/query-retry.ts): a query refused for
  // a full query buffer is asked again within tens of milliseconds, not after 1.4–2 s; gRPC's
  // default receive limit is kept (tests of large histories read it).
  const connection = await Connection.connect({ address, interceptors: [turnpikeGrpcRetryInterceptor()] });
  const client = new Client({ connection, namespace, dataConverter: contentStore ? createTurnpikeDataConverter({ contentStore }) : turnpikeDataConverter });
  let nativeConnection: NativeConnection | undefined;
  let worker: Worker | undefined;
  let running: Promise<void> | undefined;

  const harness: TurnpikeHarness = {
    client,
    taskQueue,
    async startTurn(input, workflowId = `turn-${randomUUID()}`) {
      // `startedBy`: recorded as TurnpikeClient.startTurn records it, for the HTTP API's reading rights.
      const { text, startedBy, ...rest } = input;
      const turnInput: AgentTurnInput = {
        model: { provider: 'scripted', model: 'demo' },
        messages: text !== undefined ? [{ role: 'user', content: text }] : [],
        ...rest,
      };
      const handle = await client.workflow.start<typeof agentTurn>('agentTurn', {
        taskQueue,
        workflowId,
        args: [turnInput],
        ...(startedBy !== undefined ? { memo: { [STARTED_BY_MEMO_KEY]: startedBy } } : {}),
      });
      noteStarted(handle);
      return handle;
    },
    async startWorker() {
      nativeConnection = await NativeConnection.connect({ address });
      worker = await createWorker({
        tools,
        ...(mcpServers ? { mcpServers } : {}),
        ...(notifications ? { notifications } : {}),
        ...(slack ? { slack } : {}),
        ...(contentStore ? { contentStore } : {}),
        ...(prices ? { prices } : {}),
        ...(models ? { models } : {}),
        ...(endpoints ? { endpoints } : {}),
        ...(clouds ? { clouds } : {}),
        ...(liveDeltas ? { liveDeltas } : {}),
        ...(a2aPushAllow ? { a2aPushAllow } : {}),
        ...(a2aPushSigningKey ? { a2aPushSigningKey } : {}),
        taskQueue,
        connection: nativeConnection,
        namespace,
        workflowBundle: { codePath: inject('workflowBundlePath') },
        workerOptions: {
          ...workerOptions,
          ...(maxCachedWorkflows !== undefined ? { maxCachedWorkflows } : {}),
          ...(shutdownGraceTime !== undefined ? { shutdownGraceTime } : {}),
        },
      });
      running = worker.run();
    },
    async stopWorker() {
      if (worker && worker.getState() === 'RUNNING') worker.shutdown();
      await running;
      // Once: a test that stopped the worker itself is stopped again by its harness's `stop`.
      const closing = nativeConnection;
      nativeConnection = undefined;
      worker = undefined;
      await closing?.close();
    },
    async stop() {
      await saveStarted();
      await harness.stopWorker();
      await connection.close();
    },
  };
  await harness.startWorker();
  return harness;
}

/** Polls `turnState` until `predicate` holds; the turn's real state, never a sleep-and-hope. */
export async function waitForState(
  handle: WorkflowHandle,
  predicate: (state: TurnState) => boolean,
  timeoutMs = 30_000,
): Promise<TurnState> {
  const deadline = Date.now() + timeoutMs;
  let state: TurnState | undefined;
  while (Date.now() < deadline) {
    try {
      state = await handle.query(turnStateQuery);
      if (predicate(state)) return state;
    } catch {
      // The first workflow task may not have run yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`turnState never satisfied the condition; last: ${JSON.stringify(state)}`);
}

/** Waits until the turn has `count` pending calls, and returns them. */
export async function waitForPending(handle: WorkflowHandle, count = 1): Promise<TurnState['pending']> {
  const { pending } = await waitForState(handle, (state) => state.pending.length === count);
  await snapshotParked(handle);
  return pending;
}

/** Waits until `listParkedCalls` (visibility, which lags the turn by moments) lists `count` calls of the turn, and returns them. */
export async function waitForListed(client: TurnpikeClient, turnId: string, count: number): Promise<ParkedCall[]> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const calls = (await client.listParkedCalls()).filter((call) => call.turnWorkflowId === turnId);
    if (calls.length === count) return calls;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`turn ${turnId} never listed ${count} parked call(s)`);
}

/** What `useTurnpikeWithFakes` sets up for a test file: filled in by its `beforeAll`. */
export interface TurnpikeSuite {
  fake: Awaited<ReturnType<typeof useFakeProviders>>;
  turnpike: TurnpikeHarness;
  client: TurnpikeClient;
}

/**
 * The setup most integration files share: the strict fake providers, a Turnpike worker with
 * `options`, and a `TurnpikeClient` on its task queue, started once for the file, stopped after
 * it, and the fakes reset before each test.
 */
export function useTurnpikeWithFakes(options: Parameters<typeof startTurnpike>[0]): TurnpikeSuite {
  const suite = {} as TurnpikeSuite;
  beforeAll(async () => {
    suite.fake = await useFakeProviders();
    suite.turnpike = await startTurnpike(options);
    suite.client = new TurnpikeClient({ client: suite.turnpike.client, taskQueue: suite.turnpike.taskQueue });
  });
  afterAll(async () => {
    await suite.turnpike?.stop();
    await suite.fake?.restore();
  });
  beforeEach(() => suite.fake.reset());
  return suite;
}
