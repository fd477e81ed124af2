/**
 * A conversation's branches, kept as a tree of shared prefixes (docs/conversations.md,
 * "Branches").
 *
 * The current branch is the root: its messages are the conversation's `history`, as in a
 * conversation that never branched. Every other branch keeps only the messages it does not share
 * with its `base` branch (`own`, after the first `baseAt` messages of `base`). Forking moves the
 * current branch's tail into its own record and hangs it on the new branch; making another branch
 * current turns the path between them around. No prefix is ever held twice, in the state or in
 * what a continue-as-new carries.
 *
 * Pure functions on the conversation's state: no command.
 */
import type { BranchMessageEntry, BranchReason, ConversationBranch, ConversationBranches, ConversationCarryOver, Message, StoredBranch } from '../types/index.js';

/** The branch of a conversation that never branched. */
export const MAIN_BRANCH = 'main';
/** The patch of branches: regenerate, editMessage and switchBranch (docs/versioning.md). */
export const BRANCHES_PATCH = '0.4.0-branches';

type BranchedState = ConversationCarryOver & { branches: StoredBranch[]; branch: string };

function branched(state: ConversationCarryOver): BranchedState {
  if (!state.branches) {
    state.branches = [{ id: MAIN_BRANCH, reason: 'start', forkedAt: 0 }];
    state.branch = MAIN_BRANCH;
  }
  return state as BranchedState;
}

export function currentBranch(state: ConversationCarryOver): string {
  return state.branch ?? MAIN_BRANCH;
}

function record(state: ConversationCarryOver, id: string): StoredBranch | undefined {
  return state.branches?.find((branch) => branch.id === id);
}

export function hasBranch(state: ConversationCarryOver, id: string): boolean {
  return id === currentBranch(state) || record(state, id) !== undefined;
}

/** A branch's messages: the history for the current one, else its base's shared prefix and its own. */
export function branchMessages(state: ConversationCarryOver, id: string): Message[] {
  const branch = record(state, id);
  if (id === currentBranch(state) || !branch?.base) return state.history;
  return [...branchMessages(state, branch.base).slice(0, branch.baseAt), ...(branch.own ?? [])];
}

function branchLength(state: ConversationCarryOver, id: string): number {
  const branch = record(state, id);
  if (id === currentBranch(state) || !branch?.base) return state.history.length;
  return Math.min(branch.baseAt ?? 0, branchLength(state, branch.base)) + (branch.own?.length ?? 0);
}

export function branchMessageIds(state: ConversationCarryOver, id: string): BranchMessageEntry[] {
  return id === currentBranch(state) ? (state.messageIds ?? []) : (record(state, id)?.messageIds ?? []);
}

/**
 * Forks the current branch after its first `at` messages: the new branch `id` becomes current
 * with those messages (shared: the old branch keeps only its messages after them).
 */
export function forkBranch(state: ConversationCarryOver, id: string, reason: Exclude<BranchReason, 'start'>, at: number): void {
  const tree = branched(state);
  const old = record(tree, tree.branch)!;
  old.base = id;
  old.baseAt = at;
  old.own = tree.history.slice(at);
  old.messageIds = tree.messageIds ?? [];
  tree.branches.push({ id, reason, forkedFrom: tree.branch, forkedAt: at });
  tree.history = tree.history.slice(0, at);
  tree.messageIds = old.messageIds.filter(([, position]) => position < at);
  tree.branch = id;
}

/** Makes branch `id` current: the path from it to the current branch is turned around, each branch's messages unchanged. */
export function switchBranch(state: ConversationCarryOver, id: string): void {
  const tree = branched(state);
  if (id === tree.branch) return;
  // The path from `id` up to the current branch (the root), and each one's messages.
  const path: StoredBranch[] = [];
  for (let branch = record(tree, id); branch; branch = branch.base ? record(tree, branch.base) : undefined) path.push(branch);
  const messages = new Map<string, Message[]>();
  for (const branch of path) messages.set(branch.id, branchMessages(tree, branch.id));
  const ids = new Map(path.map((branch) => [branch.id, branchMessageIds(tree, branch.id)]));
  // From the root down: each parent hangs on its child, where the child left it.
  for (let index = path.length - 1; index > 0; index--) {
    const parent = path[index];
    const child = path[index - 1];
    const at = child.baseAt ?? 0;
    parent.base = child.id;
    parent.baseAt = at;
    parent.own = messages.get(parent.id)!.slice(at);
    parent.messageIds = ids.get(parent.id)!;
  }
  const target = path[0];
  tree.history = messages.get(target.id)!;
  tree.messageIds = ids.get(target.id)!;
  delete target.base;
  delete target.baseAt;
  delete target.own;
  delete target.messageIds;
  tree.branch = target.id;
}

/** The `branches` query: every branch, with its length and last turn. */
export function listBranches(state: ConversationCarryOver): ConversationBranches {
  const current = currentBranch(state);
  const stored = state.branches ?? [{ id: MAIN_BRANCH, reason: 'start' as const, forkedAt: 0 }];
  const branches: ConversationBranch[] = stored.map((branch) => {
    const last = branchMessageIds(state, branch.id).at(-1);
    return {
      id: branch.id,
      reason: branch.reason,
      ...(branch.forkedFrom !== undefined ? { forkedFrom: branch.forkedFrom } : {}),
      forkedAt: branch.forkedAt,
      messages: branchLength(state, branch.id),
      current: branch.id === current,
      ...(last ? { lastTurn: last[2] } : {}),
    };
  });
  return { current, branches };
}
