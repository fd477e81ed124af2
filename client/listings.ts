/**
 * Listings across turns, read from Temporal's visibility: every parked call on a task queue,
 * the calls parked under one turn and its sub-agents, and the approval decisions made. No
 * second database: a parked turn keeps its calls and decisions in its memo
 * (workflows/context/pending-memo.ts), which the visibility listing returns; other turns are queried or
 * their results read, a bounded number at a time.
 */
import type { Client } from '@temporalio/client';
import { AGENT_TURN_WORKFLOW } from '../workflows/messages/definitions.js';
import { PENDING_MEMO_KEY, readPendingMemo } from '../workflows/context/pending-memo.js';
import { agentConversationIdKey, agentTurnStatusKey, turnpikeParentTurnIdKey, turnpikeTenantKey } from '../workflows/context/search-attributes.js';
import { tenantClause } from './tenants.js';
import { approversClause, callerValues } from '../workflows/context/approver-values.js';
import { mayDecide } from '../workflows/calls/call-checks.js';
import { knownWithoutApprovers, refusedApprovers } from './approvers-attribute.js';
import type { AgentTurnResult, DecisionRecord, PendingToolCall, TurnState } from '../workflows/types/index.js';
import { decisionsOfResult, selectDecisions, type DecisionQuery, type TurnDecision } from './decisions.js';

export interface ParkedCall extends PendingToolCall {
  turnWorkflowId: string;
  conversationId?: string;
  /** Set when the turn is an agent tool's child turn: the turn whose call started it. */
  parentTurnId?: string;
  /** With `parentTurnId`: the parent's agent tool call this turn answers. */
  parentToolCallId?: string;
  /** Who started the turn, when it was started with `startedBy` (the HTTP API records its caller). */
  startedBy?: string;
  /** The tenant the turn runs for (`TurnpikeTenant`), when it has one. */
  tenant?: string;
}

/**
 * The memo key under which `startTurn` and `sendMessage` record who started a turn or a
 * conversation (their `startedBy` option): the HTTP API's reading rights rest on it.
 */
export const STARTED_BY_MEMO_KEY = 'turnpikeStartedBy';

/** What a listing reads turns with: `TurnpikeClient` is one. */
export interface TurnReader {
  readonly client: Client;
  readonly taskQueue: string;
  turnState(turnId: string): Promise<TurnState>;
  turnResult(turnId: string): Promise<AgentTurnResult>;
}

/** Where a call parked, beyond its turn: the conversation, who started it, its parent turn. */
type CallPlace = Pick<ParkedCall, 'conversationId' | 'startedBy' | 'parentTurnId' | 'parentToolCallId' | 'tenant'>;

/** Queries a listing runs at once. */
const LISTING_CONCURRENCY = 32;

/**
 * Every parked call on the reader's task queue (or matching `query`), of one tenant's turns with
 * `tenant`, from visibility alone where it can: see `TurnpikeClient.listParkedCalls`.
 */
export async function listParkedCalls(reader: TurnReader, options: ParkedCallsOptions = {}): Promise<ParkedCall[]> {
  const base = options.query ?? `WorkflowType="${AGENT_TURN_WORKFLOW}" AND AgentTurnStatus="awaiting-input" AND TaskQueue="${reader.taskQueue}"`;
  const query = options.tenant === undefined ? base : `(${base})${tenantClause(options.tenant)}`;
  const { approver } = options;
  if (!approver) return listWhere(reader, query, options.limit);
  // Visibility returns the turns the approver may decide in, by `TurnpikeApprovers`; the check after reading is exact.
  const mine = (calls: ParkedCall[]) => calls.filter((call) => !decidable(call) || mayDecide(call, { approver: approver.identity, approverGroups: approver.groups }));
  if (knownWithoutApprovers(reader.client)) return mine(await listWhere(reader, query, options.limit));
  try {
    return mine(await listWhere(reader, `(${query}) AND ${approversClause(callerValues(approver))}`, options.limit));
  } catch (error) {
    // A namespace without the attribute refuses the query: list as before it existed.
    if (!refusedApprovers(reader.client, error)) throw error;
    return mine(await listWhere(reader, query, options.limit));
  }
}

/** A call a person decides: a tool approval, or a budget approval (extend or stop; docs/budgets.md). Others are answered by whoever may read the turn. */
export function decidable(call: Pick<PendingToolCall, 'kind'>): boolean {
  return call.kind === 'approval' || call.kind === 'budget';
}

/** What `listParkedCalls` reads: see `TurnpikeClient.listParkedCalls`. */
export interface ParkedCallsOptions {
  /** A visibility query in place of "every parked turn on the task queue". */
  query?: string;
  /** Parked turns read at most (500). */
  limit?: number;
  /** One tenant's turns only. */
  tenant?: string;
  /**
   * The calls this approver may decide, and every client-tool call and question (whoever may read
   * the turn answers those): visibility is asked for their turns only (`TurnpikeApprovers`), so
   * the cost follows what the approver may decide, not every parked turn.
   */
  approver?: { identity?: string; groups?: readonly string[] };
}

