/**
 * What a backend service or an approval dashboard imports: start turns and conversations,
 * inspect them, decide approvals, submit client-tool results, await results.
 *
 *   const turnpike = await TurnpikeClient.connect();          // TEMPORAL_ADDRESS etc.
 *   const { turnWorkflowId } = await turnpike.sendMessage({ conversationId: 'c-1', text: 'hi', model });
 *
 * Every message goes through the definitions in workflows/messages/definitions.ts, never a string name.
 * A validator's rejection surfaces as a `TurnpikeRejectedError` with the workflow's message
 * (rejections.ts).
 *
 * `TurnpikeClient` is the one facade; each part lives in a file of its own: turns (turns.ts),
 * conversations (conversations.ts), listings across turns (listings.ts, decisions.ts), and
 * streams (stream-hub.ts, nested-turn-events.ts, conversation-events.ts, typed-output.ts).
 */
import type { Client, WorkflowHandle } from '@temporalio/client';
import { DEFAULT_TASK_QUEUE, approveToolCallUpdate, conversationStateQuery, delegateApprovalUpdate, historyQuery, submitToolResultUpdate, turnEventsQuery, turnStateQuery } from '../workflows/messages/definitions.js';
import type { LiveAhead, TurnEventRecord } from '../workflows/types/turn-events.js';
import { readConversationEvents, type ConversationStreamEvent } from './conversation-events.js';
import { StreamHub } from './stream-hub.js';
import { ClosedRuns } from './closed-runs.js';
import type { agentConversation, agentTurn } from '../workflows/registered-workflows.js';
import type { BranchTurnResult, ConversationBranches, EditMessageInput, RegenerateInput, Message } from '../workflows/types/index.js';
import type { AgentConversationInput, AgentTurnResult, ApproveToolCallInput, ApproveToolCallResult, DelegateApprovalInput, DelegateApprovalResult, TurnBudget, CallContext, ConversationState, HistoryPage, HistoryPageRequest, SendMessageInput, SendMessageResult, SubmitToolResultResult, TurnState } from '../workflows/types/index.js';
import type { ClientTool, ClientToolResult } from '../activities/tools.js';
import { clientOptionsFromEnvironment, type TurnpikeClientOptions, type TurnpikeConnectOptions } from './client-options.js';
import type { DecisionQuery, TurnDecision } from './decisions.js';
import { listDecisions, listParkedCalls, parkedInTurnTree, STARTED_BY_MEMO_KEY, type ParkedCall, type ParkedCallsOptions } from './listings.js';
import { listParkedPage, type ParkedPage, type ParkedPageOptions } from './expiry-pages.js';
import { TurnpikeNotFoundError, TurnpikeRejectedError, TurnpikeUnavailableError } from './errors.js';
import { readNestedTurnEvents, type NestedReadOptions, type NestedTurnEventRecord } from './nested-turn-events.js';
import { keyOfRef, readVerified, type ContentStore } from '../content/content-store.js';
import { contentStoreFromEnvironment } from '../content/store-from-environment.js';
import { isStoredOutput, readStoredOutput } from '../content/stored-content.js';
import type { z } from 'zod';
import { readOutputStream, typedOutput, type OutputOption, type OutputStreamItem } from './typed-output.js';
import { refuseOversized, rejections } from './rejections.js';
import { capacityWaitOf, type WaitingForCapacity } from './capacity-wait.js';
import { callContext, describeStart, startTurn, turnEventAt, turnResult, type StartRecord, type StartTurnInput, type StartTurnOptions } from './turns.js';
import { weightsProblem, type TurnPriority } from './tenants.js';
import { startTurns, type BatchTurn, type BatchTurnStart, type StartTurnsOptions } from './turn-batch.js';
import { sendMessage } from './conversations.js';
import { branches, editMessage, regenerate, switchBranch } from './conversation-branches.js';
import { turnUpdate } from './closed-turn.js';
import { DEFAULT_PATIENCE_MS } from './transient-wait.js';
import { evaluate, evaluationReport, type EvaluateOptions, type EvaluateResult } from './evaluations.js';
import type { EvaluationReport } from '../workflows/evaluation/evaluation-types.js';
import { forkTurn, listForks, readTurnTranscript, type ForkTurnOptions, type ForkTurnResult, type TurnFork } from './turn-fork.js';

