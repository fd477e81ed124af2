/**
 * `agentTurn`: one conversation turn of an LLM agent.
 *
 * The loop calls the model, settles every tool call of the step (in parallel: run, park for
 * a decision, or park for the client's result) and calls the model again only when every
 * call has exactly one result, appended in the model's call order. Parked calls wait on
 * updates (and same-named signals) for hours or days; the workflow holds no worker memory
 * meanwhile and survives worker and server restarts.
 *
 * Deterministic code only: all I/O is in activities; time and ids come from the SDK.
 */
import * as wf from '@temporalio/workflow';
import { msToNumber } from '@temporalio/common';
import type { TurnpikeActivities } from '../activities/index.js';
import { acceptedDecision, acceptedResult, checkDecision, checkResult, SchemaCache } from './call-checks.js';
import { CallLedger, type CallEntry, type CallKind } from './call-ledger.js';
import { cutOffSettlement, cutOffStatus, hasContent } from './cut-off-step.js';
import {
  approveToolCallSignal,
  approveToolCallUpdate,
  awaitElicitationAnswerUpdate,
  elicitationAnswerQuery,
  parkElicitationUpdate,
  submitToolResultSignal,
  submitToolResultUpdate,
  supersedeTurnSignal,
  turnFinishedSignal,
  callContextQuery,
  turnEventsQuery,
  transcriptQuery,
  modelToolsQuery,
  turnStateQuery,
} from './definitions.js';
import { EventStream } from './event-stream.js';
import { Elicitations, type ElicitationAnswer } from './elicitations.js';
import { inputHash } from './input-hash.js';
import { setQueryHandler, setSignalHandler, setUpdateHandler } from './message-handlers.js';
import { describeShapeError, supersedeTurnInputSchema } from './message-schemas.js';
import { binaryPartsProblem } from './binary-parts.js';
import { modelSettingsProblem } from './model-settings.js';
import { PENDING_MEMO_KEY, pendingMemo } from './pending-memo.js';
import { recordDecision, startPark, type ParkOutcome } from './park-telemetry.js';
import { INVALID_TURN_INPUT } from './rejection-types.js';
import { rejection } from './rejection.js';
import { agentConversationIdKey, agentPendingToolsKey, agentTurnStatusKey } from './search-attributes.js';
import { renameRepeatedToolCallIds, toolCallIdsIn } from './tool-call-ids.js';
import { toolSetHash } from './tool-set.js';
import { Transcript } from './transcript.js';
import { deniedMessage, errorSettlement, type Settlement } from './tool-results.js';
import type { TurnEvent } from './turn-events.js';
import { addUsage } from './usage.js';
import type {
  ActivityCallOptions,
  ApprovalNotification,
  DecisionRecord,
  CallContext,
  CallContextRequest,
  AgentTurnInput,
  AgentTurnResult,
  ApprovalRecord,
  AssistantMessage,
  CutOffStep,
  Message,
  ModelStepRequest,
  ModelStepResult,
  ModelToolSpec,
  PendingToolCall,
  ToolCallDisposition,
  ToolCallPart,
  ToolCallRecord,
  ToolResultPart,
  ToolSpec,
  TurnFinishedInput,
  TurnState,
  TurnStatus,
  Usage,
} from './types.js';

const DEFAULT_MAX_STEPS = 10;
const DEFAULT_PARK_TIMEOUT = '24h';

/**
 * Marks histories in which a cut-off model step (`length` / `content-filter`) ends the turn.
 * `patched()` is only reached on such a step, so histories without one replay unchanged, and a
 * turn that had a cut-off step before this change (its calls ran or parked, and it went on)
 * replays, and continues, as it did.
 */
const CUT_OFF_STEP_PATCH = 'cut-off-step-ends-turn';

/**
 * Marks turns that publish their events on a workflow stream and ask the model activity to
 * stream its deltas there. Checked once, at the start: a turn recorded before streaming existed
 * replays without a stream (its model activities' input stays as it was), and its subscribers
 * see nothing rather than a partial story.
 */
const STREAMING_PATCH = 'turn-event-stream';

/**
 * Marks turns that keep their parked calls in the workflow memo (see `pending-memo.ts`), publish
 * visibility once per workflow task, and leave a park's expiry timer running once the call is
 * resolved instead of cancelling it. Asked as a turn starts (see `run` for why not only at its
 * first park, where it was first asked), so a turn recorded before this change keeps the
 * commands it had.
 */
const PARK_MEMO_PATCH = 'park-memo';

/**
 * Marks histories whose model steps carry the transcript by reference (`transcript.ts`) instead
 * of the whole conversation. Asked once, as the turn starts: a turn recorded before replays, and
 * goes on, with the whole transcript in every step. Not asked at the first model step: that
 * follows a local activity, and a workflow task can end between the two; on replay the local
 * activity's result is applied before the SDK learns of a marker in the next task, so
 * `patched()` would answer false there and the replay would fail.
 */
const HISTORY_BY_REFERENCE_PATCH = 'history-by-reference';

/** Webhook nudges: a receiver that is down is retried with backoff for about a quarter of an hour. */
const { notifyApprovers } = wf.proxyActivities<TurnpikeActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m', maximumAttempts: 20, nonRetryableErrorTypes: ['WebhookRejected'] },
});

