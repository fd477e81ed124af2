/**
 * The turns a caller may evaluate over the HTTP API (docs/evaluations.md, "Over the HTTP API").
 * Listed turns: every one must be readable (`ReadAccess.mayReadTurn`, the rule of
 * `GET /api/turns/:turnId`), else the whole request is refused before anything starts. A query:
 * the turns it names are listed (at most `QUERY_SCAN_LIMIT`) and only those the caller may read
 * from the listing alone are kept (`ReadAccess.mayReadListed`: the caller's tenant, and turns it
 * started or whose conversation it started, or every turn for an admin).
 */
import { evaluableTurnsQuery } from '../client/evaluations.js';
import { STARTED_BY_MEMO_KEY } from '../client/listings.js';
import type { TurnpikeClient } from '../client/turnpike-client.js';
import { agentConversationIdKey, turnpikeTenantKey } from '../workflows/context/search-attributes.js';
import { defaultEvaluationQueue } from '../workflows/evaluation/evaluation-types.js';
import type { Caller } from './auth.js';
import type { ReadAccess } from './read-access.js';

/** Reading rights checked at once for a list of turns. */
const CHECKS_AT_ONCE = 16;

/** Most turns a query's listing reads before the caller is asked to narrow the query. */
export const QUERY_SCAN_LIMIT = 10_000;

/** The first listed turn the caller may not read (or that does not exist), or undefined when it may read them all. */
export async function firstUnreadable(access: ReadAccess, who: Caller, turnIds: readonly string[]): Promise<string | undefined> {
  for (let at = 0; at < turnIds.length; at += CHECKS_AT_ONCE) {
    const batch = turnIds.slice(at, at + CHECKS_AT_ONCE);
    const readable = await Promise.all(batch.map((turnId) => access.mayReadTurn(who, turnId)));
    const refused = readable.indexOf(false);
    if (refused >= 0) return batch[refused];
  }
  return undefined;
}

interface ListedTurn {
  id: string;
  at: number;
  startedBy?: string;
  conversationId?: string;
  tenant?: string;
}

/** A visibility query's syntax error, as the server reports it (gRPC INVALID_ARGUMENT). */
function invalidQuery(error: unknown): string | undefined {
  const cause = error as { code?: number; details?: string; message?: string; cause?: { code?: number; details?: string } };
  if (cause?.code === 3) return cause.details ?? cause.message;
  if (cause?.cause?.code === 3) return cause.cause.details ?? cause.message;
  return undefined;
}

/**
 * The turns of `query` the caller may read, oldest first, at most `limit`; or why the query is
 * refused (not a valid query, names more than `QUERY_SCAN_LIMIT` turns, or more than `limit` the
 * caller may read). The evaluation queue is the client's default one (`<task queue>-eval`).
 */
export async function readableTurnsOfQuery(client: TurnpikeClient, access: ReadAccess, who: Caller, query: string, limit: number): Promise<{ turnIds: string[] } | { problem: string }> {
  const found: ListedTurn[] = [];
  try {
    for await (const execution of client.client.workflow.list({ query: evaluableTurnsQuery(query, defaultEvaluationQueue(client.taskQueue)), pageSize: 1_000 })) {
      if (found.length === QUERY_SCAN_LIMIT) return { problem: `the query names more than ${QUERY_SCAN_LIMIT} turns; narrow it` };
      const startedBy = execution.memo?.[STARTED_BY_MEMO_KEY];
      const conversationId = execution.typedSearchAttributes.get(agentConversationIdKey);
      const tenant = execution.typedSearchAttributes.get(turnpikeTenantKey);
      found.push({
        id: execution.workflowId,
        at: execution.startTime.getTime(),
        ...(typeof startedBy === 'string' ? { startedBy } : {}),
        ...(conversationId ? { conversationId } : {}),
        ...(tenant ? { tenant } : {}),
      });
    }
  } catch (error) {
    const problem = invalidQuery(error);
    if (problem !== undefined) return { problem: `the query is not a valid visibility query: ${problem}` };
    throw error;
  }
  const admin = access.isAdmin(who);
  const starters = admin ? new Map<string, string | undefined>() : await access.conversationStarters(found.flatMap((turn) => (turn.conversationId && turn.startedBy !== who.identity ? [turn.conversationId] : [])));
  const readable = found.filter((turn) => access.mayReadListed(who, turn, starters));
  if (readable.length > limit) return { problem: `the query names more than ${limit} turns this caller may read; narrow it or raise limit (at most 1000)` };
  return { turnIds: readable.sort((a, b) => a.at - b.at).map((turn) => turn.id) };
}
