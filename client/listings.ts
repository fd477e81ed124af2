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
import { agentConversationIdKey, agentTurnStatusKey, turnpikeNextExpiryKey, turnpikeParentTurnIdKey, turnpikeTenantKey } from '../workflows/context/search-attributes.js';
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
  const scope = parkedScope(reader, options);
  return (await inScope(reader, scope, (query) => listWhere(reader, query, options.limit))).filter(scope.keep);
}

/** What a listing asks visibility (`scoped`, or `plain` where the namespace lacks `TurnpikeApprovers`) and keeps of what it reads. */
export interface ParkedScope {
  plain: string;
  scoped: string;
  /** The exact check after reading: the calls the approver may decide, and every client-side call. */
  keep: (call: ParkedCall) => boolean;
}

/** The scope of a listing of `options`. */
export function parkedScope(reader: TurnReader, options: Pick<ParkedCallsOptions, 'query' | 'tenant' | 'approver'>): ParkedScope {
  const base = options.query ?? `WorkflowType="${AGENT_TURN_WORKFLOW}" AND AgentTurnStatus="awaiting-input" AND TaskQueue="${reader.taskQueue}"`;
  const plain = options.tenant === undefined ? base : `(${base})${tenantClause(options.tenant)}`;
  const { approver } = options;
  if (!approver) return { plain, scoped: plain, keep: () => true };
  // Visibility returns the turns the approver may decide in, by `TurnpikeApprovers`; the check after reading is exact.
  return {
    plain,
    scoped: `(${plain}) AND ${approversClause(callerValues(approver))}`,
    keep: (call) => !decidable(call) || mayDecide(call, { approver: approver.identity, approverGroups: approver.groups }),
  };
}

/** Runs `list` on the scoped query, or on the plain one where the namespace lacks `TurnpikeApprovers` (learnt from its refusal). */
export async function inScope<T>(reader: TurnReader, scope: ParkedScope, list: (query: string) => Promise<T>): Promise<T> {
  if (scope.scoped === scope.plain || knownWithoutApprovers(reader.client)) return list(scope.plain);
  try {
    return await list(scope.scoped);
  } catch (error) {
    // A namespace without the attribute refuses the query: list as before it existed.
    if (!refusedApprovers(reader.client, error)) throw error;
    return list(scope.plain);
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
  return (await readParkedTurns(reader, query, limit)).flatMap((turn) => turn.calls);
}

/** A parked turn as a listing reads it: its id, its `TurnpikeNextExpiry` (ISO) when it has one, its parked calls. */
export interface ParkedTurn {
  id: string;
  nextExpiry?: string;
  calls: ParkedCall[];
}

/** The parked turns `query` lists, up to `limit` turns, each with its parked calls. */
export async function readParkedTurns(reader: TurnReader, query: string, limit: number): Promise<ParkedTurn[]> {
  const turns: Array<{ id: string; nextExpiry?: string; place: CallPlace; calls?: ParkedCall[] }> = [];
  for await (const execution of reader.client.workflow.list({ query, pageSize: 1_000 })) {
    const status = execution.typedSearchAttributes.get(agentTurnStatusKey);
    // Nothing is parked in a turn in any other status (a custom query may return those).
    if (status !== undefined && status !== 'awaiting-input') continue;
    const memo = status === undefined ? undefined : readPendingMemo(execution.memo?.[PENDING_MEMO_KEY]);
    const conversationId = execution.typedSearchAttributes.get(agentConversationIdKey);
    const parentTurnId = execution.typedSearchAttributes.get(turnpikeParentTurnIdKey);
    const startedBy = execution.memo?.[STARTED_BY_MEMO_KEY];
    const tenant = execution.typedSearchAttributes.get(turnpikeTenantKey);
    const nextExpiry = execution.typedSearchAttributes.get(turnpikeNextExpiryKey);
    const place: CallPlace = {
      ...(conversationId ? { conversationId } : {}),
      ...(tenant ? { tenant } : {}),
      ...(typeof startedBy === 'string' ? { startedBy } : {}),
      ...(parentTurnId ? parentOf(execution.workflowId, parentTurnId) : {}),
    };
    const complete = memo && memo.calls.every((call) => !call.inputOmitted);
    turns.push({
      id: execution.workflowId,
      ...(nextExpiry ? { nextExpiry: nextExpiry.toISOString() } : {}),
      place,
      ...(complete ? { calls: memo.calls.map(({ inputOmitted: _omitted, ...call }) => ({ ...call, input: call.input, turnWorkflowId: execution.workflowId, ...place })) } : {}),
    });
    if (turns.length >= limit) break;
  }
  // The rest are queried, a bounded number at a time: a parked turn is usually out of the
  // worker's cache, so each query replays it, and thousands at once would time out.
  return mapWithConcurrency(turns, LISTING_CONCURRENCY, async ({ id, nextExpiry, place, calls: fromMemo }) => {
    const turn = { id, ...(nextExpiry ? { nextExpiry } : {}) };
    if (fromMemo) return { ...turn, calls: fromMemo };
    try {
      const state = await reader.turnState(id);
      const calls = state.pending.map((call) => ({
        ...call,
        turnWorkflowId: id,
        ...place,
        ...(state.conversationId ? { conversationId: state.conversationId } : {}),
        ...(state.parentTurn ? parentOf(id, state.parentTurn.turnId) : {}),
      }));
      return { ...turn, calls };
    } catch {
      return { ...turn, calls: [] }; // It finished between the listing and the query.
    }
  });
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
