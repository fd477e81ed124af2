/**
 * `createTestEnvironment`: Temporal's time-skipping test server with a turnpike worker on it, and
 * the helpers a test of a user's own tools and policies needs: start a turn on a scripted model,
 * wait for its next parked call, approve, deny, answer a client tool, skip time.
 *
 *   const env = await createTestEnvironment({ tools: [lookupOrder, issueRefund] });
 *   const turn = await env.runTurn({ model: script([[call('issue_refund', { orderId: '1001', amount: 250 })], text('Refunded.')]), prompt: 'Refund 1001' });
 *   await env.approve(await env.nextParked(turn));
 *   expectTurn(await turn.result()).toHaveOutcome('issue_refund', 'approved');
 *   await env.teardown();
 *
 * Everything runs in the test's process but the server (a Java process the kit starts and stops),
 * and nothing reaches a network but that server on localhost. The helpers read one turn at a time
 * (`turnState`), never visibility, which the test server does not have.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Duration } from '@temporalio/common';
import proto from '@temporalio/proto';
import { Client } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, type WorkerOptions } from '@temporalio/worker';
import { TurnpikeClient, type StartTurnInput } from '../client/turnpike-client.js';
import { FileContentStore } from '../content/file-content-store.js';
import { createTurnpikeDataConverter } from '../content/data-converter.js';
import type { ContentStore } from '../content/content-store.js';
import { TurnpikePlugin, type TurnpikePluginOptions } from '../worker/plugin.js';
import { SEARCH_ATTRIBUTE_TYPES } from '../workflows/context/search-attributes.js';
import type { AgentTurnResult, ApproveToolCallResult, Message, ModelSettings, PendingToolCall, SubmitToolResultResult, TurnState } from '../workflows/types/index.js';
import { forgetScript, scriptRequests } from '../activities/providers/script.js';
import type { Tool } from '../activities/tools.js';
import { isScript, type Script } from './script.js';
import { ensureTestServer } from './test-server.js';
import { startTestServerProcess, type TestServerProcess } from './test-server-process.js';
import { awaitTurnResult, waitForParked } from './turn-clock.js';
import { cachedWorkflowBundle } from './workflow-bundle-cache.js';

export interface TestEnvironmentOptions extends Omit<TurnpikePluginOptions, 'tools' | 'contentStore'> {
  /** The tools turns may offer, as the application's worker has them. */
  tools: readonly Tool[];
  /** Default: a fresh folder under the system's temp folder, removed at teardown. */
  contentStore?: ContentStore;
  /** Default `turnpike-test`. */
  taskQueue?: string;
  /**
   * Your own workflows module (one that re-exports `agentTurn` and `agentConversation` beside your
   * workflows); default turnpike's. Or a prebuilt bundle in `workerOptions.workflowBundle`.
   */
  workflowsPath?: string;
  /** Any other option of the worker. */
  workerOptions?: Partial<Omit<WorkerOptions, 'connection' | 'namespace' | 'taskQueue' | 'activities'>>;
  /** The test server's launcher (default: `TURNPIKE_TEST_SERVER`, else found or fetched by `ensureTestServer`). */
  testServer?: string;
  /** How long the server may take to listen (default 120 s: a JVM on a loaded machine is slow to start). */
  startupTimeoutMs?: number;
}

/** A turn the environment started. */
export interface TestTurn {
  readonly turnId: string;
  /** The script it runs on, when it runs on one. */
  readonly script?: Script;
  /**
   * Waits for the turn's result. While the turn (or a child turn of it) has a call parked, the
   * server's clock moves to that call's expiry, so an undecided call expires at once; it moves no
   * further, so calls parked in other turns with a later expiry stay parked.
   */
  result(): Promise<AgentTurnResult>;
  /** The turn's state now (`turnState`). */
  state(): Promise<TurnState>;
  /** The transcript each of its script's steps was asked with, step by step. */
  requests(): Message[][];
}

/** A call parked in a turn, as `nextParked` found it. */
export interface TestParkedCall extends PendingToolCall {
  turnId: string;
}

/** What `runTurn` takes: a turn's input, with a script as its model and a prompt as its one message. */
export type TestTurnInput = Omit<StartTurnInput, 'model' | 'messages'> & {
  model: Script | ModelSettings;
  /** The user message; or `messages`, the history ending with it. */
  prompt?: string;
  messages?: Message[];
  /** Default `turn-<n>`. */
  turnId?: string;
};

const INDEXED_VALUE_TYPES = {
  Keyword: proto.temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  KeywordList: proto.temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
  Datetime: proto.temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_DATETIME,
} as const;

export class TestEnvironment {
  private turnCount = 0;
  private readonly seen = new Map<string, Set<string>>();
  private readonly scripts = new Set<string>();

