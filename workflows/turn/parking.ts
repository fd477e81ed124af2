/**
 * Parking a call: it waits, holding no worker memory, until a person decides it (approval), the
 * client sends its result (client tool), the turn is superseded, or its timeout passes. The call
 * keeps its approval id, input hash and expiry from the moment it parks; the turn publishes the
 * request on its stream, its status and parked tools as search attributes, and nudges approvers.
 */
import * as wf from '@temporalio/workflow';
import { msToNumber } from '@temporalio/common';
import type { CallEntry } from '../calls/call-ledger.js';
import { inputHash } from '../messages/input-hash.js';
import { startPark, type ParkOutcome } from '../context/park-telemetry.js';
import { deniedMessage, errorSettlement, type Settlement } from '../calls/tool-results.js';
import { DEFAULT_PARK_TIMEOUT, type TurnContext } from '../context/turn-context.js';
import { startProgress } from './approval-decisions.js';
import { decisionRights } from '../calls/approval-votes.js';
import { escalate } from './approval-escalation.js';
import type { ApprovalRecord, ApproveToolCallInput, DecisionRecord, PendingToolCall, ToolCallPart, ToolSpec } from '../types/index.js';

/** What a decided approval leaves to do: a settlement, or the tool to run with this input. */
export type ApprovalOutcome = { settlement: Settlement } | { run: { input: unknown; approval: ApprovalRecord } };

/** Parks a call for a person's decision. */
export async function awaitApproval(turn: TurnContext, entry: CallEntry, spec: ToolSpec, input: unknown, policyReason?: string): Promise<ApprovalOutcome> {
  const { call } = entry;
  const timeout = turn.input.approvalTimeout ?? DEFAULT_PARK_TIMEOUT;
  const approvalId = turn.newApprovalId();
  const view = pendingView(turn, 'approval', call, input, timeout, approvalId, policyReason);
  startProgress(spec, view);
  turn.nudges.send(turn.nudgeContext(), view, 'parked');
  turn.publisher.publish({
    type: 'approval-requested',
    step: turn.step,
    approvalId,
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    input,
    inputHash: view.inputHash,
    requestedAt: view.requestedAt,
    expiresAt: view.expiresAt,
    ...(policyReason !== undefined ? { reason: policyReason } : {}),
  });
  const parking = park(turn, entry, view, spec, timeout);
  if (view.progress?.escalation) escalate(turn, entry);
  const arrived = await parking;
  // An edit under a quorum replaced the view's input: the decision is on the input the votes saw.
  // Who could decide it by now (the tool's approvers, grown by escalation and delegation): a late one is told it was decided.
  const rights = decisionRights({ view, spec });
  const eligible = rights.approvers || rights.approverGroups ? { eligible: rights } : {};
  const decision = { approvalId, toolCallId: call.toolCallId, toolName: call.toolName, inputHash: view.inputHash, ...(view.progress ? { progress: view.progress } : {}), ...eligible };
  if (entry.resolution?.kind === 'superseded') {
    turn.noteDecision(view, { ...decision, outcome: 'superseded', approved: false, automatic: true, decidedAt: new Date().toISOString() });
    return { settlement: supersededSettlement(turn, entry) };
  }
  if (!arrived || entry.resolution?.kind !== 'decision') {
    turn.ledger.settle(entry, 'expired');
    const approval: ApprovalRecord = { approvalId, approved: false, automatic: true, reason: `no decision within ${timeout}`, decidedAt: new Date().toISOString() };
    turn.noteDecision(view, { ...decision, outcome: 'expired', approved: false, automatic: true, reason: approval.reason, decidedAt: approval.decidedAt });
    return { settlement: errorSettlement('expired', `The approval for "${call.toolName}" expired after ${timeout} without a decision. The tool did not run.`, approval) };
  }
  const { request, decidedAt } = entry.resolution;
  const automatic = entry.resolution.automatic === true;
  const approval: ApprovalRecord = {
    approvalId,
    approved: request.approved,
    automatic,
    ...(request.approver !== undefined ? { approver: request.approver } : {}),
    ...(request.reason !== undefined ? { reason: request.reason } : {}),
    decidedAt,
  };
  turn.noteDecision(view, { ...personsDecision(decision, request, decidedAt), ...(automatic ? { automatic } : {}) });
  if (!request.approved) return { settlement: errorSettlement('denied', deniedMessage(call.toolName, request.reason), approval) };
  return { run: { input: request.input !== undefined ? request.input : input, approval } };
}