const { describeTools, prepareToolCalls } = wf.proxyLocalActivities<TurnpikeActivities>({
  startToCloseTimeout: '30s',
  retry: { maximumAttempts: 3 },
});

function toRetryPolicy(options: ActivityCallOptions | undefined, fallbackAttempts: number): wf.ActivityOptions['retry'] {
  return { maximumAttempts: fallbackAttempts, ...options?.retry } as wf.ActivityOptions['retry'];
}

function modelActivity(options: ActivityCallOptions | undefined) {
  return wf.proxyActivities<TurnpikeActivities>({
    startToCloseTimeout: options?.startToCloseTimeout ?? '5m',
    ...(options?.heartbeatTimeout ? { heartbeatTimeout: options.heartbeatTimeout } : {}),
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m', ...toRetryPolicy(options, 10) },
  }).callModel;
}

function toolActivity(spec: ToolSpec) {
  const options = spec.activityOptions;
  return wf.proxyActivities<TurnpikeActivities>({
    startToCloseTimeout: options?.startToCloseTimeout ?? '60s',
    ...(options?.heartbeatTimeout ? { heartbeatTimeout: options.heartbeatTimeout } : {}),
    retry: toRetryPolicy(options, 3),
  }).executeTool;
}

/** The turn's input is invalid: the turn fails at once (there is no caller to refuse). */
function invalidInput(message: string): never {
  throw wf.ApplicationFailure.nonRetryable(message, INVALID_TURN_INPUT);
}

export async function agentTurn(input: AgentTurnInput): Promise<AgentTurnResult> {
  const turn = new Turn(input);
  turn.installHandlers();
  let result: AgentTurnResult;
  try {
    result = await turn.run();
  } catch (error) {
    if (!wf.isCancellation(error)) {
      await notifyConversation(input, { turnWorkflowId: wf.workflowInfo().workflowId, failure: error instanceof Error ? error.message : String(error) });
      throw error;
    }
    result = await wf.CancellationScope.nonCancellable(() => turn.finishCancelled());
  }
  await wf.CancellationScope.nonCancellable(() => notifyConversation(input, { turnWorkflowId: wf.workflowInfo().workflowId, result }));
  return result;
}

/**
 * A turn started by a conversation tells it how it ended. By signal to the conversation's
 * workflow id, not by the conversation awaiting a child handle: the conversation may have
 * continued-as-new while this turn was parked.
 */
async function notifyConversation(input: AgentTurnInput, finished: TurnFinishedInput): Promise<void> {
  const parent = wf.workflowInfo().parent;
  if (!parent || input?.notifyParent === false) return;
  try {
    await wf.getExternalWorkflowHandle(parent.workflowId).signal(turnFinishedSignal, finished);
  } catch (error) {
    wf.log.warn('Could not tell the conversation that this turn ended', { conversation: parent.workflowId, error: String(error) });
  }
}

class Turn {
  private status: TurnStatus = 'running';
  private step = 0;
  /** Every tool call of this turn: kind, parked or not, resolution, result. */
  private readonly ledger = new CallLedger();
  private readonly appended: Message[] = [];
  /** The given history and `appended`, as the model activity reads it (by reference). */
  private readonly transcript: Transcript;
  /** Set as the turn starts: whether model steps go by reference (`HISTORY_BY_REFERENCE_PATCH`). */
  private byReference = false;
  private readonly records: ToolCallRecord[] = [];
  /** Set when the worker sends approval nudges (webhooks); read once, at the turn's start. */
  private nudges?: { expiringBeforeMs: number };
  /** Nudges not yet delivered: the turn waits for them before it ends, so none is lost. */
  private readonly nudgesInFlight: Array<Promise<void>> = [];
  /** Every approval decision, as it happens: the audit trail `turnState` and the result carry. */
  private readonly decisions: DecisionRecord[] = [];
  private readonly usage: Usage = { inputTokens: 0, outputTokens: 0 };
  private specs = new Map<string, ToolSpec>();
  /** What the model is told about the turn's tools, for the `modelTools` query; set once they are described. */
  private modelTools: ModelToolSpec[] = [];
  private readonly schemas = new SchemaCache();
  /** The calls of the step in progress, so a cancellation can settle whatever is still open. */
  private openStep?: ToolCallPart[];
  private lastSearchAttributes = '';
  private lastMemo = '';
  /** Whether this turn runs the park path of PARK_MEMO_PATCH; decided as it starts, or at its first park (see `run`). */
  private parkMemo?: boolean;
  private publishQueued = false;
  /** Set by supersedeTurn: no further tool runs or parks, and the turn ends after this step. */
  private superseded?: { reason: string; messageId?: string };
  /** Set when a cut-off step ended the turn. */
  private cutOff?: CutOffStep;
  /** The turn's event stream; absent in turns recorded before streaming. */
  private stream?: EventStream<TurnEvent>;
  /** Questions MCP servers asked while a call ran (see elicitations.ts). */
  private readonly elicitations: Elicitations;

  constructor(private readonly input: AgentTurnInput) {
    this.transcript = new Transcript(Array.isArray(input?.messages) ? input.messages : [], this.appended);
    this.elicitations = new Elicitations(input?.clientToolTimeout ?? DEFAULT_PARK_TIMEOUT, () => this.setStatus(this.waiting() ? 'awaiting-input' : 'running'));
  }

