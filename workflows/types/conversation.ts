/**
 * Conversations: a workflow that runs turn after turn, and the messages it takes.
 * Pure types: nothing here runs.
 */
import type { WorkflowStreamState } from './stream.js';
import type { Message, UserContentPart } from './messages.js';
import type { ModelSettings } from './model.js';
import type { ActivityCallOptions } from './tools.js';
import type { AgentTurnResult, TurnOutputSpec } from './turn.js';
import type { TurnBudget, TurnSpend } from './budget.js';
import type { ForkReference } from './fork.js';
import type { BranchMessageEntry, QueuedFork, StoredBranch } from './conversation-branches.js';

/** What a conversation does with a message that arrives while a turn is running or parked. */
export type ParkedMessagePolicy = 'queue' | 'supersede';

/** Per-turn settings a conversation passes to each turn; a message may override them. */
export interface TurnOptions {
  model?: ModelSettings;
  system?: string;
  tools?: string[];
  maxSteps?: number;
  approvalTimeout?: string;
  clientToolTimeout?: string;
  modelCallOptions?: ActivityCallOptions;
}

/**
 * One agent of a conversation: its own model, system prompt and tools, and the agents it may
 * hand the conversation to (by name). Data only; see docs/conversations.md, "Handoffs".
 */
export interface AgentDefinition {
  model: ModelSettings;
  system?: string;
  /** Registered tool names it is offered (default: all). */
  tools?: string[];
  /** Names of the conversation's other agents it may hand the conversation to. */
  handoffs?: string[];
  /** What the model of an agent that may hand to this one is told about it. */
  description?: string;
}

export interface AgentConversationInput extends TurnOptions {
  /** Required unless `agents` is given; then each agent's own model is used. */
  model?: ModelSettings;
  /** The conversation's agents by name (letters, digits, `_`, `-`; at most 52 characters). */
  agents?: Record<string, AgentDefinition>;
  /** The agent that answers first (default: the first of `agents`). */
  agent?: string;
  /** Default: the workflow id. */
  conversationId?: string;
  /** Default 'queue'. */
  policy?: ParkedMessagePolicy;
  /**
   * Limits over all the conversation's turns (docs/budgets.md): each turn is given what remains,
   * and its spend, and any extension a person granted in it, count for the conversation.
   */
  budget?: TurnBudget;
  /** The task queue of its turns' model calls (`AgentTurnInput.modelTaskQueue`); default the turns' own. */
  modelTaskQueue?: string;
  /** State carried across continue-as-new; callers leave it out. */
  carried?: ConversationCarryOver;
}

export interface SendMessageInput {
  text: string;
  /**
   * Images, documents and further text sent with `text`, in this order: the turn's user message
   * is `[{ type: 'text', text }, ...content]`. Checked as a turn's images and documents are
   * (`binaryPartsProblem`), together with the conversation's history; a message that fails is
   * refused (`InvalidRequest`) and the conversation is left as it was.
   */
  content?: UserContentPart[];
  /** Caller-chosen id: a retried request with the same id starts no second turn. */
  messageId?: string;
  /** Overrides the conversation's policy for this message. */
  policy?: ParkedMessagePolicy;
  /** Overrides the conversation's turn settings for this message's turn. */
  options?: TurnOptions;
  /** A typed final answer for this message's turn only (docs/typed-output.md). */
  output?: TurnOutputSpec;
}

export interface SendMessageResult {
  messageId: string;
  turnWorkflowId: string;
  turnNumber: number;
  /** True when the turn waits for an earlier one to end. */
  queued: boolean;
  /** The running turn this message superseded, under the supersede policy. */
  supersededTurn?: string;
}

/** `regenerate`: answer a user message again, on a new branch that becomes current. */
export interface RegenerateInput {
  /** The turn whose answer is regenerated (its workflow id); default the current branch's last. */
  turn?: string;
  /** Settings for the new turn only (another model, system prompt, tools). */
  options?: TurnOptions;
}

