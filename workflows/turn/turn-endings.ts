/**
 * How a turn ends: with a reply (completed), out of steps, cut off by the model's limits or a
 * refusal, superseded, or cancelled. Whatever the ending, every tool call has exactly one result,
 * so the turn's messages stay valid input for the next turn; nudges still in flight are
 * delivered; the stream's last event is `turn-finished`.
 */
import * as wf from '@temporalio/workflow';
import { cutOffSettlement, hasContent } from './cut-off-step.js';
import { errorSettlement } from '../calls/tool-results.js';
import { providerToolEvent, providerToolParts, providerToolRecord } from '../calls/provider-tool-calls.js';
import { budgetResult } from '../budgets/turn-budget.js';
import { textOf, type TurnContext } from '../context/turn-context.js';
import type { AgentTurnResult, AssistantMessage, CutOffStep, ModelStepResult, ToolCallPart } from '../types/index.js';

/** `typed`: a typed answer's `output`, or why it failed (`outputErrors`; see typed-output.ts). */
export async function finish(turn: TurnContext, status: AgentTurnResult['status'], text: string, typed: Pick<AgentTurnResult, 'output' | 'outputErrors'> = {}): Promise<AgentTurnResult> {
  turn.setStatus(status);
  // Nudges still being delivered (a receiver that was down) are retried before the turn ends.
  await turn.nudges.drain();
  turn.publisher.publish({ type: 'turn-finished', status, text, steps: turn.step, usage: turn.usage, ...typed });
  // Long polls would keep the handlers below from finishing; late readers use the query.
  turn.publisher.stream.close();
  // Handlers are synchronous today; waiting keeps that true if one ever awaits.
  await wf.condition(wf.allHandlersFinished);
  return {
    status,
    text,
    messages: turn.appended,
    steps: turn.step,
    usage: turn.usage,
    toolCalls: turn.records,
    ...(turn.superseded ? { supersededBy: turn.superseded.messageId ?? turn.superseded.reason } : {}),
    ...(turn.cutOff ? { cutOff: turn.cutOff } : {}),
    ...(turn.decisions.length > 0 ? { decisions: turn.decisions } : {}),
    ...typed,
    ...budgetResult(turn),
  };
}

/**
 * A cut-off step ends the turn (see `cut-off-step.ts`): its text is kept as the model wrote it,
 * and none of its tool calls runs or parks; each gets a cancelled result, so the history
 * stays valid input for the next turn. Hosted calls the provider ran within the step (one cut off
 * before its result is a failed one) are recorded and shown as in any step. None of this sends a
 * command: the records and events are the turn's result and in-memory stream, published in the
 * same workflow task as the step's `step-finished` (docs/versioning.md).
 */
export function finishCutOff(turn: TurnContext, status: 'max-tokens' | 'refused', message: AssistantMessage, response: ModelStepResult): Promise<AgentTurnResult> {
  if (hasContent(message)) turn.appended.push(message);
  for (const part of providerToolParts(message)) {
    turn.records.push(providerToolRecord(part));
    turn.publisher.publish(providerToolEvent(part, turn.step));
  }
  const calls = message.content.filter((part): part is ToolCallPart => part.type === 'tool-call');
  for (const call of calls) {
    const kind = turn.specs.get(call.toolName)?.kind;
    const entry = turn.ledger.add(call, kind === 'agent' ? 'server' : kind === 'server' || kind === 'client' ? kind : 'other');
    turn.ledger.settle(entry, 'cut-off');
    entry.settlement = cutOffSettlement(status, call);
    turn.publisher.publishResult(turn.step, call, entry.settlement);
  }
  if (calls.length > 0) {
    turn.records.push(...calls.map((call) => turn.ledger.record(call.toolCallId)));
    turn.appended.push({ role: 'tool', content: calls.map((call) => turn.ledger.resultPart(call.toolCallId)) });
  }
  turn.cutOff = {
    step: turn.step,
    finishReason: response.finishReason as CutOffStep['finishReason'],
    ...(response.providerFinishReason !== undefined ? { providerFinishReason: response.providerFinishReason } : {}),
  };
  return finish(turn, status, textOf(message.content));
}

/** Cancellation: every open call gets a cancelled result, so the history stays valid. */
export function finishCancelled(turn: TurnContext): Promise<AgentTurnResult> {
  turn.elicitations.endAll();
  const calls = turn.openStep;
  if (calls) {
    for (const call of calls) {
      // A call the turn had not classified yet joins the ledger now.
      const entry = turn.ledger.get(call.toolCallId) ?? turn.ledger.add(call, 'other');
      if (entry.settlement) continue;
      turn.ledger.settle(entry, 'cancelled');
      const { parked } = entry;
      if (parked?.view.approvalId && !entry.resolution) {
        const { approvalId, toolCallId, toolName, inputHash: shownHash } = parked.view;
        turn.noteDecision(parked.view, { approvalId, toolCallId, toolName, outcome: 'cancelled', approved: false, automatic: true, decidedAt: new Date().toISOString(), inputHash: shownHash });
      }
      entry.settlement = errorSettlement(
        'cancelled',
        parked && !entry.resolution
          ? `The turn was cancelled while "${call.toolName}" waited for ${parked.view.kind === 'approval' ? 'approval' : 'the client'}; the tool did not run.`
          : `The turn was cancelled while "${call.toolName}" was running; it may or may not have taken effect.`,
      );
      turn.publisher.publishResult(turn.step, call, entry.settlement);
    }
    turn.ledger.unparkAll();
    turn.records.push(...calls.map((call) => turn.ledger.record(call.toolCallId)));
    turn.appended.push({ role: 'tool', content: calls.map((call) => turn.ledger.resultPart(call.toolCallId)) });
    turn.openStep = undefined;
  }
  const last = [...turn.appended].reverse().find((message) => message.role === 'assistant');
  return finish(turn, 'cancelled', last && last.role === 'assistant' ? textOf(last.content) : '');
}
