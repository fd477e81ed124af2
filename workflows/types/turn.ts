/**
 * A turn: its input and result, its parked calls, decisions and state, and the messages that decide them.
 * Pure types: nothing here runs.
 */
import type { EndedTurnStatus, TurnStatus } from './turn-statuses.js';
import type { JsonSchema, Message } from './messages.js';
import type { FinishReason, ModelSettings, Usage } from './model.js';
import type { ActivityCallOptions, ModelToolSpec, ToolServerLeftOut, ToolServersWait, ToolSpec } from './tools.js';
import type { ChildTurnView, ParentTurn } from './agent-tools.js';
import type { WorkflowStreamState } from './stream.js';
import type { TurnBudget, TurnSpend } from './budget.js';

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
   * Whether the turn, when started as a child workflow, signals `turnFinished` to its parent
   * as it ends. Default true: a conversation learns so that its turn ended (it may have
   * continued-as-new since it started the turn). `executeAgentTurn` and `startAgentTurn` set it
   * false, so a user's own parent workflow receives no signal it did not ask for.
   */
  notifyParent?: boolean;
  /**
   * When the turn hands over to a new run of itself (continue-as-new, at a step boundary, never
   * while a call is parked): once its run's history reaches `events` events or `bytes` bytes.
   * Default 8,000 events and 8 MB, under Temporal's warnings (10,240 events, 10 MB).
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

export type ToolCallOutcome = 'executed' | 'approved' | 'denied' | 'expired' | 'client' | 'error' | 'cancelled';

export interface ApprovalRecord {
  approvalId: string;
  approved: boolean;
  automatic: boolean;
  approver?: string;
  reason?: string;
  /** ISO 8601. */
  decidedAt: string;
}

export interface ToolCallRecord {
  toolCallId: string;
  toolName: string;
  input: unknown;
  outcome: ToolCallOutcome;
  output: unknown;
  isError: boolean;
  approval?: ApprovalRecord;
  /** An agent tool's call: the child turn's token usage (included in the turn's `usage`). */
  usage?: Usage;
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

export interface PendingToolCall {
  /**
   * `elicitation`: an MCP server asked the user for input while the call ran; answer it with `submitToolResult`.
   * `budget`: the turn reached a limit of its budget; approve to extend it by `input.extendBy`, deny to stop the turn.
   */
  kind: 'approval' | 'client-tool' | 'elicitation' | 'budget';
  approvalId?: string;
  /** For an elicitation: its id (a retried call's new question gets a new one, same toolCallId). */
  elicitationId?: string;
  /** For an elicitation: the server's question. */
  message?: string;
  /** For an elicitation: the JSON Schema (flat object) the accepted answer's `content` must fit. */
  requestedSchema?: JsonSchema;
  toolCallId: string;
  toolName: string;
  input: unknown;
  /** SHA-256 of the input's canonical JSON: a decision applies to exactly this input. */
  inputHash: string;
  /** ISO 8601. */
  requestedAt: string;
  /** ISO 8601. */
  expiresAt: string;
  /** Why the policy asked for a person, when it said. */
  reason?: string;
  /** Who may decide this approval, when the tool restricts it: listings show each approver what they may decide. */
  approvers?: string[];
  approverGroups?: string[];
}

/**
 * One approval decision, for the audit trail: a person's, a policy's (`automatic`), or what
 * ended the wait without one (expired, superseded, cancelled).
 */
export interface DecisionRecord {
  approvalId: string;
  toolCallId: string;
  toolName: string;
  outcome: 'approved' | 'denied' | 'expired' | 'superseded' | 'cancelled';
  approved: boolean;
  automatic: boolean;
  approver?: string;
  approverGroups?: string[];
  reason?: string;
  /** ISO 8601. */
  decidedAt: string;
  /** The hash of the input the decision was shown. */
  inputHash: string;
  /** The approver's edit, when they changed the input. */
  editedInput?: unknown;
}

/** What a webhook nudge says about an approval (see activities/notify.ts). */
export interface ApprovalNotification {
  event: 'parked' | 'expiring' | 'decided';
  turnId: string;
  conversationId?: string;
  /** A sub-agent's call: the turn whose agent tool call started this turn. */
  parentTurnId?: string;
  approvalId: string;
  toolCallId: string;
  toolName: string;
  input: unknown;
  inputHash: string;
  /** Why the policy asked for a person. */
  reason?: string;
  /** ISO 8601. */
  requestedAt: string;
  /** ISO 8601. */
  expiresAt: string;
  /** With `decided`. */
  outcome?: DecisionRecord['outcome'];
  approver?: string;
  decidedAt?: string;
}

/** `callContext` query: what an approver needs to decide a parked call. */
export interface CallContextRequest {
  toolCallId: string;
}

export interface CallContext {
  toolCallId: string;
  toolName: string;
  /** The user message that started the turn. */
  userMessage: string;
  /** What the model wrote in the step that made this call, before or around it. */
  assistantText: string;
  /** Results of the turn's earlier tool calls, in order. */
  earlierResults: Array<{ toolCallId: string; toolName: string; outcome: ToolCallOutcome; output: unknown; isError: boolean }>;
  /** The tool's input JSON Schema, for an edit-before-approve form (the turn validates the edit again). */
  inputSchema: JsonSchema;
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

export interface ApproveToolCallInput {
  approvalId: string;
  approved: boolean;
  reason?: string;
  approver?: string;
  /** The approver's groups, checked against the tool's `approverGroups` (the HTTP API fills them from the caller's token). */
  approverGroups?: string[];
  /** An approver's edit of the input; validated against the tool's schema again. */
  input?: unknown;
  /** When given, must equal the pending call's `inputHash`: binds the decision to what was shown. */
  inputHash?: string;
}

export interface ApproveToolCallResult {
  approvalId: string;
  toolCallId: string;
  approved: boolean;
  decidedAt: string;
}

export interface SubmitToolResultInput {
  toolCallId: string;
  output: unknown;
  isError?: boolean;
}

export interface SubmitToolResultResult {
  toolCallId: string;
  acceptedAt: string;
}
