/**
 * The turn's ledger of tool calls: one entry per call, holding everything the turn knows about
 * it — its kind, whether it is parked (and under which approval id), what resolved it, why it
 * can no longer be acted on, and its result. The update validators read it (see
 * `call-checks.ts`); only the turn writes it.
 *
 * Deterministic, no I/O: time comes in as arguments.
 */
import type {
  ApproveToolCallInput,
  CarriedCall,
  ApproveToolCallResult,
  PendingToolCall,
  SubmitToolResultInput,
  SubmitToolResultResult,
  ToolCallPart,
  ToolCallRecord,
  ToolResultPart,
  ToolSpec,
} from '../types/index.js';
import { toRecord, toResultPart, type Settlement } from './tool-results.js';

/** How a call was classified before anything ran: only `client` calls take a submitted result. */
export type CallKind = 'server' | 'client' | 'other';

/** Why a call (or its approval) can no longer be acted on, for precise rejection messages. */
export type SettledReason = 'decided' | 'expired' | 'cancelled' | 'submitted' | 'superseded' | 'cut-off';

/** What ended a parked call's wait. */
export type Resolution =
  | { kind: 'decision'; request: ApproveToolCallInput; decidedAt: string; automatic?: true }
  | { kind: 'result'; request: SubmitToolResultInput }
  | { kind: 'superseded' };

/** One tool call of the turn. */
export interface CallEntry {
  readonly call: ToolCallPart;
  readonly kind: CallKind;
  /** The input as the tool's schema parsed it, when it was valid. */
  readonly validatedInput?: unknown;
  /** While the call is parked: what `turnState` shows, and the spec its messages are checked against. */
  parked?: { view: PendingToolCall; spec: ToolSpec };
  /** Set by the first decision, result or supersede that arrives for a parked call. */
  resolution?: Resolution;
  /** Set once the call, and its approval if it had one, can no longer be acted on. */
  settledReason?: SettledReason;
  /** The call's one result. */
  settlement?: Settlement;
}

/** A decision that passed `checkDecision`, or that an accepted update carries. */
export interface CheckedDecision {
  entry: CallEntry;
  request: ApproveToolCallInput;
}

/** A client result that passed `checkResult`, or that an accepted update carries. */
export interface CheckedResult {
  entry: CallEntry;
  request: SubmitToolResultInput;
}

/** Every tool call of one turn, by tool call id and by approval id. */
export class CallLedger {
  /** In the order the model made the calls. */
  private readonly entries = new Map<string, CallEntry>();
  /** approvalId → toolCallId, for every call that ever parked for approval. */
  private readonly approvals = new Map<string, string>();

  /** Adds a call of the current step; tool call ids are unique within a turn (see `tool-call-ids.ts`). */
  add(call: ToolCallPart, kind: CallKind, validatedInput?: unknown): CallEntry {
    const entry: CallEntry = { call, kind, ...(validatedInput !== undefined ? { validatedInput } : {}) };
    this.entries.set(call.toolCallId, entry);
    return entry;
  }

  /** The call with this id, if the turn has one. */
  get(toolCallId: string): CallEntry | undefined {
    return this.entries.get(toolCallId);
  }

  /** The call that parked under `approvalId`, parked still or not. */
  byApprovalId(approvalId: string): CallEntry | undefined {
    const toolCallId = this.approvals.get(approvalId);
    return toolCallId === undefined ? undefined : this.entries.get(toolCallId);
  }

  /** The call waits for a decision (its view carries the approval id) or a client result. */
  park(entry: CallEntry, view: PendingToolCall, spec: ToolSpec): void {
    entry.parked = { view, spec };
    if (view.approvalId) this.approvals.set(view.approvalId, entry.call.toolCallId);
  }

  /** The call's wait is over: resolved, expired or superseded. Its approval id stays known. */
  unpark(entry: CallEntry): void {
    entry.parked = undefined;
  }

  /** A cancelled turn waits for nothing any more. */
  unparkAll(): void {
    for (const entry of this.entries.values()) entry.parked = undefined;
  }