export { TurnpikeNotFoundError, TurnpikeRejectedError, TurnpikeUnavailableError };

export { STARTED_BY_MEMO_KEY, type ParkedCall, type ParkedCallsOptions, type ParkedPage, type ParkedPageOptions };

export type { StartRecord, StartTurnInput, StartTurnOptions, TurnpikeClientOptions, TurnpikeConnectOptions };

export class TurnpikeClient {
  readonly client: Client;
  readonly taskQueue: string;
  /** Fairness weights by tenant (`TurnpikeClientOptions.tenantWeights`). */
  readonly tenantWeights: Readonly<Record<string, number>>;
  /** The task queue of its turns' model calls (`TurnpikeClientOptions.modelTaskQueue`). */
  readonly modelTaskQueue?: string;
  /** How long messages to a turn, and the HTTP API's rights checks, wait out Temporal's failures that pass (`TurnpikeClientOptions.transientPatienceMs`). */
  readonly transientPatienceMs: number;
  /** The readers of event streams through this client share one feed per stream (stream-hub.ts). */
  private readonly streams: StreamHub;
  /** The answers of closed runs, each read once (closed-runs.ts). */
  private readonly closedRuns: ClosedRuns;
  private givenStore?: ContentStore;

  constructor(options: TurnpikeClientOptions) {
    this.client = options.client;
    this.taskQueue = options.taskQueue ?? process.env.TURNPIKE_TASK_QUEUE ?? DEFAULT_TASK_QUEUE;
    this.closedRuns = new ClosedRuns(this.client);
    this.streams = new StreamHub(this.client, options.liveDeltas, this.closedRuns);
    this.givenStore = options.contentStore;
    const weights = options.tenantWeights ?? {};
    const problem = weightsProblem(weights);
    if (problem) throw new TypeError(`Invalid tenantWeights: ${problem}`);
    this.tenantWeights = { ...weights };
    if (options.modelTaskQueue !== undefined) {
      if (typeof options.modelTaskQueue !== 'string' || options.modelTaskQueue.trim() === '') {
        throw new TypeError(`Invalid modelTaskQueue: a task queue name must be a non-empty string (got ${JSON.stringify(options.modelTaskQueue)})`);
      }
      this.modelTaskQueue = options.modelTaskQueue;
    }
    const patience = options.transientPatienceMs ?? DEFAULT_PATIENCE_MS;
    if (!Number.isFinite(patience) || patience < 0) throw new TypeError(`Invalid transientPatienceMs: a number of milliseconds, 0 or more (got ${JSON.stringify(options.transientPatienceMs)})`);
    this.transientPatienceMs = patience;
  }

  /**
   * Connects to the cluster the environment names (`TEMPORAL_ADDRESS`, `TEMPORAL_NAMESPACE`,
   * profiles), with turnpike's data converter over `contentStore` (default: `TURNPIKE_CONTENT_STORE`),
   * on a connection that takes answers as large as Temporal sends (`connectTemporal`).
   */
  static async connect(options: TurnpikeConnectOptions = {}): Promise<TurnpikeClient> {
    return new TurnpikeClient(await clientOptionsFromEnvironment(options));
  }

  /** The content store this client keeps large parts in and reads stored outputs from. */
  get contentStore(): ContentStore {
    this.givenStore ??= contentStoreFromEnvironment();
    return this.givenStore;
  }

  /**
   * A tool output as the model saw it: a {@link StoredOutput} (an output of 128 KiB or more,
   * kept in the content store) read back and checked; any other output as it is.
   */
  async readToolOutput(output: unknown): Promise<unknown> {
    return isStoredOutput(output) ? readStoredOutput(output, this.contentStore) : output;
  }

  /** The bytes a stored image or document (`source.type: 'stored'`) or any `sha256:` reference names, checked against it. */
  async readContent(ref: string): Promise<Uint8Array> {
    const key = keyOfRef(ref);
    if (!key) throw new TypeError(`Not a content reference: ${JSON.stringify(ref)}`);
    return readVerified(this.contentStore, key);
  }

  async close(): Promise<void> {
    await this.client.connection.close();
  }

  // ---- turns ------------------------------------------------------------------------------

