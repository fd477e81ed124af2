/**
 * What a running turn answers: its queries (state, a call's context, its transcript and tools),
 * the updates that decide or answer its parked calls and its tools' questions, and the signals
 * that carry the same messages for the Temporal CLI. Messages arrive raw and are decoded by
 * turnpike (message-handlers.ts), so one that does not decode or is too large is refused or
 * dropped, never a failed workflow task. Validators refuse bad updates before they enter history;
 * handlers trust what their validator checked (validators do not run on replay).
 */
import * as wf from '@temporalio/workflow';
import { acceptedDecision, acceptedDelegation, acceptedResult, checkDecision, checkDelegation, checkResult } from '../calls/call-checks.js';
import { decide, delegate } from './approval-decisions.js';
import {
  approveToolCallSignal,
  approveToolCallUpdate,
  awaitElicitationAnswerUpdate,
  callContextQuery,
  delegateApprovalUpdate,
  elicitationAnswerQuery,
  modelToolsQuery,
  parkElicitationUpdate,
  submitToolResultSignal,
  submitToolResultUpdate,
  supersedeTurnSignal,
  toolServersUnavailableSignal,
  transcriptQuery,
  turnStateQuery,
} from '../messages/definitions.js';
import type { ElicitationAnswer } from '../calls/elicitations.js';
import { setQueryHandler, setSignalHandler, setUpdateHandler } from '../messages/message-handlers.js';
import { describeShapeError, supersedeTurnInputSchema, toolServersWaitSchema } from '../messages/message-schemas.js';
import { rejection } from '../messages/rejection.js';
import { budgetState } from '../budgets/turn-budget.js';
import { now, textOf, type TurnContext } from '../context/turn-context.js';
import type { CallContext, CallContextRequest, ToolCallPart, TurnState } from '../types/index.js';

export function installTurnHandlers(turn: TurnContext): void {
  const { ledger, elicitations, schemas } = turn;
  wf.setHandler(turnStateQuery, () => turnState(turn));
  setQueryHandler(callContextQuery, (request) => callContext(turn, request));
  wf.setHandler(transcriptQuery, (request) => turn.transcript.page(request));
  wf.setHandler(modelToolsQuery, () => turn.modelTools);
  setUpdateHandler(approveToolCallUpdate, (request) => decide(turn, acceptedDecision(ledger, request), now()), {
    validator: (request) => {
      checkDecision(ledger, request, schemas);
    },
  });
  setUpdateHandler(delegateApprovalUpdate, (request) => delegate(turn, acceptedDelegation(ledger, request), now()), {
    validator: (request) => {
      checkDelegation(ledger, request);
    },
  });
  setUpdateHandler(submitToolResultUpdate, (request) => answerElicitation(turn, request, false) ?? ledger.applyResult(acceptedResult(ledger, request), now()), {
    validator: (request) => {
      const open = typeof request?.toolCallId === 'string' ? elicitations.openFor(request.toolCallId) : undefined;
      if (open) elicitations.checkAnswer(open, request.output);
      else checkResult(ledger, request, schemas);
    },
  });
  setUpdateHandler(parkElicitationUpdate, (request) => elicitations.park(request, turn.runningCall(request.toolCallId)!), {
    validator: (request) => elicitations.checkPark(request, (toolCallId) => turn.runningCall(toolCallId)),
  });
  wf.setHandler(elicitationAnswerQuery, (elicitationId) => elicitations.state(elicitationId));
  setUpdateHandler(awaitElicitationAnswerUpdate, (elicitationId) => elicitations.awaitAnswer(elicitationId), {
    validator: (elicitationId) => elicitations.checkAwait(elicitationId),
  });
  // Signals carry the same messages for the Temporal CLI. A bad one must never fail the
  // workflow task: it is logged and dropped (one that does not decode or is over a size
  // limit by setSignalHandler, see message-handlers.ts; one the checks refuse by acceptSignal).
  setSignalHandler(approveToolCallSignal, (request) =>
    acceptSignal('approveToolCall', () => {
      decide(turn, checkDecision(ledger, request, schemas), now());
    }),
  );
  setSignalHandler(submitToolResultSignal, (request) =>
    acceptSignal('submitToolResult', () => {
      if (!answerElicitation(turn, request, true)) ledger.applyResult(checkResult(ledger, request, schemas), now());
    }),
  );
  setSignalHandler(supersedeTurnSignal, (request) => acceptSignal('supersedeTurn', () => supersede(turn, request)));
  setSignalHandler(toolServersUnavailableSignal, (report) => acceptSignal('toolServersUnavailable', () => waitForServers(turn, report)));
}

