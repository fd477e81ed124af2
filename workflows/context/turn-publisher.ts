/**
 * What a turn publishes about itself, beyond its result: its status and parked tools as search
 * attributes (what operators and listings filter by), its parked calls and decisions in the
 * memo (`pending-memo.ts`: what listings show without a query per turn), and its events on the
 * turn's stream (`turn-events.ts`: what readers follow).
 *
 * Every upsert is an event in history, so attributes and memo are written only on change, and
 * once the code a workflow task runs has settled (see `publishSoon`).
 */
import * as wf from '@temporalio/workflow';
import type { CallLedger } from '../calls/call-ledger.js';
import { turnEventsQuery } from '../messages/definitions.js';
import type { Elicitations } from '../calls/elicitations.js';
import { EventStream, type WorkflowStreamState } from '../stream/event-stream.js';
import { PENDING_MEMO_KEY, pendingMemo } from './pending-memo.js';
import { agentConversationIdKey, agentPendingToolsKey, agentTurnStatusKey, turnpikeApproversKey, turnpikeNextExpiryKey, turnpikeParentTurnIdKey } from './search-attributes.js';
import { APPROVERS_PATCH, approverValues } from './approver-values.js';
import { NEXT_EXPIRY_PATCH, nextExpiry } from './next-expiry.js';
import type { Settlement } from '../calls/tool-results.js';
import type { TurnEvent } from '../types/turn-events.js';
import type { DecisionRecord, ToolCallPart, TurnStatus } from '../types/index.js';

export class TurnPublisher {
  status: TurnStatus = 'running';
  /** The turn's event stream (its query handler is installed as the turn starts), carried on from the run before a hand-over. */
  readonly stream: EventStream<TurnEvent>;
  private lastSearchAttributes = '';
  private lastMemo = '';
  private publishQueued = false;
  /** The `TurnpikeApprovers` values last upserted (`approver-values.ts`). */
  private lastApprovers = '';
  /** The `TurnpikeNextExpiry` value last upserted (`next-expiry.ts`). */
  private lastNextExpiry = '';

  constructor(
    private readonly ledger: CallLedger,
    private readonly elicitations: Elicitations,
    private readonly decisions: readonly DecisionRecord[],
    private readonly conversationId: string | undefined,
    carriedStream?: WorkflowStreamState,
    private readonly parentTurnId?: string,
  ) {
    this.stream = new EventStream<TurnEvent>(turnEventsQuery, carriedStream);
  }

  setStatus(status: TurnStatus): void {
    this.status = status;
    this.publishSoon();
  }

  /**
   * Publishes once the code this workflow task runs has settled: the calls of a step park (and
   * wake) together, and a woken call notes its decision just after its park returns; each upsert
   * is an event. Two microtask hops let that continuation run first; a decision noted later
   * still asks for its own publish. Microtasks run before the task's commands are sent, so
   * nothing is delayed.
   */
  publishSoon(): void {
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
  publishSearchAttributes(): void {
    this.publishMemo();
    const asking = this.elicitations.pending().map((view) => view.toolName);
    const pendingTools = asking.length > 0 ? [...new Set([...this.ledger.parkedToolNames(), ...asking])].sort() : this.ledger.parkedToolNames();
    const parked = [...this.ledger.pending(), ...this.elicitations.pending()];
    const approvers = carriesApprovers() ? approverValues(parked) : undefined;
    const expiry = carriesNextExpiry() ? nextExpiry(parked) : undefined;
    const snapshot = JSON.stringify([this.status, pendingTools]);
    if (snapshot === this.lastSearchAttributes) {
      this.publishAlone(approvers, expiry);
      return;
    }
    const first = this.lastSearchAttributes === '';
    this.lastSearchAttributes = snapshot;
    if (approvers) this.lastApprovers = JSON.stringify(approvers);
    if (expiry) this.lastNextExpiry = expiry;
    wf.upsertSearchAttributes([
      { key: agentTurnStatusKey, value: this.status },
      { key: agentPendingToolsKey, value: pendingTools.length > 0 ? pendingTools : null },
      ...(approvers ? [{ key: turnpikeApproversKey, value: approvers }] : []),
      ...(expiry ? [{ key: turnpikeNextExpiryKey, value: new Date(expiry) }] : []),
      ...(first && this.conversationId ? [{ key: agentConversationIdKey, value: this.conversationId }] : []),
      ...(first && this.parentTurnId ? [{ key: turnpikeParentTurnIdKey, value: this.parentTurnId }] : []),
    ]);
  }

  /**
   * Who may decide, or the soonest expiry, changed while the status and the parked tools did not:
   * an upsert of those attributes alone. Who may decide changes so in an escalation or a
   * delegation: that upsert is behind `patched(APPROVERS_PATCH)`, asked only then, and carries
   * the soonest expiry too when it changed. The soonest expiry alone changes when one of two
   * parked calls of one tool is decided: that upsert is behind `patched(NEXT_EXPIRY_PATCH)`, asked
   * only then. Everywhere else the values ride on the upserts a turn made before they existed,
   * which replay does not compare by content, so a turn records no marker and sends the same
   * commands as before.
   */
  private publishAlone(approvers: string[] | undefined, expiry: string | undefined): void {
    const approversChanged = approvers !== undefined && JSON.stringify(approvers) !== this.lastApprovers;
    const expiryChanged = expiry !== undefined && expiry !== this.lastNextExpiry;
    if (approversChanged && wf.patched(APPROVERS_PATCH)) {
      this.lastApprovers = JSON.stringify(approvers);
      if (expiryChanged) this.lastNextExpiry = expiry;
      wf.upsertSearchAttributes([{ key: turnpikeApproversKey, value: approvers }, ...(expiryChanged ? [{ key: turnpikeNextExpiryKey, value: new Date(expiry) }] : [])]);
      return;
    }
    if (!expiryChanged || !wf.patched(NEXT_EXPIRY_PATCH)) return;
    this.lastNextExpiry = expiry;
    wf.upsertSearchAttributes([{ key: turnpikeNextExpiryKey, value: new Date(expiry) }]);
  }

  /** Appends an event to the turn's stream. */
  publish(event: TurnEvent): void {
    this.stream.publish(event);
  }

  publishResult(step: number, call: ToolCallPart, settlement: Settlement): void {
    this.publish({
      type: 'tool-result',
      step,
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
}

/**
 * Whether the turn keeps `TurnpikeApprovers` current: only a turn started with it (its client
 * found the namespace has it; an upsert of an attribute the namespace lacks would fail every
 * workflow task). It is never removed once set, so a hand-over's next run carries it too.
 */
function carriesApprovers(): boolean {
  return wf.workflowInfo().typedSearchAttributes.get(turnpikeApproversKey) !== undefined;
}

/**
 * Whether the turn keeps `TurnpikeNextExpiry` current: as `TurnpikeApprovers`, only a turn
 * started with it (next-expiry.ts).
 */
function carriesNextExpiry(): boolean {
  return wf.workflowInfo().typedSearchAttributes.get(turnpikeNextExpiryKey) !== undefined;
}