  /** Whether anything waits for a person: a parked call, or a running call's question. */
  private waiting(): boolean {
    return this.ledger.hasParked() || this.elicitations.hasOpen();
  }

  /** A call whose tool is running now (not parked, not settled), which may ask a question. */
  private runningCall(toolCallId: string): { toolName: string; input: unknown } | undefined {
    const entry = this.ledger.get(toolCallId);
    if (!entry || entry.kind !== 'server' || entry.parked || entry.settlement) return undefined;
    return { toolName: entry.call.toolName, input: entry.validatedInput ?? entry.call.input };
  }

  /** `submitToolResult` for a call with an open question answers the question. */
  private answerElicitation(request: { toolCallId?: unknown; output?: unknown }, check: boolean): { toolCallId: string; acceptedAt: string } | undefined {
    const open = typeof request?.toolCallId === 'string' ? this.elicitations.openFor(request.toolCallId) : undefined;
    if (!open) return undefined;
    // The validator checked it; the handler trusts it, as handlers do here (validators do not run on replay).
    const answer: ElicitationAnswer = check ? this.elicitations.checkAnswer(open, request.output) : trustedAnswer(request.output);
    this.elicitations.answer(open, answer);
    return { toolCallId: open.toolCallId, acceptedAt: now() };
  }

  installHandlers(): void {
    if (wf.patched(STREAMING_PATCH)) this.stream = new EventStream<TurnEvent>(turnEventsQuery);
    wf.setHandler(turnStateQuery, () => this.state());
    setQueryHandler(callContextQuery, (request) => this.callContext(request));
    wf.setHandler(transcriptQuery, (request) => this.transcript.page(request));
    wf.setHandler(modelToolsQuery, () => this.modelTools);
    setUpdateHandler(approveToolCallUpdate, (request) => this.ledger.applyDecision(acceptedDecision(this.ledger, request), now()), {
      validator: (request) => {
        checkDecision(this.ledger, request, this.schemas);
      },
    });
    setUpdateHandler(
      submitToolResultUpdate,
      (request) => this.answerElicitation(request, false) ?? this.ledger.applyResult(acceptedResult(this.ledger, request), now()),
      {
        validator: (request) => {
          const open = typeof request?.toolCallId === 'string' ? this.elicitations.openFor(request.toolCallId) : undefined;
          if (open) this.elicitations.checkAnswer(open, request.output);
          else checkResult(this.ledger, request, this.schemas);
        },
      },
    );
    setUpdateHandler(parkElicitationUpdate, (request) => this.elicitations.park(request, this.runningCall(request.toolCallId)!), {
      validator: (request) => this.elicitations.checkPark(request, (toolCallId) => this.runningCall(toolCallId)),
    });
    wf.setHandler(elicitationAnswerQuery, (elicitationId) => this.elicitations.state(elicitationId));
    setUpdateHandler(awaitElicitationAnswerUpdate, (elicitationId) => this.elicitations.awaitAnswer(elicitationId), {
      validator: (elicitationId) => this.elicitations.checkAwait(elicitationId),
    });
    // Signals carry the same messages for the Temporal CLI. A bad one must never fail the
    // workflow task: it is logged and dropped (one that does not decode or is over a size
    // limit by setSignalHandler, see message-handlers.ts; one the checks refuse by acceptSignal).
    setSignalHandler(approveToolCallSignal, (request) => this.acceptSignal('approveToolCall', () => {
      this.ledger.applyDecision(checkDecision(this.ledger, request, this.schemas), now());
    }));
    setSignalHandler(submitToolResultSignal, (request) => this.acceptSignal('submitToolResult', () => {
      if (!this.answerElicitation(request, true)) this.ledger.applyResult(checkResult(this.ledger, request, this.schemas), now());
    }));
    setSignalHandler(supersedeTurnSignal, (request) => this.acceptSignal('supersedeTurn', () => this.supersede(request)));
  }