/** A person's decision as the audit trail records it: who, why, and their edit of the input. */
export function personsDecision(
  decision: Pick<DecisionRecord, 'approvalId' | 'toolCallId' | 'toolName' | 'inputHash' | 'progress' | 'eligible'>,
  request: ApproveToolCallInput,
  decidedAt: string,
): DecisionRecord {
  return {
    ...decision,
    outcome: request.approved ? 'approved' : 'denied',
    approved: request.approved,
    automatic: false,
    ...(request.approver !== undefined ? { approver: request.approver } : {}),
    ...(request.approverGroups !== undefined ? { approverGroups: request.approverGroups } : {}),
    ...(request.reason !== undefined ? { reason: request.reason } : {}),
    decidedAt,
    ...(request.input !== undefined ? { editedInput: request.input } : {}),
  };
}

/** Parks a client tool's call until the client sends its result. */
export async function awaitClientResult(turn: TurnContext, entry: CallEntry, spec: ToolSpec, input: unknown): Promise<Settlement> {
  const { call } = entry;
  const timeout = turn.input.clientToolTimeout ?? DEFAULT_PARK_TIMEOUT;
  const view = pendingView(turn, 'client-tool', call, input, timeout);
  turn.publisher.publish({
    type: 'client-tool-requested',
    step: turn.step,
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    input,
    inputHash: view.inputHash,
    requestedAt: view.requestedAt,
    expiresAt: view.expiresAt,
  });
  const arrived = await park(turn, entry, view, spec, timeout);
  if (entry.resolution?.kind === 'superseded') return supersededSettlement(turn, entry);
  if (!arrived || entry.resolution?.kind !== 'result') {
    turn.ledger.settle(entry, 'expired');
    return errorSettlement('expired', `The client did not return a result for "${call.toolName}" within ${timeout}.`);
  }
  const { request } = entry.resolution;
  return { outcome: 'client', output: request.output ?? null, isError: request.isError === true, input };
}

/** The result of a call the turn's superseding stopped: it did not run. */
export function supersededSettlement(turn: TurnContext, entry: CallEntry): Settlement {
  turn.ledger.settle(entry, 'superseded');
  return errorSettlement('cancelled', `Superseded: ${turn.superseded!.reason} The call to "${entry.call.toolName}" did not run.`);
}

/** Parks a call until its resolution arrives or the timeout passes; true if it arrived. */
export async function park(turn: TurnContext, entry: CallEntry, view: PendingToolCall, spec: ToolSpec, timeout: string): Promise<boolean> {
  turn.ledger.park(entry, view, spec);
  turn.setStatus('awaiting-input');
  const telemetry = startPark(view);
  // On cancellation `condition` throws and the call stays parked, so a cancelled turn can tell
  // a call that never ran from one that was running.
  let arrived: boolean;
  try {
    arrived = await waitForResolution(turn, entry, view, timeout);
  } catch (error) {
    telemetry.end('cancelled');
    throw error;
  }
  telemetry.end(parkOutcome(entry, arrived), entry.resolution?.kind === 'decision' ? entry.resolution.request.approver : undefined);
  turn.ledger.unpark(entry);
  turn.transcript.resumed();
  turn.setStatus(turn.waiting() ? 'awaiting-input' : 'running');
  return arrived;
}

/** Waits for a resolution; with nudges, sends the "expiring" one that long before the timeout. */
async function waitForResolution(turn: TurnContext, entry: CallEntry, view: PendingToolCall, timeout: string): Promise<boolean> {
  const timeoutMs = msToNumber(timeout);
  const before = turn.nudges.expiringBeforeMs(view);
  const resolved = () => entry.resolution !== undefined;
  if (before <= 0 || before >= timeoutMs) return conditionWithinTimer(resolved, timeoutMs);
  if (await conditionWithinTimer(resolved, timeoutMs - before)) return true;
  turn.nudges.send(turn.nudgeContext(), view, 'expiring');
  return conditionWithinTimer(resolved, before);
}

/** What a parked call shows: in `turnState`, the memo, listings and nudges. */
function pendingView(turn: TurnContext, kind: PendingToolCall['kind'], call: ToolCallPart, input: unknown, timeout: string, approvalId?: string, reason?: string): PendingToolCall {
  const now = Date.now();
  const spec = kind === 'approval' ? turn.specs.get(call.toolName) : undefined;
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