/** `turnState`: status, step, what waits for people, and the decisions so far. */
function turnState(turn: TurnContext): TurnState {
  return {
    status: turn.status,
    step: turn.step,
    pending: [...turn.ledger.pending(), ...turn.elicitations.pending()],
    ...(turn.input?.conversationId ? { conversationId: turn.input.conversationId } : {}),
    ...(turn.decisions.length > 0 ? { decisions: turn.decisions } : {}),
    ...(turn.toolsLeftOut.length > 0 ? { toolsLeftOut: turn.toolsLeftOut } : {}),
    ...(turn.waitingForServers ? { waitingForServers: turn.waitingForServers } : {}),
    ...budgetState(turn),
    ...turn.agentCalls.state(),
    ...(turn.input?.parentTurn ? { parentTurn: turn.input.parentTurn } : {}),
  };
}

/** `callContext`: what an approver needs to decide a call, without the whole conversation. */
function callContext(turn: TurnContext, request: CallContextRequest): CallContext {
  const toolCallId = typeof request?.toolCallId === 'string' ? request.toolCallId : '';
  const assistant = turn.appended.find(
    (message) => message.role === 'assistant' && message.content.some((part) => part.type === 'tool-call' && part.toolCallId === toolCallId),
  );
  const call = assistant?.role === 'assistant' ? assistant.content.find((part): part is ToolCallPart => part.type === 'tool-call' && part.toolCallId === toolCallId) : undefined;
  if (!assistant || !call) throw new Error(`This turn made no tool call ${toolCallId}`);
  const lastUser = [...(turn.input.messages ?? [])].reverse().find((message) => message.role === 'user');
  return {
    toolCallId,
    toolName: call.toolName,
    userMessage: lastUser ? textOf(typeof lastUser.content === 'string' ? [{ type: 'text', text: lastUser.content }] : lastUser.content) : (turn.input.forkOf?.userMessage ?? ''),
    assistantText: textOf(assistant.content as Array<{ type: string; text?: string }>),
    earlierResults: turn.records.map(({ toolCallId: id, toolName, outcome, output, isError }) => ({ toolCallId: id, toolName, outcome, output, isError })),
    inputSchema: turn.specs.get(call.toolName)?.inputSchema ?? {},
  };
}

/** `submitToolResult` for a call with an open question answers the question. */
function answerElicitation(turn: TurnContext, request: { toolCallId?: unknown; output?: unknown }, check: boolean): { toolCallId: string; acceptedAt: string } | undefined {
  const open = typeof request?.toolCallId === 'string' ? turn.elicitations.openFor(request.toolCallId) : undefined;
  if (!open) return undefined;
  // The validator checked it; the handler trusts it, as handlers do here (validators do not run on replay).
  const answer: ElicitationAnswer = check ? turn.elicitations.checkAnswer(open, request.output) : trustedAnswer(request.output);
  turn.elicitations.answer(open, answer);
  return { toolCallId: open.toolCallId, acceptedAt: now() };
}

function trustedAnswer(output: unknown): ElicitationAnswer {
  const answer = output as { action: ElicitationAnswer['action']; content?: Record<string, unknown> };
  return answer.action === 'accept' ? { action: 'accept', content: answer.content ?? {} } : { action: answer.action };
}

/** `supersedeTurn`: no further tool runs or parks; parked calls are answered as superseded. */
function supersede(turn: TurnContext, raw: unknown): void {
  const shape = supersedeTurnInputSchema().safeParse(raw);
  if (!shape.success) throw rejection('InvalidRequest', `Invalid supersedeTurn: ${describeShapeError(shape.error)}`);
  if (turn.superseded) return;
  turn.superseded = shape.data;
  turn.ledger.supersedeParked();
  turn.agentCalls.cancelAll();
}

/**
 * `toolServersUnavailable`: the first model step's attempt failed for want of MCP servers; the
 * turn shows which in its state and stream while the step is retried. Only the step's own
 * activity sends it, before it fails the attempt; one that arrives after the step described the
 * turn's tools, or from another step, is stale and ignored. State and stream only: no command.
 */
function waitForServers(turn: TurnContext, raw: unknown): void {
  const shape = toolServersWaitSchema().safeParse(raw);
  if (!shape.success) throw rejection('InvalidRequest', `Invalid toolServersUnavailable: ${describeShapeError(shape.error)}`);
  const report = shape.data;
  if (turn.toolsHash !== undefined || report.step !== turn.step) return;
  if (turn.waitingForServers && turn.waitingForServers.attempt >= report.attempt) return;
  turn.waitingForServers = report;
  turn.publisher.publish({ type: 'servers-unavailable', ...report });
}

function acceptSignal(name: string, apply: () => void): void {
  try {
    apply();
  } catch (error) {
    wf.log.warn(`Ignored an invalid ${name} signal`, { error: error instanceof Error ? error.message : String(error) });
  }
}