  async run(): Promise<AgentTurnResult> {
    this.byReference = wf.patched(HISTORY_BY_REFERENCE_PATCH);
    // Asked as the turn starts, and again at its first park if the answer here was no. Only the
    // first matters for new turns. A first park follows the prepareToolCalls local activity, and
    // when that activity outlasts a workflow task (a loaded worker), replay applies its result
    // before the SDK learns of a marker recorded with it, so `patched()` there could answer
    // differently on replay. Turns that parked before this question moved here recorded the
    // marker at their first park, and the second question keeps them replaying.
    if (wf.patched(PARK_MEMO_PATCH)) this.parkMemo = true;
    this.validateInput();
    this.publishSearchAttributes();
    const described = await describeTools({ names: this.input.tools });
    // A bare list from workers without nudges, and from every turn recorded before nudges existed.
    const specs = Array.isArray(described) ? described : described.specs;
    this.nudges = Array.isArray(described) ? undefined : described.notifications;
    this.specs = new Map(specs.map((spec) => [spec.name, spec]));
    const callModel = modelActivity(this.input.modelCallOptions);
    const modelTools = specs.map(({ name, description, inputSchema }) => ({ name, description, inputSchema }));
    this.modelTools = modelTools;
    // Turns that send their transcript by reference send their tools by reference too (tool-set.ts).
    const toolsHash = this.byReference ? toolSetHash(modelTools) : undefined;
    const maxSteps = this.input.maxSteps ?? DEFAULT_MAX_STEPS;

    let lastText = '';
    const seenToolCallIds = toolCallIdsIn(this.input.messages);
    while (this.step < maxSteps) {
      this.step++;
      const request: ModelStepRequest = {
        model: this.input.model,
        ...(this.input.system !== undefined ? { system: this.input.system } : {}),
        // The tools inline with the steps whose worker most likely lacks the transcript (and so
        // them), read before `nextStep` marks the transcript sent.
        ...(toolsHash === undefined || this.transcript.uncached ? { tools: modelTools } : {}),
        ...(toolsHash !== undefined ? { toolsHash } : {}),
        ...(this.byReference
          ? { transcript: this.transcript.nextStep() }
          : { messages: [...this.input.messages, ...this.appended] }),
        ...(this.stream ? { stream: { step: this.step } } : {}),
      };
      const response: ModelStepResult = await callModel(request);
      addUsage(this.usage, response.usage);
      const { message, renamed } = renameRepeatedToolCallIds(response.message, seenToolCallIds);
      // An instant step's deltas, which its activity did not signal (activities/step-stream.ts).
      for (const event of response.unsentEvents ?? []) this.publish(event);
      this.publish({
        type: 'step-finished',
        step: this.step,
        finishReason: response.finishReason,
        usage: response.usage,
        toolCalls: message.content.filter((part) => part.type === 'tool-call').length,
      });
      const cutOff = cutOffStatus(response.finishReason);
      if (cutOff && wf.patched(CUT_OFF_STEP_PATCH)) return this.finishCutOff(cutOff, message, response);
      this.appended.push(message);
      lastText = textOf(message.content);
      const calls = message.content.filter((part): part is ToolCallPart => part.type === 'tool-call');
      if (calls.length === 0) return this.finish('completed', lastText);
      const results = await this.settleStep(calls, renamed);
      this.appended.push({ role: 'tool', content: results });
      if (this.superseded) return this.finish('cancelled', lastText);
    }
    return this.finish('max-steps', lastText);
  }

  private validateInput(): void {
    const { input } = this;
    if (!input || typeof input !== 'object') invalidInput('agentTurn input must be an object');
    if (!input.model || typeof input.model.provider !== 'string' || typeof input.model.model !== 'string') {
      invalidInput('agentTurn input.model must be { provider, model }');
    }
    // Only fields that are present are checked: inputs without provider options (every turn
    // recorded before they existed) pass exactly as before, so their histories replay.
    const modelProblem = modelSettingsProblem(input.model);
    if (modelProblem) invalidInput(`agentTurn input.${modelProblem}`);
    if (!Array.isArray(input.messages) || input.messages.length === 0) {
      invalidInput('agentTurn input.messages must be a non-empty list ending with the new user message');
    }
    // Histories recorded before images and documents existed hold none, so this passes for them.
    const binaryProblem = binaryPartsProblem(input.messages, input.model.provider);
    if (binaryProblem) invalidInput(`agentTurn input.${binaryProblem}`);
    if (input.maxSteps !== undefined && (!Number.isInteger(input.maxSteps) || input.maxSteps < 1)) {
      invalidInput('agentTurn input.maxSteps must be a positive integer');
    }
  }

  /** Settles every call of one step; resolves when each has exactly one result. */
  private async settleStep(calls: ToolCallPart[], repeated: Set<string>): Promise<ToolResultPart[]> {
    this.openStep = calls;
    const known = calls.filter((call) => this.specs.has(call.toolName) && !repeated.has(call.toolCallId));
    const dispositions = known.length > 0
      ? await prepareToolCalls({ calls: known.map(({ toolCallId, toolName, input }) => ({ toolCallId, toolName, input })) })
      : [];
    const byCall = new Map(known.map((call, index) => [call, dispositions[index]]));

    await Promise.all(
      calls.map(async (call) => {
        const disposition = byCall.get(call);
        const kind: CallKind = disposition?.kind === 'client' ? 'client' : disposition ? 'server' : 'other';
        const entry = this.ledger.add(call, kind, disposition && 'input' in disposition ? disposition.input : undefined);
        this.publish({
          type: 'tool-call',
          step: this.step,
          toolCallId: call.toolCallId,
          toolName: call.toolName,
          input: disposition && 'input' in disposition ? disposition.input : call.input,
          ...(disposition?.kind === 'invalid' ? { invalid: disposition.error } : {}),
        });
        entry.settlement = await this.settleCall(entry, disposition);
        this.publishResult(call, entry.settlement);
      }),
    );
    this.openStep = undefined;
    // Call order, whatever order they settled in.
    this.records.push(...calls.map((call) => this.ledger.record(call.toolCallId)));
    return calls.map((call) => this.ledger.resultPart(call.toolCallId));
  }