  private constructor(
    /** The SDK's environment: its `client`, `nativeConnection`, `currentTimeMs()`. */
    readonly temporal: TestWorkflowEnvironment,
    /** A `TurnpikeClient` on the test server. */
    readonly turnpike: TurnpikeClient,
    /** A TurnpikeClient whose waits do not run the server's clock (see turn-clock.ts). */
    private readonly still: TurnpikeClient,
    private readonly worker: Worker,
    private readonly running: Promise<void>,
    private readonly ownedStore: string | undefined,
    private readonly serverProcess: TestServerProcess,
  ) {}

  static async create(options: TestEnvironmentOptions): Promise<TestEnvironment> {
    const { tools, contentStore, taskQueue = 'turnpike-test', workflowsPath, workerOptions, testServer, startupTimeoutMs, ...pluginOptions } = options;
    const executable = testServer ?? (await ensureTestServer());
    const ownedStore = contentStore ? undefined : mkdtempSync(path.join(tmpdir(), 'turnpike-test-content-'));
    const store = contentStore ?? new FileContentStore(ownedStore!);
    const plugin = new TurnpikePlugin({ ...pluginOptions, tools, contentStore: store });
    // Bundled (or read from the cache) while the server starts.
    const bundling = bundleFor(workflowsPath, workerOptions);
    bundling?.catch(() => undefined);
    const serverProcess = await startTestServerProcess(executable, startupTimeoutMs !== undefined ? { startupTimeoutMs } : {});
    let server: TestWorkflowEnvironment;
    try {
      // What `createTimeSkipping` does, on the server started above: the SDK (1.24) starts its own
      // with a 5 s limit, too short for a JVM on a loaded machine, and has no public way to time-skip
      // on a server it did not start.
      server = await (TestWorkflowEnvironment as unknown as { create(options: unknown): Promise<TestWorkflowEnvironment> }).create({
        server: { type: 'existing' },
        address: serverProcess.address,
        namespace: 'default',
        supportsTimeSkipping: true,
        client: { dataConverter: createTurnpikeDataConverter({ contentStore: store }) },
      });
    } catch (error) {
      await serverProcess.stop();
      if (ownedStore) rmSync(ownedStore, { recursive: true, force: true });
      throw error;
    }
    try {
      // turnpike's search attributes, which a turn sets as it runs (the test server lists nothing by them).
      await server.connection.operatorService.addSearchAttributes({
        namespace: server.namespace ?? 'default',
        searchAttributes: Object.fromEntries(Object.entries(SEARCH_ATTRIBUTE_TYPES).map(([name, type]) => [name, INDEXED_VALUE_TYPES[type]])),
      });
      const worker = await Worker.create({
        connection: server.nativeConnection,
        namespace: server.namespace ?? 'default',
        taskQueue,
        ...(bundling ? { workflowBundle: await bundling } : workflowsPath ? { workflowsPath } : {}),
        ...workerOptions,
        plugins: [plugin, ...(workerOptions?.plugins ?? [])],
      });
      const running = worker.run();
      const turnpike = new TurnpikeClient({ client: server.client, taskQueue, contentStore: store });
      const plain = new Client({ connection: server.connection, namespace: server.namespace ?? 'default', dataConverter: createTurnpikeDataConverter({ contentStore: store }) });
      const still = new TurnpikeClient({ client: plain, taskQueue, contentStore: store });
      return new TestEnvironment(server, turnpike, still, worker, running, ownedStore, serverProcess);
    } catch (error) {
      await server.teardown();
      await serverProcess.stop();
      if (ownedStore) rmSync(ownedStore, { recursive: true, force: true });
      throw error;
    }
  }

  /** Starts a turn; `await turn.result()` for its end. */
  async runTurn(input: TestTurnInput): Promise<TestTurn> {
    const { model, prompt, messages, turnId = `turn-${++this.turnCount}`, ...rest } = input;
    const script = isScript(model) ? model : undefined;
    if (script) this.scripts.add(script.model.model);
    const history = messages ?? (prompt !== undefined ? [{ role: 'user' as const, content: prompt }] : undefined);
    if (!history) throw new TypeError('runTurn: give a prompt or messages');
    await this.turnpike.startTurn({ ...rest, model: script ? script.model : (model as ModelSettings), messages: history }, { turnId });
    const turnpike = this.turnpike;
    return {
      turnId,
      ...(script ? { script } : {}),
      result: () => awaitTurnResult(this.temporal, this.still, turnId),
      state: () => turnpike.turnState(turnId),
      requests: () => (script ? scriptRequests(script.model.model) : []),
    };
  }