  /**
   * Starts a turn. Idempotent by `turnId`: starting the same id again returns the running
   * turn instead of a second one. `tenant` and `priority` place its tasks (client/tenants.ts);
   * an unknown priority or a tenant over 64 bytes is refused (`InvalidRequest`) and nothing starts.
   */
  async startTurn(input: StartTurnInput, options: StartTurnOptions): Promise<WorkflowHandle<typeof agentTurn>> {
    return startTurn(this, input, options);
  }

  /**
   * Starts a batch of turns, at most `concurrency` (default 4) at a time, and answers for each in
   * order with its handle or its error (client/turn-batch.ts): one refused turn does not stop the
   * others. More starts in flight do not start a batch sooner on a busy server; they make every
   * other caller wait behind them.
   */
  async startTurns(turns: readonly BatchTurn[], options?: StartTurnsOptions): Promise<BatchTurnStart[]> {
    return startTurns(this, turns, options);
  }

  /**
   * Who started a turn or conversation (recorded by `startTurn`/`sendMessage` with `startedBy`)
   * and the conversation a turn belongs to, from the workflow's description: no query, so it
   * works on any turn, running or ended. Undefined when there is no such workflow.
   */
  async describeStart(workflowId: string): Promise<StartRecord | undefined> {
    return describeStart(this.client, workflowId);
  }

  turn(turnId: string): WorkflowHandle<typeof agentTurn> {
    return this.client.workflow.getHandle<typeof agentTurn>(turnId);
  }

  /**
   * The turn's state. A turn that has ended is read once per run and kept (its state is final):
   * a query of a closed run replays the run on a worker, seconds for a long turn.
   */
  async turnState(turnId: string): Promise<TurnState> {
    return rejections(this.closedRuns.query(turnId, turnStateQuery));
  }

  /**
   * The turn's model step while it waits for model capacity (scheduled on the model queue and not
   * taken by a worker yet): since when, on which queue, which attempt; undefined otherwise (no
   * model step pending, running, on the turn's own queue, or the turn has ended). Read from the
   * workflow's description, one `DescribeWorkflowExecution` per call (no query, no worker): call it
   * when showing a turn, not in a polling loop; `turnState` stays a query and does not include it.
   */
  async waitingForCapacity(turnId: string): Promise<WaitingForCapacity | undefined> {
    return capacityWaitOf(await rejections(this.turn(turnId).describe()));
  }

  /** What an approver needs to decide a parked call (`callContext` query); not found for a call the turn did not make. */
  async callContext(turnId: string, toolCallId: string): Promise<CallContext> {
    return callContext(this.turn(turnId), toolCallId);
  }

  /**
   * Awaits a turn's result. A conversation's queued turn does not exist until the turns ahead
   * of it end; with `waitForStart` this waits for it to start instead of failing as not found.
   */
  async turnResult(turnId: string, options: { waitForStart?: boolean; pollIntervalMs?: number } = {}): Promise<AgentTurnResult> {
    return turnResult(() => this.turn(turnId), options);
  }

  /**
   * The turn's events as they happen — text deltas, tool calls, approval requests, results,
   * step and turn ends (see `TurnEvent`) — from `fromOffset` (default 0) to `turn-finished`.
   * Resume after a disconnect with `fromOffset: last.offset + 1`: every later event arrives
   * exactly once. Works while the turn runs, while it is parked, and after it ended.
   *
   * All the readers of one turn through this client share one reader of the turn: any number of
   * them costs the turn the queries of one, and no history and no update.
   *
   * With `live: true` and the client's `liveDeltas` channel, deltas come as the model writes
   * them: such a record carries `live` (its `offset` is the last durable event's before it), and
   * a reader resumes after any record with `{ fromOffset: offset + 1, liveAhead: live }`.
   */
  turnEvents(turnId: string, options: { fromOffset?: number; signal?: AbortSignal; live?: boolean; liveAhead?: LiveAhead[] } = {}): AsyncGenerator<TurnEventRecord, void, undefined> {
    const { live, ...read } = options;
    const isLast = (event: TurnEventRecord['event']) => event.type === 'turn-finished';
    return live ? this.streams.readLive(turnId, turnEventsQuery, { ...read, isLast }) : this.streams.read(turnId, turnEventsQuery, { ...read, isLast });
  }

