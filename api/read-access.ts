/**
 * Who may read what through the HTTP API: one rule, which every route that shows a turn or a
 * conversation asks (the turn's state, a call's context, a turn's result, its stream and stream
 * tokens, decisions, a conversation's history and stream, `/api/chat`, the approvals listing).
 *
 * A caller may read a turn when they
 * - belong to one of the admin groups (`TURNPIKE_ADMIN_GROUPS`), or are an admin identity
 *   (`TURNPIKE_ADMINS`);
 * - started it through the API (`POST /api/turns` records the caller in the turn's memo), or may
 *   read the conversation it belongs to;
 * - may decide one of its parked calls, or decided one of its calls.
 * A caller may read a conversation when they are an admin, started it (its first message came
 * from them through the API), or may decide a parked call of its current turn.
 *
 * Anyone else is answered as if the turn or conversation did not exist (404), so that its
 * existence is not confirmed. A check that Temporal cannot answer now (no worker answers the
 * turn's query in time, the server refuses for load) is not a "no": it is asked again for the
 * client's `transientPatienceMs`, then fails with `TurnpikeUnavailableError` (503, `Retry-After`),
 * never 404: a rightful decision sent while the turn's worker is slow is decided, or told to retry. Operators keep full access through Temporal itself (CLI, Web UI,
 * codec server), which Temporal's own namespace access control protects.
 */
import { sameTenant } from './tenant-binding.js';
import { TurnpikeUnavailableError } from '../client/errors.js';
import { waitOutTransient } from '../client/transient-wait.js';
import type { DecisionRecord, TurnState } from '../workflows/types/index.js';
import type { PendingMemoCall } from '../workflows/context/pending-memo.js';
import type { StartRecord, TurnpikeClient } from '../client/turnpike-client.js';
import { mayDecide } from '../workflows/calls/call-checks.js';
import type { Caller } from './auth.js';

export interface ReadAccessOptions {
  /** Members of these groups read everything. Default `TURNPIKE_ADMIN_GROUPS` (comma-separated). */
  adminGroups?: readonly string[];
  /** These identities read everything. Default `TURNPIKE_ADMINS` (comma-separated). */
  admins?: readonly string[];
}

function listFromEnvironment(value: string | undefined): string[] {
  return (value ?? '').split(',').map((part) => part.trim()).filter(Boolean);
}

/**
 * The rights-bearing part of a parked turn's state, from the memo its description carried: its
 * parked calls (with their approvers) and its decisions. Undefined when the turn is not parked or
 * its decisions were too large for the memo; the `turnState` query answers then.
 */
function fromMemo(start: StartRecord | undefined): RightsState | undefined {
  const parked = start?.parked;
  return parked?.decisions ? { pending: parked.calls, decisions: parked.decisions } : undefined;
}

/** What the rights rest on: a turn's parked calls and its decisions (`TurnState` is one). */
interface RightsState {
  pending: readonly PendingMemoCall[];
  decisions?: readonly DecisionRecord[];
}

/** Conversation starters kept by {@link ReadAccess.conversationStarters}. */
const STARTERS_KEPT = 10_000;

export class ReadAccess {
  private readonly starters = new Map<string, string | undefined>();
  private readonly adminGroups: ReadonlySet<string>;
  private readonly admins: ReadonlySet<string>;

  constructor(
    private readonly client: TurnpikeClient,
    options: ReadAccessOptions = {},
  ) {
    this.adminGroups = new Set(options.adminGroups ?? listFromEnvironment(process.env.TURNPIKE_ADMIN_GROUPS));
    this.admins = new Set(options.admins ?? listFromEnvironment(process.env.TURNPIKE_ADMINS));
  }

  isAdmin(caller: Caller): boolean {
    return this.admins.has(caller.identity) || caller.groups.some((group) => this.adminGroups.has(group));
  }

  /** Whether `caller` may read the turn; false also when there is no such turn. */
  async mayReadTurn(caller: Caller, turnId: string, start?: StartRecord): Promise<boolean> {
    const record = start ?? (await this.startOf(turnId));
    if (!record) return false;
    // A caller bound to a tenant reads that tenant's turns only (api/tenant-binding.ts).
    if (!sameTenant(caller, this.isAdmin(caller), record.tenant)) return false;
    if (this.isAdmin(caller) || record.startedBy === caller.identity) return true;
    if (record.conversationId && (await this.startedConversation(caller, record.conversationId))) return true;
    return this.decides(caller, turnId, record);
  }

