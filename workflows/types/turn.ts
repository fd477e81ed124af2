/**
 * A turn: its input and result, its state, and what it carries to its next run. Its parked calls
 * and the messages that decide them are in parked-calls.ts, its call records in call-records.ts.
 * Pure types: nothing here runs.
 */
import type { EndedTurnStatus, TurnStatus } from './turn-statuses.js';
import type { JsonSchema, Message } from './messages.js';
import type { FinishReason, ModelSettings, Usage } from './model.js';
import type { ActivityCallOptions, ModelToolSpec, ToolServerLeftOut, ToolServersWait, ToolSpec } from './tools.js';
import type { ChildTurnView, ParentTurn } from './agent-tools.js';
import type { WorkflowStreamState } from './stream.js';
import type { TurnBudget, TurnSpend } from './budget.js';
import type { DecisionRecord, ToolCallRecord } from './call-records.js';
import type { PendingToolCall } from './parked-calls.js';
import type { ForkReference } from './fork.js';

export interface AgentTurnInput {
  conversationId?: string;
  model: ModelSettings;
  system?: string;
  /** History, ending with the new user message. */
  messages: Message[];
  /** Registered tool names offered this turn (default: all). */
  tools?: string[];
  /** Default 10. */
  maxSteps?: number;
  /** e.g. '24h' (default); expiry is a denial. */
  approvalTimeout?: string;
  /** e.g. '24h' (default); expiry is an error result. */
  clientToolTimeout?: string;
  /** Timeout and retries of each model call. Default: 5 minutes, 10 attempts with backoff. */
  modelCallOptions?: ActivityCallOptions;
  /**
   * The task queue its model calls are scheduled on (default: the turn's own). Set by a client
   * with `modelTaskQueue`, for a queue whose rate limit holds across every worker
   * (`createWorker({ modelCapacity })`, docs/production.md "Model capacity shared by the fleet").
   * Its child turns, hand-overs and forks keep it.
   */
  modelTaskQueue?: string;
  /**
   * Whether the turn, when started as a child workflow, signals `turnFinished` to its parent
   * as it ends. Default true: a conversation learns so that its turn ended (it may have
   * continued-as-new since it started the turn). `executeAgentTurn` and `startAgentTurn` set it
   * false, so a user's own parent workflow receives no signal it did not ask for.
   */
  notifyParent?: boolean;
  /**
   * When the turn hands over to a new run of itself (continue-as-new, at a step boundary, never
   * while a call is parked): once its run's history reaches `events` events or `bytes` bytes.
   * Default 8,000 events and 8 MB, under Temporal's warnings (10,240 events, 10 MB); at least
   * 100 events and 2 MiB (a smaller limit is refused as the turn starts).
   */
  historyLimit?: HistoryLimit;
  /**
   * A typed final answer (docs/typed-output.md): the model's answer without a tool call must be
   * JSON matching `schema`; the validated object is the result's `output`.
   */
  output?: TurnOutputSpec;
  /** Limits a person can extend: reaching one parks a budget approval (docs/budgets.md). */
  budget?: TurnBudget;
  /**
   * What a budget approval offers to add to a reached limit by default: this limit's size here,
   * else the `budget`'s own. A conversation sets its budget's limits, as its turns get what remains.
   */
  budgetIncrement?: TurnBudget;
  /** Set by the turn itself when it hands over: everything the next run carries on with. */
  carried?: TurnCarryOver;
  /**
   * Agents this turn may hand the conversation to: the model is offered `transfer_to_<agent>`
   * for each, and a call of one ends the turn with `handoff` (see docs/conversations.md).
   */
  handoffs?: HandoffTarget[];
  /** Set when handoffs are offered but not allowed now: every handoff call gets this error result instead. */
  handoffsRefused?: string;
  /** Set by a parent turn on the child turn an agent tool started. */
  parentTurn?: ParentTurn;
  /** How deep agent tools may nest under this turn (default: the worker's, 3). Inherited by child turns. */
  maxAgentDepth?: number;
  /**
   * Set by `forkTurn`: the turn starts after another turn's step `atStep`, whose transcript up to
   * there (`prefixLength` messages) it shares by reference; `messages` then holds only what comes
   * after it (usually nothing).
   */
  forkOf?: ForkReference;
}

/** An agent a turn may hand the conversation to, and what the model is told about it. */
export interface HandoffTarget {
  agent: string;
  description: string;
}