  /**
   * A turn's typed answer (`output`) as the schema's type, parsed by zod: waits for the turn to
   * end; throws `TurnpikeOutputError` when it ended without one (e.g. `invalid-output`).
   */
  async turnOutput<Schema extends z.ZodType>(turnId: string, schema: Schema): Promise<z.output<Schema>> {
    return typedOutput(await this.turnResult(turnId), schema);
  }

  /**
   * A typed answer as partial objects while the model writes it (from the turn's text deltas;
   * needs the `ai` package), then `finished` with the validated `output`, parsed by `schema`
   * when given. Only the answering step counts: a step that calls tools starts it over.
   */
  outputStream<Schema extends z.ZodType | undefined = undefined>(
    turnId: string,
    options: { schema?: Schema; signal?: AbortSignal } = {},
  ): AsyncGenerator<OutputStreamItem<Schema extends z.ZodType ? z.output<Schema> : unknown>, void, undefined> {
    const { schema, signal } = options;
    type Output = Schema extends z.ZodType ? z.output<Schema> : unknown;
    const parse = (output: unknown): Output => (schema ? (schema as z.ZodType).parse(output) : output) as Output;
    return readOutputStream(this.turnEvents(turnId, signal ? { signal } : {}), parse);
  }

  /**
   * `turnEvents` with the events of the child turns its agent tool calls start, nested under the
   * calling tool call (`parentToolCallId`, `turnId`, `path`; see nested-turn-events.ts). Ends once
   * the turn and every child it followed have finished. Resume after a disconnect with
   * `after: last.cursor`: every later event of the turn and of each child arrives exactly once,
   * children that were running included. A malformed cursor, or one that names no child of this
   * turn, throws `NestedCursorError`. `fromOffset` reads the turn's own stream from there and
   * follows only the children started from there on. With `live: true` the turn's and each
   * child's deltas come as the model writes them (as `turnEvents`'s); the cursor carries what
   * each stream showed ahead.
   */
  nestedTurnEvents(turnId: string, options: NestedReadOptions = {}): AsyncGenerator<NestedTurnEventRecord, void, undefined> {
    return readNestedTurnEvents((id, read) => this.turnEvents(id, read), (id, offset) => this.turnEventAt(id, offset), turnId, options);
  }

  /** The event at `offset` of a turn's stream, by one query; undefined when the stream holds none there (yet, or any more). */
  async turnEventAt(turnId: string, offset: number): Promise<TurnEventRecord | undefined> {
    return turnEventAt(this.turn(turnId), offset);
  }

  /**
   * Approves or denies a parked call. Rejected (unknown, decided, expired, not allowed...) as
   * `TurnpikeRejectedError`; one that reaches the turn as it closes, or after, as the turn's record
   * of the call says (`ApprovalAlreadyDecided`, ...; client/closed-turn.ts). While Temporal is
   * slow (no worker answers in time, the server refuses for load) the decision is sent again, as
   * the same update, for `transientPatienceMs`; then `TurnpikeUnavailableError` (retryable).
   */
  async approveToolCall(turnId: string, decision: ApproveToolCallInput): Promise<ApproveToolCallResult> {
    refuseOversized('approveToolCall', decision);
    const turn = this.turn(turnId);
    return turnUpdate(turn, { approvalId: decision.approvalId }, (updateId) => turn.executeUpdate(approveToolCallUpdate, { args: [decision], updateId }), this.patience(`the decision on approval ${decision.approvalId} of turn ${turnId}`));
  }

  /**
   * Hands a parked approval to named approvers or groups, with a reason: they may then decide it
   * and are nudged; the delegation is recorded on the call (`progress.delegations`) and in its
   * decision. `approver` (who delegates) must be allowed to decide the call.
   */
  async delegateApproval(turnId: string, delegation: DelegateApprovalInput): Promise<DelegateApprovalResult> {
    refuseOversized('delegateApproval', delegation);
    const turn = this.turn(turnId);
    return turnUpdate(turn, { approvalId: delegation.approvalId }, (updateId) => turn.executeUpdate(delegateApprovalUpdate, { args: [delegation], updateId }), this.patience(`the delegation of approval ${delegation.approvalId} of turn ${turnId}`));
  }