  private async settleCall(entry: CallEntry, disposition: ToolCallDisposition | undefined): Promise<Settlement> {
    const { call } = entry;
    const spec = this.specs.get(call.toolName);
    if (this.superseded) return this.supersededSettlement(entry);
    if (spec && !disposition) {
      return errorSettlement('error', `This call repeated an earlier tool call id, so it was not run. Use a new id for each call.`);
    }
    if (!spec || !disposition) {
      const available = [...this.specs.keys()].join(', ') || '(none)';
      return errorSettlement('error', `Unknown tool "${call.toolName}". Available tools: ${available}.`);
    }
    switch (disposition.kind) {
      case 'invalid':
        return errorSettlement('error', disposition.error);
      case 'execute':
        return this.runTool(spec, call, disposition.input, 'executed');
      case 'decided': {
        const approval: ApprovalRecord = {
          approvalId: this.newApprovalId(),
          approved: disposition.approved,
          automatic: true,
          ...(disposition.reason !== undefined ? { reason: disposition.reason } : {}),
          decidedAt: new Date().toISOString(),
        };
        recordDecision(call.toolName, disposition.approved ? 'approved' : 'denied', true);
        this.decisions.push({
          approvalId: approval.approvalId,
          toolCallId: call.toolCallId,
          toolName: call.toolName,
          outcome: disposition.approved ? 'approved' : 'denied',
          approved: disposition.approved,
          automatic: true,
          ...(disposition.reason !== undefined ? { reason: disposition.reason } : {}),
          decidedAt: approval.decidedAt,
          inputHash: inputHash(disposition.input),
        });
        if (!disposition.approved) return errorSettlement('denied', deniedMessage(call.toolName, disposition.reason), approval);
        return { ...(await this.runTool(spec, call, disposition.input, 'approved')), approval };
      }
      case 'needs-approval':
        return this.awaitApproval(entry, spec, disposition.input, disposition.reason);
      case 'client':
        return this.awaitClientResult(entry, spec, disposition.input);
    }
  }

  private async runTool(spec: ToolSpec, call: ToolCallPart, input: unknown, outcome: 'executed' | 'approved'): Promise<Settlement> {
    try {
      const result = await toolActivity(spec)({
        toolName: call.toolName,
        toolCallId: call.toolCallId,
        input,
        idempotencyKey: `${wf.workflowInfo().workflowId}/${call.toolCallId}`,
      });
      return { outcome: result.isError ? 'error' : outcome, output: result.output, isError: result.isError, input };
    } catch (error) {
      if (wf.isCancellation(error)) throw error;
      // The tool failed after its retries: the model sees why and may try something else.
      const cause = error instanceof wf.ActivityFailure && error.cause ? error.cause.message : String(error);
      return { ...errorSettlement('error', `Tool "${call.toolName}" failed: ${cause}`), input };
    } finally {
      // A question the call asked and nobody answered no longer waits once the call is over.
      this.elicitations.endCall(call.toolCallId);
    }
  }

  private newApprovalId(): string {
    return `apr_${wf.uuid4().replace(/-/g, '')}`;
  }

  /** Parks a call until its resolution arrives or the timeout passes; true if it arrived. */
  /** Sends a webhook nudge without waiting for it; `finish` waits for all of them. */
  private nudge(view: PendingToolCall, event: ApprovalNotification['event'], decision?: DecisionRecord): void {
    if (!this.nudges || !view.approvalId) return;
    const notification: ApprovalNotification = {
      event,
      turnId: wf.workflowInfo().workflowId,
      ...(this.input.conversationId ? { conversationId: this.input.conversationId } : {}),
      approvalId: view.approvalId,
      toolCallId: view.toolCallId,
      toolName: view.toolName,
      input: view.input,
      inputHash: view.inputHash,
      ...(view.reason !== undefined ? { reason: view.reason } : {}),
      requestedAt: view.requestedAt,
      expiresAt: view.expiresAt,
      ...(decision ? { outcome: decision.outcome, decidedAt: decision.decidedAt, ...(decision.approver ? { approver: decision.approver } : {}) } : {}),
    };
    this.nudgesInFlight.push(
      notifyApprovers(notification).catch((error: unknown) => {
        wf.log.warn('An approval nudge could not be delivered', { event, approvalId: view.approvalId, error: String(error) });
      }),
    );
  }

  /** Waits for a resolution; with nudges, sends the "expiring" one `expiringBeforeMs` before the timeout. */
  private async waitForResolution(entry: CallEntry, view: PendingToolCall, timeout: string): Promise<boolean> {
    const timeoutMs = msToNumber(timeout);
    const before = this.nudges && view.approvalId ? this.nudges.expiringBeforeMs : 0;
    const resolved = () => entry.resolution !== undefined;
    const wait = this.parkMemo ? conditionWithinTimer : (fn: () => boolean, ms: number) => wf.condition(fn, ms);
    if (before <= 0 || before >= timeoutMs) return wait(resolved, timeoutMs);
    if (await wait(resolved, timeoutMs - before)) return true;
    this.nudge(view, 'expiring');
    return wait(resolved, before);
  }

  private async park(entry: CallEntry, view: PendingToolCall, spec: ToolSpec, timeout: string): Promise<boolean> {
    this.parkMemo ??= wf.patched(PARK_MEMO_PATCH);
    this.ledger.park(entry, view, spec);
    this.setStatus('awaiting-input');
    const telemetry = startPark(view);
    // On cancellation `condition` throws and the call stays parked, so finishCancelled can tell
    // a call that never ran from one that was running.
    let arrived: boolean;
    try {
      arrived = await this.waitForResolution(entry, view, timeout);
    } catch (error) {
      telemetry.end('cancelled');
      throw error;
    }
    telemetry.end(parkOutcome(entry, arrived), entry.resolution?.kind === 'decision' ? entry.resolution.request.approver : undefined);
    this.ledger.unpark(entry);
    this.transcript.resumed();
    this.setStatus(this.waiting() ? 'awaiting-input' : 'running');
    return arrived;
  }