/** The parked calls of the turns `query` lists, up to `limit` turns. */
async function listWhere(reader: TurnReader, query: string, limit = 500): Promise<ParkedCall[]> {
  const turns: Array<{ id: string; place: CallPlace; calls?: ParkedCall[] }> = [];
  for await (const execution of reader.client.workflow.list({ query, pageSize: 1_000 })) {
    const status = execution.typedSearchAttributes.get(agentTurnStatusKey);
    // Nothing is parked in a turn in any other status (a custom query may return those).
    if (status !== undefined && status !== 'awaiting-input') continue;
    const memo = status === undefined ? undefined : readPendingMemo(execution.memo?.[PENDING_MEMO_KEY]);
    const conversationId = execution.typedSearchAttributes.get(agentConversationIdKey);
    const parentTurnId = execution.typedSearchAttributes.get(turnpikeParentTurnIdKey);
    const startedBy = execution.memo?.[STARTED_BY_MEMO_KEY];
    const tenant = execution.typedSearchAttributes.get(turnpikeTenantKey);
    const place: CallPlace = {
      ...(conversationId ? { conversationId } : {}),
      ...(tenant ? { tenant } : {}),
      ...(typeof startedBy === 'string' ? { startedBy } : {}),
      ...(parentTurnId ? parentOf(execution.workflowId, parentTurnId) : {}),
    };
    const complete = memo && memo.calls.every((call) => !call.inputOmitted);
    turns.push({
      id: execution.workflowId,
      place,
      ...(complete ? { calls: memo.calls.map(({ inputOmitted: _omitted, ...call }) => ({ ...call, input: call.input, turnWorkflowId: execution.workflowId, ...place })) } : {}),
    });
    if (turns.length >= limit) break;
  }
  // The rest are queried, a bounded number at a time: a parked turn is usually out of the
  // worker's cache, so each query replays it, and thousands at once would time out.
  const calls = await mapWithConcurrency(turns, LISTING_CONCURRENCY, async ({ id, place, calls: fromMemo }) => {
    if (fromMemo) return fromMemo;
    try {
      const state = await reader.turnState(id);
      return state.pending.map((call) => ({
        ...call,
        turnWorkflowId: id,
        ...place,
        ...(state.conversationId ? { conversationId: state.conversationId } : {}),
        ...(state.parentTurn ? parentOf(id, state.parentTurn.turnId) : {}),
      }));
    } catch {
      return []; // It finished between the listing and the query.
    }
  });
  return calls.flat();
}

/** A turn's parked calls and, depth first, those of its running child turns (from `turnState().children`). */
export async function parkedInTurnTree(reader: TurnReader, turnWorkflowId: string, place: CallPlace): Promise<ParkedCall[]> {
  const turn = await reader.turnState(turnWorkflowId).catch(() => undefined);
  if (!turn) return [];
  const own = turn.pending.map((call) => ({ ...call, turnWorkflowId, ...place }));
  const nested = await Promise.all(
    (turn.children ?? []).map((child) =>
      parkedInTurnTree(reader, child.turnId, { ...(place.conversationId ? { conversationId: place.conversationId } : {}), parentTurnId: turnWorkflowId, parentToolCallId: child.toolCallId }),
    ),
  );
  return [...own, ...nested.flat()];
}

/** Approval decisions on the reader's task queue, newest first: see `TurnpikeClient.listDecisions`. */
export async function listDecisions(reader: TurnReader, query: DecisionQuery = {}): Promise<TurnDecision[]> {
  // Turns still running, and turns that ended since `since`: a turn started earlier may decide later.
  const closedSince = query.since ? ` AND (ExecutionStatus="Running" OR CloseTime >= "${new Date(query.since).toISOString()}")` : '';
  const visibility = `WorkflowType="${AGENT_TURN_WORKFLOW}" AND TaskQueue="${reader.taskQueue}"${closedSince}${tenantClause(query.tenant)}`;
  const turns: Array<{ id: string; running: boolean; decisions?: DecisionRecord[] }> = [];
  for await (const execution of reader.client.workflow.list({ query: visibility, pageSize: 1_000 })) {
    const running = execution.status.name === 'RUNNING';
    if (!running && execution.status.name !== 'COMPLETED') continue;
    // A parked turn's memo holds its decisions as of its last change: no query for it.
    const parked = running && execution.typedSearchAttributes.get(agentTurnStatusKey) === 'awaiting-input';
    const decisions = parked ? readPendingMemo(execution.memo?.[PENDING_MEMO_KEY])?.decisions : undefined;
    turns.push({ id: execution.workflowId, running, ...(decisions ? { decisions } : {}) });
    if (turns.length >= 2_000) break;
  }
  // The rest a bounded number at a time: each is one query (a replay, for a turn out of the cache) or one result read.
  const found = await mapWithConcurrency(turns, LISTING_CONCURRENCY, async ({ id, running, decisions: fromMemo }) => {
    try {
      const decisions = fromMemo ?? (running ? ((await reader.turnState(id)).decisions ?? []) : decisionsOfResult(await reader.turnResult(id)));
      return decisions.map((decision) => ({ ...decision, turnWorkflowId: id }));
    } catch {
      return []; // It ended between the listing and the read, or is not a turn of ours.
    }
  });
  return selectDecisions(found.flat(), query);
}

/** A child turn's parent, and the parent's call, from the child's id (`<parent turn id>/<toolCallId>`). */
function parentOf(turnWorkflowId: string, parentTurnId: string): { parentTurnId: string; parentToolCallId?: string } {
  const prefix = `${parentTurnId}/`;
  return { parentTurnId, ...(turnWorkflowId.startsWith(prefix) ? { parentToolCallId: turnWorkflowId.slice(prefix.length) } : {}) };
}

/** `items.map(work)` with at most `limit` in flight, results in order. */
async function mapWithConcurrency<Item, Result>(items: readonly Item[], limit: number, work: (item: Item) => Promise<Result>): Promise<Result[]> {
  const results = new Array<Result>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}