  /**
   * Extends a turn's budget: approves its budget approval (`kind: 'budget'` in `turnState().pending`
   * and `listParkedCalls`) by `extendBy` instead of the default it shows. Stop the turn instead with
   * `approveToolCall(turnId, { approvalId, approved: false })`. See docs/budgets.md.
   */
  async extendBudget(turnId: string, approvalId: string, extendBy: TurnBudget, options: { approver?: string; reason?: string } = {}): Promise<ApproveToolCallResult> {
    return this.approveToolCall(turnId, { approvalId, approved: true, input: { extendBy }, ...options });
  }

  /**
   * Submits a client tool's result. Given the tool's definition (`defineClientTool`), `output` is
   * typed from its output schema, as `execute`'s input is from the input schema; the turn checks it
   * against the schema either way. Without one (only the tool's name at hand), `output` is `unknown`:
   *
   *   await turnpike.submitToolResult(turnId, { toolCallId, output: { answer: 'yes' } }, askUser);
   *   await turnpike.submitToolResult(turnId, { toolCallId, output });
   *
   * `_tool` is read for its type only: nothing about it is sent or checked here.
   */
  async submitToolResult<Tool extends ClientTool = ClientTool>(
    turnId: string,
    result: ClientToolResult<Tool>,
    _tool?: Tool,
  ): Promise<SubmitToolResultResult> {
    refuseOversized('submitToolResult', result);
    const turn = this.turn(turnId);
    return turnUpdate(turn, { toolCallId: result.toolCallId }, (updateId) => turn.executeUpdate(submitToolResultUpdate, { args: [result], updateId }), this.patience(`the result of tool call ${result.toolCallId} of turn ${turnId}`));
  }

  /** How a message to a turn waits out Temporal's failures that pass (client/transient-wait.ts). */
  private patience(what: string) {
    return { what, patienceMs: this.transientPatienceMs, client: this.client };
  }

  /**
   * Approval decisions on this task queue, newest first: people's, policies', and waits that
   * ended without one (see client/decisions.ts). Reads up to 2,000 turns: a parked turn from its
   * memo (as of visibility, which lags by moments), any other running turn with a `turnState`
   * query, an ended one from its result.
   */
  async listDecisions(query: DecisionQuery = {}): Promise<TurnDecision[]> {
    return listDecisions(this, query);
  }

  /**
   * Every parked call on this task queue (or matching `query`), from visibility alone: each
   * parked turn keeps its parked calls in its memo (workflows/context/pending-memo.ts), which the
   * visibility listing returns, so no turn is queried. Visibility lags the turns by moments: a
   * call decided a moment ago may still be listed (its decision is then refused as already
   * decided), and one parked a moment ago may not be yet; `turnState` is exact for one turn.
   * Turns that parked before memos existed, and calls whose input is too large for the memo,
   * are read with a `turnState` query.
   */
  async listParkedCalls(options: ParkedCallsOptions = {}): Promise<ParkedCall[]> {
    return listParkedCalls(this, options);
  }

  /**
   * A page of the parked calls `listParkedCalls` would list, soonest-expiring turn first: the
   * calls of up to `limit` turns (50 by default), ordered by each turn's soonest decision
   * (`TurnpikeNextExpiry`), then its id, and `next` to pass as `after` for the page after it.
   * Visibility is read in windows of expiry, so a page reads about what it shows, whatever the
   * length of the queue (client/expiry-pages.ts). Turns that publish no expiry (client-side calls
   * only, or started before the attribute) come after the dated ones. Throws `RangeError` for a
   * `limit` out of 1 to 5,000 or an `after` that is not a cursor of this listing.
   */
  async listParkedPage(options: ParkedPageOptions = {}): Promise<ParkedPage> {
    return listParkedPage(this, options);
  }

  // ---- conversations -------------------------------------------------------------------------

  conversation(conversationId: string): WorkflowHandle<typeof agentConversation> {
    return this.client.workflow.getHandle<typeof agentConversation>(conversationId);
  }

  /**
   * Sends a user message; the first one creates the conversation (update-with-start) with
   * `conversation` as its settings. A later message may leave `conversation` out: it is sent to
   * the running conversation, and refused (`InvalidRequest`, naming `conversation`) when there is
   * none. Returns at once with the new turn's workflow id. Idempotent by `messageId`.
   */
  async sendMessage(
    request: Omit<SendMessageInput, 'output'> & {
      /** A typed answer for this message's turn only (docs/typed-output.md): zod or JSON Schema. */
      output?: OutputOption;
      conversationId: string;
      /** The settings the conversation is created with; needed by its first message only. */
      conversation?: Omit<AgentConversationInput, 'carried' | 'conversationId'>;
      /** Recorded as the conversation's starter when this message creates it (see `describeStart`). */
      startedBy?: string;
      /** The tenant the conversation runs for, when this message creates it; its turns carry it on. */
      tenant?: string;
      /** The conversation's priority (`interactive`, `normal`, `batch`), when this message creates it. */
      priority?: TurnPriority;
    },
  ): Promise<SendMessageResult> {
    return sendMessage(this, request);
  }