  private pendingView(kind: PendingToolCall['kind'], call: ToolCallPart, input: unknown, timeout: string, approvalId?: string, reason?: string): PendingToolCall {
    const now = Date.now();
    const spec = kind === 'approval' ? this.specs.get(call.toolName) : undefined;
    return {
      kind,
      ...(approvalId ? { approvalId } : {}),
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      input,
      inputHash: inputHash(input),
      requestedAt: new Date(now).toISOString(),
      expiresAt: new Date(now + msToNumber(timeout)).toISOString(),
      ...(reason !== undefined ? { reason } : {}),
      ...(spec?.approvers ? { approvers: spec.approvers } : {}),
      ...(spec?.approverGroups ? { approverGroups: spec.approverGroups } : {}),
    };
  }

  private async awaitApproval(entry: CallEntry, spec: ToolSpec, input: unknown, policyReason?: string): Promise<Settlement> {
    const { call } = entry;
    const timeout = this.input.approvalTimeout ?? DEFAULT_PARK_TIMEOUT;
    const approvalId = this.newApprovalId();
    const view = this.pendingView('approval', call, input, timeout, approvalId, policyReason);
    this.nudge(view, 'parked');
    this.publish({
      type: 'approval-requested',
      step: this.step,
      approvalId,
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      input,
      inputHash: view.inputHash,
      requestedAt: view.requestedAt,
      expiresAt: view.expiresAt,
      ...(policyReason !== undefined ? { reason: policyReason } : {}),
    });
    const arrived = await this.park(entry, view, spec, timeout);
    const decision = { approvalId, toolCallId: call.toolCallId, toolName: call.toolName, inputHash: view.inputHash };
    if (entry.resolution?.kind === 'superseded') {
      this.noteDecision(view, { ...decision, outcome: 'superseded', approved: false, automatic: true, decidedAt: new Date().toISOString() });
      return this.supersededSettlement(entry);
    }
    if (!arrived || entry.resolution?.kind !== 'decision') {
      this.ledger.settle(entry, 'expired');
      const approval: ApprovalRecord = {
        approvalId,
        approved: false,
        automatic: true,
        reason: `no decision within ${timeout}`,
        decidedAt: new Date().toISOString(),
      };
      this.noteDecision(view, { ...decision, outcome: 'expired', approved: false, automatic: true, reason: approval.reason, decidedAt: approval.decidedAt });
      return errorSettlement('expired', `The approval for "${call.toolName}" expired after ${timeout} without a decision. The tool did not run.`, approval);
    }
    const { request, decidedAt } = entry.resolution;
    const approval: ApprovalRecord = {
      approvalId,
      approved: request.approved,
      automatic: false,
      ...(request.approver !== undefined ? { approver: request.approver } : {}),
      ...(request.reason !== undefined ? { reason: request.reason } : {}),
      decidedAt,
    };
    this.noteDecision(view, {
      ...decision,
      outcome: request.approved ? 'approved' : 'denied',
      approved: request.approved,
      automatic: false,
      ...(request.approver !== undefined ? { approver: request.approver } : {}),
      ...(request.approverGroups !== undefined ? { approverGroups: request.approverGroups } : {}),
      ...(request.reason !== undefined ? { reason: request.reason } : {}),
      decidedAt,
      ...(request.input !== undefined ? { editedInput: request.input } : {}),
    });
    if (!request.approved) return errorSettlement('denied', deniedMessage(call.toolName, request.reason), approval);
    const finalInput = request.input !== undefined ? request.input : input;
    return { ...(await this.runTool(spec, call, finalInput, 'approved')), approval };
  }

  private async awaitClientResult(entry: CallEntry, spec: ToolSpec, input: unknown): Promise<Settlement> {
    const { call } = entry;
    const timeout = this.input.clientToolTimeout ?? DEFAULT_PARK_TIMEOUT;
    const view = this.pendingView('client-tool', call, input, timeout);
    this.publish({
      type: 'client-tool-requested',
      step: this.step,
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      input,
      inputHash: view.inputHash,
      requestedAt: view.requestedAt,
      expiresAt: view.expiresAt,
    });
    const arrived = await this.park(entry, view, spec, timeout);
    if (entry.resolution?.kind === 'superseded') return this.supersededSettlement(entry);
    if (!arrived || entry.resolution?.kind !== 'result') {
      this.ledger.settle(entry, 'expired');
      return errorSettlement('expired', `The client did not return a result for "${call.toolName}" within ${timeout}.`);
    }
    const { request } = entry.resolution;
    return { outcome: 'client', output: request.output ?? null, isError: request.isError === true, input };
  }

  private supersededSettlement(entry: CallEntry): Settlement {
    this.ledger.settle(entry, 'superseded');
    return errorSettlement('cancelled', `Superseded: ${this.superseded!.reason} The call to "${entry.call.toolName}" did not run.`);
  }

  // ---- messages -------------------------------------------------------------------------

  private supersede(raw: unknown): void {
    const shape = supersedeTurnInputSchema().safeParse(raw);
    if (!shape.success) throw rejection('InvalidRequest', `Invalid supersedeTurn: ${describeShapeError(shape.error)}`);
    if (this.superseded) return;
    this.superseded = shape.data;
    this.ledger.supersedeParked();
  }