  /**
   * Whether `caller` may send a decision (or a delegation) on this approval: whoever may read the
   * turn, and whoever could have decided the call once it is settled (its `eligible` approvers),
   * so that a late approver is told it was decided (409) rather than that nothing is there (404).
   */
  async mayDecideApproval(caller: Caller, turnId: string, approvalId: string): Promise<boolean> {
    const start = await this.startOf(turnId);
    if (!start) return false;
    if (await this.mayReadTurn(caller, turnId, start)) return true;
    // Another tenant's turn is not there for a caller bound to a tenant, settled calls included.
    if (!sameTenant(caller, this.isAdmin(caller), start.tenant)) return false;
    const state = fromMemo(start) ?? (await this.stateOf(turnId));
    const settled = state?.decisions?.find((decision) => decision.approvalId === approvalId);
    return settled?.eligible !== undefined && mayDecide(settled.eligible, { approver: caller.identity, approverGroups: caller.groups });
  }

  /**
   * Whether `caller` may read the conversation: `absent` when there is none (a first message may
   * create it), else true or false.
   */
  async mayReadConversation(caller: Caller, conversationId: string): Promise<boolean | 'absent'> {
    const record = await this.startOf(conversationId);
    if (!record) return 'absent';
    if (!sameTenant(caller, this.isAdmin(caller), record.tenant)) return false;
    if (this.isAdmin(caller) || record.startedBy === caller.identity) return true;
    const turnId = (await this.patiently(`the state of conversation ${conversationId}`, () => this.client.conversationState(conversationId)))?.currentTurn?.turnWorkflowId;
    return turnId !== undefined && (await this.decides(caller, turnId));
  }

  /**
   * Whether `caller` may read a turn listed as parked, from what the listing knows (its starter,
   * its conversation's starter): no request per call. An approval the caller may decide is
   * readable by that alone.
   */
  mayReadListed(caller: Caller, call: { startedBy?: string; conversationId?: string; tenant?: string }, conversationStarters: ReadonlyMap<string, string | undefined>): boolean {
    if (!sameTenant(caller, this.isAdmin(caller), call.tenant)) return false;
    if (this.isAdmin(caller) || call.startedBy === caller.identity) return true;
    return call.conversationId !== undefined && conversationStarters.get(call.conversationId) === caller.identity;
  }

  /**
   * The starters of these conversations, for {@link mayReadListed}. A conversation's starter never
   * changes, so each is asked once and kept (the latest {@link STARTERS_KEPT}): a listing that
   * runs every few seconds does not describe every listed conversation again.
   */
  async conversationStarters(conversationIds: Iterable<string>): Promise<Map<string, string | undefined>> {
    const ids = [...new Set(conversationIds)];
    const unknown = ids.filter((id) => !this.starters.has(id));
    const records = await Promise.all(unknown.map((id) => this.client.describeStart(id).catch(() => undefined)));
    unknown.forEach((id, index) => {
      // Not found (or not reachable now): asked again next time.
      if (!records[index]) return;
      this.starters.set(id, records[index].startedBy);
      if (this.starters.size > STARTERS_KEPT) this.starters.delete(this.starters.keys().next().value!);
    });
    return new Map(ids.map((id) => [id, this.starters.get(id)]));
  }

  private async startedConversation(caller: Caller, conversationId: string): Promise<boolean> {
    return (await this.startOf(conversationId))?.startedBy === caller.identity;
  }

  /**
   * The caller may decide one of the turn's parked calls, or decided one of its calls: from the
   * parked turn's memo when the description carried a complete one (no worker involved), else
   * from the turn's `turnState` query (a replay on a worker when the turn is out of its cache).
   */
  private async decides(caller: Caller, turnId: string, start?: StartRecord): Promise<boolean> {
    const state = fromMemo(start) ?? (await this.stateOf(turnId));
    if (!state) return false;
    const approver = { approver: caller.identity, approverGroups: caller.groups };
    if (state.pending.some((call) => (call.kind === 'approval' || call.kind === 'budget') && mayDecide(call, approver))) return true;
    return (state.decisions ?? []).some((decision) => !decision.automatic && decision.approver === caller.identity);
  }

  /** Who started the workflow (undefined: none such), waiting out failures that pass. */
  private startOf(workflowId: string): Promise<StartRecord | undefined> {
    return waitOutTransient(`who may read ${workflowId}`, this.client.transientPatienceMs, () => this.client.describeStart(workflowId));
  }

  /** The turn's state, waiting out failures that pass; undefined when it cannot be read for good (no such turn, a failed query). */
  private async stateOf(turnId: string): Promise<TurnState | undefined> {
    return this.patiently(`who may decide in turn ${turnId}`, () => this.client.turnState(turnId));
  }

  /** `read()`, waiting out failures that pass (then `TurnpikeUnavailableError`); undefined on any other failure. */
  private async patiently<T>(what: string, read: () => Promise<T>): Promise<T | undefined> {
    try {
      return await waitOutTransient(what, this.client.transientPatienceMs, read);
    } catch (error) {
      if (error instanceof TurnpikeUnavailableError) throw error;
      return undefined;
    }
  }
}
