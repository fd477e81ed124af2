/**
 * `agentTurn`: one conversation turn of an LLM agent.
 *
 * The loop calls the model, settles every tool call of the step (in parallel: run, park for
 * a decision, or park for the client's result; `settle-step.ts`, `parking.ts`) and calls the
 * model again only when every call has exactly one result, appended in the model's call order.
 * Parked calls wait on updates (and same-named signals; `turn-handlers.ts`) for hours or days;
 * the workflow holds no worker memory meanwhile and survives worker and server restarts. How
 * the turn ends is in `turn-endings.ts`; what it publishes on the way, in `turn-publisher.ts`.
 *
 * Deterministic code only: all I/O is in activities; time and ids come from the SDK. No local
 * activity: see `activities/model-step.ts` and docs/versioning.md.
 */
import * as wf from '@temporalio/workflow';
import type { TurnpikeActivities } from '../../activities/index.js';
import { agentInputProblem } from '../agents/agent-tool-call.js';
import { binaryPartsProblem } from './binary-parts.js';
import { budgetProblem } from '../budgets/budget-spend.js';
import { budgetGate } from './budget-gate.js';
import { remainingGrant, tenantBudgetGate } from './tenant-budget-gate.js';
import { cutOffStatus } from './cut-off-step.js';
import { turnFinishedSignal } from '../messages/definitions.js';
import { modelSettingsProblem } from './model-settings.js';
import { handoffTargetsProblem } from '../agents/handoff-tools.js';
import { finishHandoff } from './handoffs.js';
import { INVALID_TURN_INPUT } from '../messages/rejection-types.js';
import { settleStep, toRetryPolicy } from './settle-step.js';
import { renameRepeatedToolCallIds, toolCallIdsIn } from '../calls/tool-call-ids.js';
import { providerToolEvent, providerToolParts, providerToolRecord } from '../calls/provider-tool-calls.js';
import { modelToolsOf, toolSetHash } from './tool-set.js';
import { textOf, TurnContext } from '../context/turn-context.js';
import { finish, finishCancelled, finishCutOff } from './turn-endings.js';
import { cancelRunningCalls } from './cancel-running-calls.js';
import { budgetResult } from '../budgets/turn-budget.js';
import { FORMER_MIN_HISTORY_LIMIT_BYTES, handOverIfDue, HISTORY_LIMIT_FLOOR_PATCH, historyLimitProblem } from './turn-hand-over.js';
import { installTurnHandlers } from './turn-handlers.js';
import { outputFields, typedOutputOf, type TypedOutput } from '../agents/typed-output.js';
import { addUsage } from '../context/usage.js';
import { activityPlacement } from '../context/tenant-placement.js';
import type {
  ActivityCallOptions,
  AgentTurnInput,
  AgentTurnResult,
  DescribedTools,
  ModelStepRequest,
  ModelStepResult,
  ToolCallPart,
  TurnFinishedInput,
} from '../types/index.js';

const DEFAULT_MAX_STEPS = 10;

export async function agentTurn(input: AgentTurnInput): Promise<AgentTurnResult> {
  const turn = new TurnContext(input);
  installTurnHandlers(turn);
  let result: AgentTurnResult;
  try {
    result = await runSteps(turn);
  } catch (error) {
    if (!wf.isCancellation(error)) {
      // What the turn spent still counts against its conversation's budget (the signal's input only: the same command).
      await notifyConversation(input, { turnWorkflowId: wf.workflowInfo().workflowId, failure: error instanceof Error ? error.message : String(error), ...budgetResult(turn) });
      throw error;
    }
    result = await wf.CancellationScope.nonCancellable(async () => {
      // Children of agent calls settle their own open calls first (agent-tool-call.ts); calls
      // of cancellable tools are cancelled where they run (a remote A2A task; cancel-running-calls.ts).
      await Promise.all([turn.agentCalls.settled(), cancelRunningCalls(turn)]);
      return finishCancelled(turn);
    });
  }
  await wf.CancellationScope.nonCancellable(() => notifyConversation(input, { turnWorkflowId: wf.workflowInfo().workflowId, result }));
  return result;
}