/** What a typed final answer must be (`AgentTurnInput.output`). */
export interface TurnOutputSpec {
  /** JSON Schema of an object (`type: 'object'`): the answer must be JSON matching it. */
  schema: JsonSchema;
  /** The format's name, as providers are told it: `^[a-zA-Z0-9_-]{1,64}$`. Default `final_answer`. */
  name?: string;
  /** Times an invalid answer is sent back to the model with its errors, 0 to 10. Default 2. */
  maxRetries?: number;
}

export interface HistoryLimit {
  events?: number;
  bytes?: number;
}

/** A turn's state at a hand-over to its next run (see `workflows/turn/turn-hand-over.ts`). */
export interface TurnCarryOver {
  /** Hand-overs so far, this one included. */
  handOvers: number;
  /**
   * When the turn's first run started, in ms since the epoch: its wall time counts from here in
   * every run. Absent in a run handed over to by a turnpike that did not carry it (that run
   * counts from its own start).
   */
  startedAtMs?: number;
  step: number;
  lastText: string;
  usage: Usage;
  appended: Message[];
  records: ToolCallRecord[];
  decisions: DecisionRecord[];
  tools: { specs: ToolSpec[]; modelTools: ModelToolSpec[]; toolsHash: string; leftOut?: ToolServerLeftOut[] };
  /** Every tool call of the turn so far, settled, with its approval id: late decisions are refused as before. */
  calls: CarriedCall[];
  /** The turn's event stream: its offsets go on, its last events are kept. */
  stream: WorkflowStreamState;
  /** Invalid typed answers sent back to the model so far (absent when none). */
  outputRetries?: number;
  /** The turn's budget limits, as extended so far. */
  budget?: TurnBudget;
  /** Tool calls its agent tools' child turns made, counted in its spend (absent when none). */
  childToolCalls?: number;
}

export interface CarriedCall {
  toolCallId: string;
  approvalId?: string;
  /** The ledger's entry, as JSON. */
  entry: unknown;
}

/** The model step that ended a turn with status `max-tokens` or `refused`. */
export interface CutOffStep {
  /** Which step (1-based). */
  step: number;
  finishReason: Extract<FinishReason, 'length' | 'content-filter'>;
  /** The provider's own value, e.g. `max_tokens` or `model_context_window_exceeded`. */
  providerFinishReason?: string;
}

export interface AgentTurnResult {
  status: EndedTurnStatus;
  text: string;
  /** The messages this turn appended to the history it was given. */
  messages: Message[];
  steps: number;
  usage: Usage;
  toolCalls: ToolCallRecord[];
  /** Set when a newer user message superseded this turn (status is then 'cancelled'). */
  supersededBy?: string;
  /** Set when the model's last reply was cut off or refused (status `max-tokens` or `refused`). */
  cutOff?: CutOffStep;
  /** Every approval decision of the turn, oldest first (absent when none). */
  decisions?: DecisionRecord[];
  /** Set when the model handed the conversation to another agent (status is then 'completed'). */
  handoff?: { to: string };
  /** The validated typed answer: present when the turn asked for `output` and its status is `completed`. */
  output?: unknown;
  /** Why the last answer was not valid typed output (status `invalid-output`). */
  outputErrors?: string[];
  /** With a `budget`: what the turn spent. */
  spend?: TurnSpend;
  /** With a `budget`: its limits at the end, extensions included. */
  budget?: TurnBudget;
}

export interface TurnState {
  status: TurnStatus;
  step: number;
  pending: PendingToolCall[];
  conversationId?: string;
  /** The turn's approval decisions so far, oldest first (absent when none). */
  decisions?: DecisionRecord[];
  /** MCP servers the turn (offered all tools) goes without, because they did not answer its first step (absent when none). */
  toolsLeftOut?: ToolServerLeftOut[];
  /** While a model step is retried because MCP servers it needs cannot list their tools: which, and why (absent otherwise). */
  waitingForServers?: ToolServersWait;
  /** With a `budget`: its limits now and what the turn has spent. */
  budget?: { limits: TurnBudget; spent: TurnSpend };
  /** Child turns of agent tool calls still running (absent when none): query each by its `turnId`. */
  children?: ChildTurnView[];
  /** Set on a child turn: the turn and tool call that started it. */
  parentTurn?: ParentTurn;
}