/** `editMessage`: replace a user message and answer it, on a new branch that becomes current. */
export interface EditMessageInput {
  /** The id of the user message to replace (its `sendMessage` id, or useChat's message id). */
  messageId: string;
  text: string;
  content?: UserContentPart[];
  /** The edited message's id; default `messageId`. */
  newMessageId?: string;
  options?: TurnOptions;
}

export interface SwitchBranchInput {
  branch: string;
}

/** What `regenerate` and `editMessage` return: the new turn, as `sendMessage` does, and its branch. */
export interface BranchTurnResult extends SendMessageResult {
  branch: string;
}

export interface QueuedMessage {
  messageId: string;
  text: string;
  content?: UserContentPart[];
  options?: TurnOptions;
  output?: TurnOutputSpec;
  turnWorkflowId: string;
  turnNumber: number;
  /** Set by `regenerate` and `editMessage`: the branch this message's turn starts. */
  fork?: QueuedFork;
}

export interface TurnFinishedInput {
  turnWorkflowId: string;
  result?: AgentTurnResult;
  /** Set instead of `result` when the turn failed. */
  failure?: string;
  /** With `failure`, for a turn with a budget: what it spent before it failed, and its limits then. */
  spend?: TurnSpend;
  budget?: TurnBudget;
}

export interface SupersedeTurnInput {
  reason: string;
  messageId?: string;
}

export interface ConversationCarryOver {
  history: Message[];
  turnCount: number;
  queue: QueuedMessage[];
  /**
   * The turn running now. `handoff`: a turn that goes on with the agent a handoff named, on the
   * same user message (which the history already holds). `output`: the message's typed answer,
   * asked of the handed-to agent's turn too.
   */
  current?: { turnWorkflowId: string; turnNumber: number; messageId: string; text: string; content?: UserContentPart[]; output?: TurnOutputSpec; handoff?: { from: string; to: string }; resent?: boolean };
  /** With `agents`: the agent that answers now. */
  agent?: string;
  /** Handoffs since the last user message, against ping-pong between agents. */
  handoffsInARow?: number;
  finished: TurnFinishedInput[];
  /** Recent message ids and their replies, for idempotent sendMessage. */
  seen: Array<[string, SendMessageResult]>;
  failedTurns: string[];
  runs: number;
  /** The conversation's event stream (its recent part), handed to the next run. */
  stream?: WorkflowStreamState;
  /** With a budget: its limits, as extended, and what the finished turns spent. */
  budget?: ConversationBudgetState;
  /** The current branch's user messages: id, position in `history`, turn. */
  messageIds?: BranchMessageEntry[];
  /** Once the conversation has branched: every branch, and the current one's id. */
  branches?: StoredBranch[];
  branch?: string;
  /** Branches created so far (their ids count up). */
  branchCount?: number;
}

/** A conversation's budget: its limits (extensions included) and what its finished turns spent. */
export interface ConversationBudgetState {
  limits: TurnBudget;
  spent: TurnSpend;
}

export interface ConversationState {
  conversationId: string;
  policy: ParkedMessagePolicy;
  turns: number;
  messages: number;
  currentTurn?: { turnWorkflowId: string; turnNumber: number };
  queued: Array<{ messageId: string; turnWorkflowId: string }>;
  failedTurns: string[];
  /** How many runs (continue-as-new) this conversation has had. */
  runs: number;
  /** With `agents`: the agent that answers now. */
  agent?: string;
  /** With a budget: its limits and what its finished turns spent. */
  budget?: ConversationBudgetState;
  /** Once the conversation has branched: the current branch. */
  branch?: string;
}

export interface HistoryPageRequest {
  offset?: number;
  limit?: number;
  /** A conversation's branch (default the current one). */
  branch?: string;
}

export interface HistoryPage {
  messages: Message[];
  offset: number;
  total: number;
  /**
   * A forked turn's `transcript` query: the messages below `forkOf.prefixLength` are the
   * original's, read from it (a page asked for them holds none); see `readTranscript`.
   */
  forkOf?: ForkReference;
}