  /**
   * Records why the call can no longer be acted on. The first reason stands: a call whose
   * approval was decided and whose tool was then cancelled mid-run stays "decided" for anyone
   * who sends that approval again.
   */
  settle(entry: CallEntry, reason: SettledReason): void {
    entry.settledReason ??= reason;
  }

  /** Parked calls, resolved or not, in call order. */
  parkedEntries(): Array<CallEntry & { parked: NonNullable<CallEntry['parked']> }> {
    return [...this.entries.values()].filter((entry): entry is CallEntry & { parked: NonNullable<CallEntry['parked']> } => entry.parked !== undefined);
  }

  /** Whether any call is parked, resolved or not: the turn is `awaiting-input` until each has woken. */
  hasParked(): boolean {
    return this.parkedEntries().length > 0;
  }

  /** What `turnState` lists: parked calls still waiting for their decision or result. */
  pending(): PendingToolCall[] {
    return this.parkedEntries()
      .filter((entry) => !entry.resolution)
      .map((entry) => entry.parked.view);
  }

  /** The tools of parked calls, for the `AgentPendingTools` search attribute. */
  parkedToolNames(): string[] {
    return [...new Set(this.parkedEntries().map((entry) => entry.parked.view.toolName))].sort();
  }

  /** Gives a parked approval its decision; the call's wait ends. */
  applyDecision({ entry, request }: CheckedDecision, decidedAt: string): ApproveToolCallResult {
    entry.resolution = { kind: 'decision', request, decidedAt };
    this.settle(entry, 'decided');
    return { approvalId: request.approvalId, toolCallId: entry.call.toolCallId, approved: request.approved, decidedAt };
  }

  /** Gives a parked client call its result; the call's wait ends. */
  applyResult({ entry, request }: CheckedResult, acceptedAt: string): SubmitToolResultResult {
    entry.resolution = { kind: 'result', request };
    this.settle(entry, 'submitted');
    return { toolCallId: request.toolCallId, acceptedAt };
  }

  /** Ends the wait of every parked call that has no resolution yet. */
  supersedeParked(): void {
    for (const entry of this.parkedEntries()) entry.resolution ??= { kind: 'superseded' };
  }

  /** The call's result as the model reads it; the call must be settled. */
  resultPart(toolCallId: string): ToolResultPart {
    const entry = this.settled(toolCallId);
    return toResultPart(entry.call, entry.settlement);
  }

  /** The call as the turn's result reports it; the call must be settled. */
  record(toolCallId: string): ToolCallRecord {
    const entry = this.settled(toolCallId);
    return toRecord(entry.call, entry.settlement, entry.validatedInput);
  }

  /**
   * Every call, for the next run at a hand-over (turn-hand-over.ts). Taken at a step boundary,
   * where no call is parked: each is settled, and keeps what refuses a late decision or result.
   */
  snapshot(): CarriedCall[] {
    const approvalOf = new Map([...this.approvals].map(([approvalId, toolCallId]) => [toolCallId, approvalId]));
    return [...this.entries.values()].map(({ parked: _parked, ...entry }) => {
      const approvalId = approvalOf.get(entry.call.toolCallId);
      return { toolCallId: entry.call.toolCallId, ...(approvalId ? { approvalId } : {}), entry };
    });
  }

  /** The ledger a run takes over from the one before (see `snapshot`). */
  static restore(calls: readonly CarriedCall[]): CallLedger {
    const ledger = new CallLedger();
    for (const { toolCallId, approvalId, entry } of calls) {
      ledger.entries.set(toolCallId, entry as CallEntry);
      if (approvalId) ledger.approvals.set(approvalId, toolCallId);
    }
    return ledger;
  }

  private settled(toolCallId: string): CallEntry & { settlement: Settlement } {
    const entry = this.entries.get(toolCallId);
    if (!entry?.settlement) throw new Error(`Tool call ${toolCallId} has no result yet`);
    return entry as CallEntry & { settlement: Settlement };
  }
}