/** The step loop: model, then tools, until the model answers without a call, or a limit ends it. */
async function runSteps(turn: TurnContext): Promise<AgentTurnResult> {
  validateInput(turn.input);
  const typed = typedOutputOf(turn);
  turn.publisher.publishSearchAttributes();
  const callModel = modelActivity(turn.input.modelCallOptions, turn.input.modelTaskQueue);
  const maxSteps = turn.input.maxSteps ?? DEFAULT_MAX_STEPS;

  let lastText = turn.input.carried?.lastText ?? '';
  const seenToolCallIds = toolCallIdsIn([...turn.input.messages, ...turn.appended]);
  // A fork's prefix is not in its messages: its ids come with the reference.
  for (const id of turn.input.forkOf?.toolCallIds ?? []) seenToolCallIds.add(id);
  while (turn.step < maxSteps) {
    // A long turn goes on in a new run before its history nears Temporal's limits.
    const handingOver = handOverIfDue(turn, lastText);
    if (handingOver) await handingOver;
    // With a budget, a limit reached waits for a person (budget-gate.ts); undefined, without awaiting, when none is.
    const beforeStep = budgetGate(turn, lastText);
    const overBudget = beforeStep && (await beforeStep);
    if (overBudget) return overBudget;
    turn.step++;
    const response: ModelStepResult = await callModel(modelStep(turn, typed));
    if (turn.toolsHash === undefined) adoptTools(turn, response.described);
    // The tenant was over its budget over time, so the model was not called: a person decides (tenant-budget-gate.ts).
    const overTenantBudget = response.tenantBudget && tenantBudgetGate(turn, response.tenantBudget, lastText);
    if (overTenantBudget) {
      const ended = await overTenantBudget;
      if (ended) return ended;
      // The same step is asked again (the gate took back its number).
      continue;
    }
    addUsage(turn.usage, response.usage);
    const { message, renamed } = renameRepeatedToolCallIds(response.message, seenToolCallIds);
    // An instant step's deltas, which its activity did not signal (activities/step-stream.ts).
    for (const event of response.unsentEvents ?? []) turn.publisher.publish(event);
    turn.publisher.publish({
      type: 'step-finished',
      step: turn.step,
      finishReason: response.finishReason,
      usage: response.usage,
      toolCalls: message.content.filter((part) => part.type === 'tool-call').length,
    });
    const cutOff = cutOffStatus(response.finishReason);
    if (cutOff) return finishCutOff(turn, cutOff, message, response);
    turn.appended.push(message);
    // Hosted tools the provider ran within the step: recorded and shown, never run or parked here.
    for (const part of providerToolParts(message)) {
      turn.records.push(providerToolRecord(part));
      turn.publisher.publish(providerToolEvent(part, turn.step));
    }
    lastText = textOf(message.content);
    const calls = message.content.filter((part): part is ToolCallPart => part.type === 'tool-call');
    if (calls.length === 0) {
      if (!typed) return finish(turn, 'completed', lastText);
      // A typed answer is checked; an invalid one is sent back while corrections remain (typed-output.ts),
      // unless a newer message superseded the turn.
      const verdict = typed.judge(lastText, !turn.superseded);
      if (verdict.kind === 'corrected') continue;
      return finish(turn, verdict.kind, lastText, outputFields(verdict));
    }
    const beforeCalls = budgetGate(turn, lastText, calls);
    const stopped = beforeCalls && (await beforeCalls);
    if (stopped) return stopped;
    const results = await settleStep(turn, calls, renamed, response.dispositions ?? []);
    turn.appended.push({ role: 'tool', content: results });
    if (turn.handoff) return finishHandoff(turn, lastText);
    if (turn.superseded) return finish(turn, 'cancelled', lastText);
  }
  return finish(turn, 'max-steps', lastText);
}

/**
 * The next model step. The first carries no tools: the activity describes the worker's tools
 * of the names the turn was given and offers them. Later steps name them by hash, and carry
 * them inline only where the worker most likely lacks them (tool-set.ts), read before
 * `nextStep` marks the transcript sent.
 */
function modelStep(turn: TurnContext, typed: TypedOutput | undefined): ModelStepRequest {
  const { input, transcript } = turn;
  const tools: Partial<ModelStepRequest> = turn.toolsHash === undefined
    ? { describeTools: { ...(input.tools !== undefined ? { names: input.tools } : {}), ...(input.handoffs?.length ? { handoffs: input.handoffs } : {}) } }
    : { ...(transcript.uncached ? { tools: turn.modelTools } : {}), toolsHash: turn.toolsHash };
  return {
    model: input.model,
    ...(input.system !== undefined ? { system: input.system } : {}),
    ...tools,
    transcript: transcript.nextStep(),
    stream: { step: turn.step, signalsBefore: turn.publisher.stream.publishes },
    ...(typed ? { output: typed.spec } : {}),
    ...(turn.tenantGrant ? { tenantGrant: remainingGrant(turn) } : {}),
  };
}

/** The turn's tools as its first model step described them: fixed for the rest of the turn. */
function adoptTools(turn: TurnContext, described: DescribedTools | undefined): void {
  if (!described || !Array.isArray(described.specs)) {
    throw wf.ApplicationFailure.nonRetryable("The first model step did not describe the turn's tools; is the worker running this version of turnpike?", 'InvalidModelStep');
  }
  turn.specs = new Map(described.specs.map((spec) => [spec.name, spec]));
  turn.nudges.settings = described.notifications;
  turn.modelTools = modelToolsOf(described.specs);
  turn.toolsHash = toolSetHash(turn.modelTools);
  // The servers the step waited for (if any) answered.
  turn.waitingForServers = undefined;
  // Never silently fewer tools: the turn's state and stream name the servers it goes without.
  if (Array.isArray(described.leftOut) && described.leftOut.length > 0) {
    turn.toolsLeftOut = described.leftOut;
    turn.publisher.publish({ type: 'tools-left-out', servers: described.leftOut });
  }
}