  private acceptSignal(name: string, apply: () => void): void {
    try {
      apply();
    } catch (error) {
      wf.log.warn(`Ignored an invalid ${name} signal`, { error: error instanceof Error ? error.message : String(error) });
    }
  }

  // ---- state ----------------------------------------------------------------------------

  private callContext(request: CallContextRequest): CallContext {
    const toolCallId = typeof request?.toolCallId === 'string' ? request.toolCallId : '';
    const assistant = this.appended.find(
      (message) => message.role === 'assistant' && message.content.some((part) => part.type === 'tool-call' && part.toolCallId === toolCallId),
    );
    const call = assistant?.role === 'assistant' ? assistant.content.find((part): part is ToolCallPart => part.type === 'tool-call' && part.toolCallId === toolCallId) : undefined;
    if (!assistant || !call) throw new Error(`This turn made no tool call ${toolCallId}`);
    const lastUser = [...(this.input.messages ?? [])].reverse().find((message) => message.role === 'user');
    return {
      toolCallId,
      toolName: call.toolName,
      userMessage: lastUser ? textOf(typeof lastUser.content === 'string' ? [{ type: 'text', text: lastUser.content }] : lastUser.content) : '',
      assistantText: textOf(assistant.content as Array<{ type: string; text?: string }>),
      earlierResults: this.records.map(({ toolCallId: id, toolName, outcome, output, isError }) => ({ toolCallId: id, toolName, outcome, output, isError })),
      inputSchema: this.specs.get(call.toolName)?.inputSchema ?? {},
    };
  }

  private state(): TurnState {
    return {
      status: this.status,
      step: this.step,
      pending: [...this.ledger.pending(), ...this.elicitations.pending()],
      ...(this.input?.conversationId ? { conversationId: this.input.conversationId } : {}),
      ...(this.decisions.length > 0 ? { decisions: this.decisions } : {}),
    };
  }

  private setStatus(status: TurnStatus): void {
    this.status = status;
    if (!this.parkMemo) return this.publishSearchAttributes();
    this.publishSoon();
  }

  /**
   * Publishes once the code this workflow task runs has settled: the calls of a step park (and
   * wake) together, and a woken call notes its decision just after its park returns; each upsert
   * is an event. Two microtask hops let that continuation run first; a decision noted later
   * still asks for its own publish. Microtasks run before the task's commands are sent, so
   * nothing is delayed.
   */
  private publishSoon(): void {
    if (this.publishQueued) return;
    this.publishQueued = true;
    void Promise.resolve()
      .then(() => undefined)
      .then(() => {
        this.publishQueued = false;
        this.publishSearchAttributes();
      });
  }

  /** Upserts only on change: every upsert is an event in history. */
  private publishSearchAttributes(): void {
    if (this.parkMemo) this.publishMemo();
    const asking = this.elicitations.pending().map((view) => view.toolName);
    const pendingTools = asking.length > 0 ? [...new Set([...this.ledger.parkedToolNames(), ...asking])].sort() : this.ledger.parkedToolNames();
    const snapshot = JSON.stringify([this.status, pendingTools]);
    if (snapshot === this.lastSearchAttributes) return;
    const first = this.lastSearchAttributes === '';
    this.lastSearchAttributes = snapshot;
    wf.upsertSearchAttributes([
      { key: agentTurnStatusKey, value: this.status },
      { key: agentPendingToolsKey, value: pendingTools.length > 0 ? pendingTools : null },
      ...(first && this.input.conversationId ? [{ key: agentConversationIdKey, value: this.input.conversationId }] : []),
    ]);
  }

  /** Appends an event to the turn's stream (a no-op in turns recorded before streaming). */
  private publish(event: TurnEvent): void {
    this.stream?.publish(event);
  }

  private publishResult(call: ToolCallPart, settlement: Settlement): void {
    this.publish({
      type: 'tool-result',
      step: this.step,
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      outcome: settlement.outcome,
      output: settlement.output,
      isError: settlement.isError,
      ...(settlement.approval ? { approval: settlement.approval } : {}),
    });
  }

  /**
   * The parked calls and decisions for listings (see `pending-memo.ts`), while the turn is
   * `awaiting-input` and they changed (a decision comes with a change of parked calls, or in the
   * same workflow task as one). Not rewritten when the turn leaves `awaiting-input`: readers trust the
   * memo only with that status, and the status upsert already records the change.
   */
  private publishMemo(): void {
    if (this.status !== 'awaiting-input') return;
    const memo = pendingMemo([...this.ledger.pending(), ...this.elicitations.pending()], this.decisions);
    const snapshot = JSON.stringify(memo);
    if (snapshot === this.lastMemo) return;
    this.lastMemo = snapshot;
    wf.upsertMemo({ [PENDING_MEMO_KEY]: memo });
  }

  /** Records a person's decision, or the end of a wait without one, and nudges about it. */
  private noteDecision(view: PendingToolCall, decision: DecisionRecord): void {
    this.decisions.push(decision);
    if (this.parkMemo) this.publishSoon();
    this.nudge(view, 'decided', decision);
  }

