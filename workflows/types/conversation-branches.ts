/**
 * A conversation's branches: regenerate, edit and resend, and the branch a conversation shows.
 * Pure types: nothing here runs. How branches share their history is in
 * workflows/conversation/conversation-branches.ts and docs/conversations.md.
 */
import type { Message } from './messages.js';

/** Why a branch exists: the conversation's first (`start`), a regenerated answer, an edited message. */
export type BranchReason = 'start' | 'regenerate' | 'edit';

/** A user message of a branch: its message id, its position in the branch's history, the turn that answers it. */
export type BranchMessageEntry = [messageId: string, at: number, turnWorkflowId: string];

/**
 * One branch as the conversation keeps it. The current branch's messages are the conversation's
 * history; any other branch keeps only the messages it does not share with `base`, the branch
 * whose first `baseAt` messages it shares (references into a tree, never a copy of the prefix).
 */
export interface StoredBranch {
  id: string;
  reason: BranchReason;
  /** The branch it was forked from, and at which message count; never changes. */
  forkedFrom?: string;
  forkedAt: number;
  /** Storage of a branch that is not current: see above. */
  base?: string;
  baseAt?: number;
  own?: Message[];
  /** Its user messages (the current branch's are the conversation's `messageIds`). */
  messageIds?: BranchMessageEntry[];
}

/** A fork waiting in the conversation's queue behind the turn it abandons. */
export interface QueuedFork {
  branch: string;
  reason: Exclude<BranchReason, 'start'>;
  /** The user message edited or answered again; where the branch forks is found when its turn starts. */
  target: string;
  /** Regenerate: the kept history ends with the user message, which the new turn answers again. */
  resend?: boolean;
}

/** A branch as listed by `branches`. */
export interface ConversationBranch {
  id: string;
  reason: BranchReason;
  forkedFrom?: string;
  forkedAt: number;
  /** How many messages its history holds. */
  messages: number;
  current: boolean;
  /** The turn that answered its last user message. */
  lastTurn?: string;
}

export interface ConversationBranches {
  current: string;
  branches: ConversationBranch[];
}