/** The turn's input is invalid: the turn fails at once (there is no caller to refuse). */
function invalidInput(message: string): never {
  throw wf.ApplicationFailure.nonRetryable(message, INVALID_TURN_INPUT);
}

function validateInput(input: AgentTurnInput): void {
  if (!input || typeof input !== 'object') invalidInput('agentTurn input must be an object');
  if (!input.model || typeof input.model.provider !== 'string' || typeof input.model.model !== 'string') {
    invalidInput('agentTurn input.model must be { provider, model }');
  }
  const modelProblem = modelSettingsProblem(input.model);
  if (modelProblem) invalidInput(`agentTurn input.${modelProblem}`);
  if (input.forkOf !== undefined && !forkReferenceValid(input.forkOf)) {
    invalidInput('agentTurn input.forkOf must be { workflowId, runId, atStep, prefixLength, prefixHash } with prefixLength at least 1');
  }
  // A fork's messages may be none: its prefix, shared by reference, is its history.
  if (!Array.isArray(input.messages) || (input.messages.length === 0 && input.forkOf === undefined)) {
    invalidInput('agentTurn input.messages must be a non-empty list ending with the new user message');
  }
  const binaryProblem = binaryPartsProblem(input.messages, input.model.provider);
  if (binaryProblem) invalidInput(`agentTurn input.${binaryProblem}`);
  if (input.maxSteps !== undefined && (!Number.isInteger(input.maxSteps) || input.maxSteps < 1)) {
    invalidInput('agentTurn input.maxSteps must be a positive integer');
  }
  if (input.modelTaskQueue !== undefined && (typeof input.modelTaskQueue !== 'string' || input.modelTaskQueue.trim() === '')) {
    invalidInput('agentTurn input.modelTaskQueue must be a non-empty task queue name');
  }
  const handoffsProblem = handoffTargetsProblem(input.handoffs);
  if (handoffsProblem) invalidInput(`agentTurn input.${handoffsProblem}`);
  for (const field of ['budget', 'budgetIncrement'] as const) {
    const problem = input[field] !== undefined ? budgetProblem(input[field], field) : undefined;
    if (problem) invalidInput(`agentTurn input.${problem}`);
  }
  const agentProblem = agentInputProblem(input);
  if (agentProblem) invalidInput(`agentTurn input.${agentProblem}`);
  const limitProblem = historyLimitProblem(input.historyLimit);
  if (limitProblem && !formerlyTaken(limitProblem)) invalidInput(`agentTurn input.${limitProblem.problem}`);
}

/**
 * A byte limit from 100 up to under 2 MiB was taken before the floor was raised: a turn recorded
 * then replays with it (its run would otherwise fail where it went on). Asked only for such a limit.
 */
function formerlyTaken({ key, value }: { key: 'events' | 'bytes'; value: unknown }): boolean {
  return key === 'bytes' && Number.isInteger(value) && (value as number) >= FORMER_MIN_HISTORY_LIMIT_BYTES && !wf.patched(HISTORY_LIMIT_FLOOR_PATCH);
}

/**
 * The model step's activity: its own timeout and retries, or 5 minutes, a 30 s heartbeat timeout
 * (the activity heartbeats while it runs: a step lost with its worker is tried again at once)
 * and 10 attempts with backoff. On `modelTaskQueue` when the turn has one (a queue with a rate
 * limit of its own, worker/model-capacity.ts): no schedule-to-start timeout, so a call waits
 * there for capacity as long as it must; its start-to-close and heartbeat timeouts count from
 * when a worker takes it. A turn without one sends the same command as before (not a patch).
 */
function modelActivity(options: ActivityCallOptions | undefined, taskQueue: string | undefined) {
  return wf.proxyActivities<TurnpikeActivities>({
    ...(taskQueue !== undefined ? { taskQueue } : {}),
    startToCloseTimeout: options?.startToCloseTimeout ?? '5m',
    heartbeatTimeout: options?.heartbeatTimeout ?? '30s',
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m', ...toRetryPolicy(options, 10) },
    ...activityPlacement(),
  }).callModel;
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

function forkReferenceValid(fork: AgentTurnInput['forkOf']): boolean {
  if (!fork || typeof fork !== 'object') return false;
  const { workflowId, runId, atStep, prefixLength, prefixHash } = fork;
  return [workflowId, runId, prefixHash].every((value) => typeof value === 'string' && value.length > 0)
    && Number.isInteger(atStep) && atStep >= 1 && Number.isInteger(prefixLength) && prefixLength >= 1
    && (fork.toolCallIds === undefined || (Array.isArray(fork.toolCallIds) && fork.toolCallIds.every((id) => typeof id === 'string')))
    && (fork.userMessage === undefined || typeof fork.userMessage === 'string');
}