  /**
   * The turn's next parked call (an approval, a client tool, a budget, an elicitation) that no
   * earlier `nextParked` of this turn returned, as soon as the turn parks it: also for a turn not
   * started yet, such as the child turn of your own workflow (`'<workflow id>/agent'`). Fails when
   * the turn ends first, or after `timeoutMs` of wall time (default 60 s).
   */
  async nextParked(turn: TestTurn | string, options: { kind?: PendingToolCall['kind']; timeoutMs?: number } = {}): Promise<TestParkedCall> {
    const turnId = typeof turn === 'string' ? turn : turn.turnId;
    const seen = this.seen.get(turnId) ?? new Set<string>();
    this.seen.set(turnId, seen);
    const call = await waitForParked(this.still, turnId, (pending) => !seen.has(parkedKey(pending)) && (!options.kind || pending.kind === options.kind), options.timeoutMs ?? 60_000);
    seen.add(parkedKey(call));
    return { ...call, turnId };
  }

  /** Approves a parked call, as `approver` (default `test-approver`), optionally with an edited `input`. */
  async approve(call: TestParkedCall, options: { approver?: string; approverGroups?: string[]; reason?: string; input?: unknown } = {}): Promise<ApproveToolCallResult> {
    return this.decide(call, true, options);
  }

  /** Denies a parked call with a reason the model is told. */
  async deny(call: TestParkedCall, reason?: string, options: { approver?: string; approverGroups?: string[] } = {}): Promise<ApproveToolCallResult> {
    return this.decide(call, false, { ...options, ...(reason !== undefined ? { reason } : {}) });
  }

  /** Answers a parked client tool's call (or an elicitation's) with its output. */
  async submitToolResult(call: TestParkedCall, output: unknown, options: { isError?: boolean } = {}): Promise<SubmitToolResultResult> {
    return this.turnpike.submitToolResult(call.turnId, { toolCallId: call.toolCallId, output, ...(options.isError ? { isError: true } : {}) } as never);
  }

  /** Skips the server's clock: `await env.sleep('25h')` expires a 24-hour approval at once. */
  async sleep(duration: Duration): Promise<void> {
    await this.temporal.sleep(duration);
  }

  /** Stops the worker and the server and removes the content folder the environment made. */
  async teardown(): Promise<void> {
    try {
      this.worker.shutdown();
      await this.running;
    } finally {
      await this.temporal.teardown();
      await this.serverProcess.stop();
      for (const model of this.scripts) forgetScript(model);
      if (this.ownedStore) rmSync(this.ownedStore, { recursive: true, force: true });
    }
  }

  private async decide(call: TestParkedCall, approved: boolean, options: { approver?: string; approverGroups?: string[]; reason?: string; input?: unknown }): Promise<ApproveToolCallResult> {
    if (!call.approvalId) throw new TypeError(`approve/deny: ${call.toolName}'s call is parked as ${call.kind}, which takes submitToolResult`);
    return this.turnpike.approveToolCall(call.turnId, {
      approvalId: call.approvalId,
      approved,
      approver: options.approver ?? 'test-approver',
      inputHash: call.inputHash,
      ...(options.approverGroups ? { approverGroups: options.approverGroups } : {}),
      ...(options.reason !== undefined ? { reason: options.reason } : {}),
      ...(options.input !== undefined ? { input: options.input } : {}),
    });
  }
}

function parkedKey(call: PendingToolCall): string {
  return `${call.kind}:${call.approvalId ?? ''}:${call.toolCallId}:${call.elicitationId ?? ''}`;
}

/**
 * The bundle the worker runs: a prebuilt one given in `workerOptions.workflowBundle` as is (none
 * made here); else the cached bundle of `workflowsPath` or turnpike's workflows
 * (workflow-bundle-cache.ts), unless worker options change what goes into a bundle, in which
 * case the worker bundles `workflowsPath` itself, as before.
 */
function bundleFor(workflowsPath: string | undefined, workerOptions: TestEnvironmentOptions['workerOptions']): Promise<{ code: string }> | undefined {
  if (workerOptions?.workflowBundle) return undefined;
  const shapesBundle =
    workerOptions?.bundlerOptions !== undefined ||
    (workerOptions?.interceptors?.workflowModules?.length ?? 0) > 0 ||
    workerOptions?.dataConverter?.payloadConverterPath !== undefined ||
    workerOptions?.dataConverter?.failureConverterPath !== undefined ||
    (workerOptions?.plugins ?? []).some((plugin) => 'configureBundler' in plugin && plugin.configureBundler !== undefined);
  if (shapesBundle && workflowsPath) return undefined;
  return cachedWorkflowBundle(workflowsPath);
}

/** Starts the time-skipping server and a turnpike worker on it (see `TestEnvironment`). */
export function createTestEnvironment(options: TestEnvironmentOptions): Promise<TestEnvironment> {
  return TestEnvironment.create(options);
}