  private async finish(status: AgentTurnResult['status'], text: string): Promise<AgentTurnResult> {
    this.setStatus(status);
    // Nudges still being delivered (a receiver that was down) are retried before the turn ends.
    await Promise.all(this.nudgesInFlight);
    this.publish({ type: 'turn-finished', status, text, steps: this.step, usage: this.usage });
    // Long polls would keep the handlers below from finishing; late readers use the query.
    this.stream?.close();
    // Handlers are synchronous today; waiting keeps that true if one ever awaits.
    await wf.condition(wf.allHandlersFinished);
    return {
      status,
      text,
      messages: this.appended,
      steps: this.step,
      usage: this.usage,
      toolCalls: this.records,
      ...(this.superseded ? { supersededBy: this.superseded.messageId ?? this.superseded.reason } : {}),
      ...(this.cutOff ? { cutOff: this.cutOff } : {}),
      ...(this.decisions.length > 0 ? { decisions: this.decisions } : {}),
    };
  }

  /**
   * A cut-off step ends the turn (see `cut-off-step.ts`): its text is kept as the model wrote it,
   * and none of its tool calls runs or parks; each gets a cancelled result, so the history
   * stays valid input for the next turn.
   */
  private finishCutOff(status: 'max-tokens' | 'refused', message: AssistantMessage, response: ModelStepResult): Promise<AgentTurnResult> {
    if (hasContent(message)) this.appended.push(message);
    const calls = message.content.filter((part): part is ToolCallPart => part.type === 'tool-call');
    for (const call of calls) {
      const entry = this.ledger.add(call, this.specs.get(call.toolName)?.kind ?? 'other');
      this.ledger.settle(entry, 'cut-off');
      entry.settlement = cutOffSettlement(status, call);
      this.publishResult(call, entry.settlement);
    }
    if (calls.length > 0) {
      this.records.push(...calls.map((call) => this.ledger.record(call.toolCallId)));
      this.appended.push({ role: 'tool', content: calls.map((call) => this.ledger.resultPart(call.toolCallId)) });
    }
    this.cutOff = {
      step: this.step,
      finishReason: response.finishReason as CutOffStep['finishReason'],
      ...(response.providerFinishReason !== undefined ? { providerFinishReason: response.providerFinishReason } : {}),
    };
    return this.finish(status, textOf(message.content));
  }

  /** Cancellation: every open call gets a cancelled result, so the history stays valid. */
  async finishCancelled(): Promise<AgentTurnResult> {
    this.elicitations.endAll();
    const calls = this.openStep;
    if (calls) {
      for (const call of calls) {
        // A call the turn had not classified yet (cancelled during prepareToolCalls) joins the ledger now.
        const entry = this.ledger.get(call.toolCallId) ?? this.ledger.add(call, 'other');
        if (entry.settlement) continue;
        this.ledger.settle(entry, 'cancelled');
        const { parked } = entry;
        if (parked?.view.approvalId && !entry.resolution) {
          const { approvalId, toolCallId, toolName, inputHash: shownHash } = parked.view;
          this.noteDecision(parked.view, { approvalId, toolCallId, toolName, outcome: 'cancelled', approved: false, automatic: true, decidedAt: new Date().toISOString(), inputHash: shownHash });
        }
        entry.settlement = errorSettlement(
          'cancelled',
          parked && !entry.resolution
            ? `The turn was cancelled while "${call.toolName}" waited for ${parked.view.kind === 'approval' ? 'approval' : 'the client'}; the tool did not run.`
            : `The turn was cancelled while "${call.toolName}" was running; it may or may not have taken effect.`,
        );
        this.publishResult(call, entry.settlement);
      }
      this.ledger.unparkAll();
      this.records.push(...calls.map((call) => this.ledger.record(call.toolCallId)));
      this.appended.push({ role: 'tool', content: calls.map((call) => this.ledger.resultPart(call.toolCallId)) });
      this.openStep = undefined;
    }
    const last = [...this.appended].reverse().find((message) => message.role === 'assistant');
    return this.finish('cancelled', last && last.role === 'assistant' ? textOf(last.content) : '');
  }
}

function trustedAnswer(output: unknown): ElicitationAnswer {
  const answer = output as { action: ElicitationAnswer['action']; content?: Record<string, unknown> };
  return answer.action === 'accept' ? { action: 'accept', content: answer.content ?? {} } : { action: answer.action };
}

/** Workflow time: the time of the current workflow task, the same on replay. */
function now(): string {
  return new Date().toISOString();
}

/**
 * `wf.condition(fn, ms)` without the timer's cancellation: the SDK cancels the timer when `fn`
 * comes true first, one more event per park. The timer is left to run; if the turn is still
 * running when it fires, that wakes it once for nothing. Cancelling the workflow still cancels
 * both, and the race rejects as before.
 */
function conditionWithinTimer(fn: () => boolean, ms: number): Promise<boolean> {
  return Promise.race([wf.condition(fn).then(() => true), wf.sleep(ms).then(() => false)]);
}

function parkOutcome(entry: CallEntry, arrived: boolean): ParkOutcome {
  const resolution = entry.resolution;
  if (!arrived || !resolution) return 'expired';
  if (resolution.kind === 'decision') return resolution.request.approved ? 'approved' : 'denied';
  return resolution.kind === 'result' ? 'submitted' : 'superseded';
}

/** The reply's text: text parts only, never reasoning, which the provider keeps apart from the answer. */
function textOf(content: Array<{ type: string; text?: string }>): string {
  return content
    .filter((part) => part.type === 'text')
    .map((part) => part.text ?? '')
    .join('');
}