  /**
   * Answers a user message again (default the current branch's last; `turn` names another) on a
   * new branch that becomes current, with `options` for the new turn only. A running or parked
   * turn is superseded first; the old answer stays readable as a branch (docs/conversations.md).
   */
  async regenerate(conversationId: string, request: RegenerateInput = {}): Promise<BranchTurnResult> {
    return regenerate(this.conversation(conversationId), request);
  }

  /** Replaces user message `messageId` on a new branch that becomes current, sharing the history before it, and answers it. */
  async editMessage(conversationId: string, request: EditMessageInput): Promise<BranchTurnResult> {
    return editMessage(this.conversation(conversationId), request, this.contentStore);
  }

  /** The conversation's branches and the current one; `history(id, { branch })` reads any of them. */
  async branches(conversationId: string): Promise<ConversationBranches> {
    return branches(this.conversation(conversationId));
  }

  /** Makes another branch current; refused while a turn runs or is queued. */
  async switchBranch(conversationId: string, branch: string): Promise<ConversationBranches> {
    return switchBranch(this.conversation(conversationId), branch);
  }

  /**
   * Starts a new turn from another turn's transcript up to the end of step `atStep` (every tool
   * result of steps 1..atStep carried, none run again), with another model, system or tools.
   */
  async forkTurn(turnId: string, options: ForkTurnOptions): Promise<ForkTurnResult> {
    return forkTurn(this, turnId, options);
  }

  /**
   * A turn's whole transcript: the history it was given, then what it appended; a fork's prefix
   * read from the turn it was forked from, which the fork's own `transcript` query only names.
   */
  async turnTranscript(turnId: string): Promise<Message[]> {
    return readTurnTranscript(this.client, turnId);
  }

  /**
   * Starts an evaluation run: the turns (by `query` or `turnIds`) re-run with `change` on the
   * evaluation queue, their tools answered from their records (docs/evaluations.md).
   */
  async evaluate(options: EvaluateOptions): Promise<EvaluateResult> {
    return evaluate(this, options);
  }

  /** An evaluation run's report: so far while it runs, whole once it is done. */
  async evaluationReport(evaluationId: string): Promise<EvaluationReport> {
    return evaluationReport(this.client, evaluationId);
  }

  /** The forks started from `turnId`, oldest first (visibility: a new fork shows a moment later). */
  async forks(turnId: string): Promise<TurnFork[]> {
    return listForks(this.client, turnId);
  }

  async history(conversationId: string, page: HistoryPageRequest = {}): Promise<HistoryPage> {
    return rejections(this.conversation(conversationId).query(historyQuery, page));
  }

  async conversationState(conversationId: string): Promise<ConversationState> {
    return rejections(this.conversation(conversationId).query(conversationStateQuery));
  }

  /**
   * The conversation's events, turn after turn (`turn-started`, the turn's own events,
   * `turn-ended`), across its continue-as-new; it never ends by itself — stop with `signal` or
   * `break`. Resume after a disconnect with `after: last.cursor`.
   */
  conversationEvents(conversationId: string, options: { after?: string; signal?: AbortSignal } = {}): AsyncGenerator<ConversationStreamEvent, void, undefined> {
    return readConversationEvents((workflowId, query, read) => this.streams.read(workflowId, query, read), conversationId, options);
  }

  /**
   * The parked calls of a conversation's running turn: what its approvers must decide now. With
   * those of the child turns its agent tool calls started (`parentTurnId` names their parent),
   * followed down from the turn's `turnState().children`.
   */
  async conversationPending(conversationId: string): Promise<ParkedCall[]> {
    const state = await this.conversationState(conversationId);
    if (!state.currentTurn) return [];
    return parkedInTurnTree(this, state.currentTurn.turnWorkflowId, { conversationId });
  }
}
