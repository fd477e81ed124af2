/**
 * The parked calls of a turn, and its decisions so far, as its workflow memo carries them: what
 * approval and decision listings read from visibility (`client.workflow.list` returns each
 * turn's memo), so that listing thousands of parked turns costs visibility pages, not a
 * `turnState` query (a replay) per turn.
 *
 * The turn writes it in the same workflow task as the `AgentTurnStatus` upsert at each park,
 * and whenever its parked calls change while it stays `awaiting-input`. It is not rewritten
 * when the turn leaves `awaiting-input`: a reader trusts it only while `AgentTurnStatus` is
 * `awaiting-input`.
 *
 * Pure and side-effect free: imported by the workflow and the client.
 */
import type { DecisionRecord, PendingToolCall } from '../types/index.js';

/** The memo field that holds the summary. */
export const PENDING_MEMO_KEY = 'turnpikePending';

/**
 * A call's input is copied into the memo while its JSON stays within this many characters;
 * a larger one is left out (`inputOmitted`) and a listing reads it with `turnState`, so the
 * memo stays small (Temporal warns above 2 KiB of memo by default, and it is stored in the
 * visibility record) and a listing stays exact.
 */
export const PENDING_MEMO_INPUT_CAP = 1_024;

/**
 * The turn's decisions are copied while their JSON stays within this many characters (edited
 * inputs can be large); beyond it they are left out (`decisionsOmitted`) and read with `turnState`.
 */
export const PENDING_MEMO_DECISIONS_CAP = 4_096;

/** One parked call; `input` is absent when it was larger than the cap. */
export type PendingMemoCall = Omit<PendingToolCall, 'input'> & { input?: unknown; inputOmitted?: true };

export interface PendingMemo {
  /** The shape's version, for readers of memos written by other versions. */
  v: 1;
  calls: PendingMemoCall[];
  /** Every decision of the turn when the memo was written (`turnState().decisions`), unless `decisionsOmitted`. */
  decisions?: DecisionRecord[];
  decisionsOmitted?: true;
}

/** The memo for these parked calls and decisions (the turn's `turnState().pending` and `.decisions`). */
export function pendingMemo(pending: readonly PendingToolCall[], decisions: readonly DecisionRecord[] = []): PendingMemo {
  const calls = pending.map(({ input, ...call }): PendingMemoCall => {
    const json = JSON.stringify(input);
    return json !== undefined && json.length > PENDING_MEMO_INPUT_CAP ? { ...call, inputOmitted: true } : { ...call, input };
  });
  const fits = JSON.stringify(decisions).length <= PENDING_MEMO_DECISIONS_CAP;
  return { v: 1, calls, ...(fits ? { decisions: [...decisions] } : { decisionsOmitted: true }) };
}

/** The summary in a memo value read from visibility, or undefined when there is none or it is not one this version reads. */
export function readPendingMemo(value: unknown): PendingMemo | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const memo = value as Partial<PendingMemo>;
  if (memo.v !== 1 || !Array.isArray(memo.calls)) return undefined;
  if (memo.decisions !== undefined && !Array.isArray(memo.decisions)) return undefined;
  const wellFormed = memo.calls.every(
    (call) =>
      call !== null &&
      typeof call === 'object' &&
      (call.kind === 'approval' || call.kind === 'client-tool' || call.kind === 'elicitation' || call.kind === 'budget') &&
      typeof call.toolCallId === 'string' &&
      typeof call.toolName === 'string' &&
      typeof call.inputHash === 'string' &&
      typeof call.requestedAt === 'string' &&
      typeof call.expiresAt === 'string',
  );
  return wellFormed ? (memo as PendingMemo) : undefined;
}
