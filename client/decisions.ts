/**
 * The audit trail of approval decisions, built from what Temporal already keeps: each turn's
 * `decisions` (in a parked turn's memo, in `turnState` while it runs, in its result once it
 * ends), found through visibility. Turns recorded before turns carried `decisions` are read from
 * their tool calls' approval records. No second database: a listing costs visibility pages plus
 * one query per running turn that is not parked and one result read per ended turn.
 */
import { inputHash } from '../workflows/messages/input-hash.js';
import type { AgentTurnResult, DecisionRecord, ToolCallRecord } from '../workflows/types/index.js';

/** A decision with the turn it belongs to. */
export interface TurnDecision extends DecisionRecord {
  turnWorkflowId: string;
}

export interface DecisionQuery {
  tool?: string;
  approver?: string;
  /** Decisions made at or after this time (ISO 8601). */
  since?: string;
  /** Decisions made before this time (ISO 8601): the cursor for the next page. */
  until?: string;
  /** Default 100, at most 1,000. */
  limit?: number;
  /** Only the decisions on turns of this tenant (`TurnpikeTenant`). */
  tenant?: string;
}

const OUTCOMES: Partial<Record<ToolCallRecord['outcome'], DecisionRecord['outcome']>> = {
  approved: 'approved',
  denied: 'denied',
  expired: 'expired',
  cancelled: 'cancelled',
  error: 'approved',
};

/** Decisions of a turn whose result predates `decisions`, from its tool calls' approval records. */
export function decisionsOfResult(result: AgentTurnResult): DecisionRecord[] {
  if (result.decisions) return result.decisions;
  return result.toolCalls.flatMap((call) => {
    const { approval } = call;
    const outcome = approval && OUTCOMES[call.outcome];
    if (!approval || !outcome) return [];
    return [
      {
        approvalId: approval.approvalId,
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        outcome: approval.approved ? 'approved' : outcome === 'approved' ? 'denied' : outcome,
        approved: approval.approved,
        automatic: approval.automatic,
        ...(approval.approver !== undefined ? { approver: approval.approver } : {}),
        ...(approval.reason !== undefined ? { reason: approval.reason } : {}),
        decidedAt: approval.decidedAt,
        inputHash: inputHash(call.input),
      },
    ];
  });
}

/** Applies a query's filters, newest first. */
export function selectDecisions(decisions: TurnDecision[], query: DecisionQuery): TurnDecision[] {
  const limit = Math.min(1_000, Math.max(1, query.limit ?? 100));
  return decisions
    .filter(
      (decision) =>
        (query.tool === undefined || decision.toolName === query.tool) &&
        (query.approver === undefined || decision.approver === query.approver) &&
        (query.since === undefined || decision.decidedAt >= query.since) &&
        (query.until === undefined || decision.decidedAt < query.until),
    )
    .sort((a, b) => b.decidedAt.localeCompare(a.decidedAt))
    .slice(0, limit);
}
