/**
 * Provider-neutral types shared by the workflows, the activities and the client.
 * Pure types: nothing here runs. Shapes follow the contract in shared/design/contract.md.
 */
import type { WorkflowStreamState } from '@temporalio/workflow-streams/workflow';
import type { EndedTurnStatus, TurnStatus } from './turn-statuses.js';
import type { TurnEvent } from './turn-events.js';

export type { EndedTurnStatus, TurnStatus } from './turn-statuses.js';

/** JSON Schema as produced by `z.toJSONSchema`; sent to the model and used by update validators. */
export type JsonSchema = Record<string, unknown>;

export interface TextPart {
  type: 'text';
  text: string;
}

export interface ToolCallPart {
  type: 'tool-call';
  toolCallId: string;
  toolName: string;
  /**
   * The arguments the model produced. When a provider receives arguments that are not valid
   * JSON it keeps the raw text here as a string; validation then turns the call into an error
   * result the model can correct.
   */
  input: unknown;
}

export interface ToolResultPart {
  type: 'tool-result';
  toolCallId: string;
  toolName: string;
  output: unknown;
  isError?: boolean;
}

/**
 * A model's reasoning ("thinking"), kept so that it can be sent back, exactly as received, to the
 * provider that produced it: Anthropic requires a thinking turn's blocks, signatures intact, when
 * the model continues after a tool call, even if the turn was parked for days in between.
 *
 * It is never part of a turn's `text`, and it is dropped (not translated) when the history goes to
 * another provider: a signature only means something to the provider that issued it.
 */
export interface ReasoningPart {
  type: 'reasoning';
  /** The provider that produced it; the only one it is ever sent to. */
  provider: ReasoningProvider;
  /** The reasoning as the provider returned it; '' when it was redacted or omitted. */
  text: string;
  /** Anthropic `thinking.signature`: opaque, sent back verbatim. */
  signature?: string;
  /** Anthropic `redacted_thinking.data`: encrypted reasoning with no readable text, sent back verbatim. */
  redactedData?: string;
  /** OpenAI Responses: the reasoning item's id (`rs_…`), sent back with it. */
  itemId?: string;
  /**
   * OpenAI Responses: the reasoning item's `encrypted_content`, opaque, sent back verbatim. With
   * `store: false` (turnpike's default) OpenAI keeps nothing between calls, so this is the only
   * copy of the model's reasoning, and a continuation after a tool call needs it.
   */
  encryptedContent?: string;
  /** OpenAI Responses: the item's summary texts, in order (`text` is them joined by a blank line). */
  summary?: string[];
}

/**
 * Providers whose reasoning a {@link ReasoningPart} can carry: `anthropic` (thinking blocks) and
 * `openai` (reasoning items of the Responses API, provider `openai-responses`; Chat Completions
 * returns no reasoning and takes none back).
 */
export type ReasoningProvider = 'anthropic' | 'openai';

/**
 * Where an image's or a document's bytes are: inline as base64 (checked against the size limits
 * in `workflows/binary-parts.ts` when the turn starts, because they travel in workflow history),
 * or a URL the provider fetches itself.
 */
export type BinarySource =
  | {
      type: 'base64';
      /** e.g. `image/png`, `application/pdf`. */
      mediaType: string;
      /** The bytes, base64-encoded (no `data:` prefix). */
      data: string;
    }
  | {
      type: 'url';
      /** An `https://` (or `http://`) URL the provider can fetch. */
      url: string;
      /** Optional; the provider infers it from the response when absent. */
      mediaType?: string;
    };

/**
 * An image in a user message: PNG, JPEG, GIF or WebP. Sent to OpenAI Chat Completions as an
 * `image_url` part, to the Responses API as `input_image`, to Anthropic as an `image` block.
 */
export interface ImagePart {
  type: 'image';
  source: BinarySource;
  /** OpenAI only (ignored by Anthropic): how closely the model looks. Default `auto`. */
  detail?: 'low' | 'high' | 'auto';
}

/**
 * A PDF document in a user message. Sent to OpenAI Chat Completions as a `file` part (base64
 * only: Chat Completions takes no file URL), to the Responses API as `input_file`, to Anthropic
 * as a `document` block.
 */
export interface DocumentPart {
  type: 'document';
  source: BinarySource;
  /** The name the model sees; OpenAI requires one and gets `document.pdf` when it is left out. */
  filename?: string;
}

/** What a user message may hold besides plain text. */
export type UserContentPart = TextPart | ImagePart | DocumentPart;

export interface UserMessage {
  role: 'user';
  content: string | UserContentPart[];
}

export interface AssistantMessage {
  role: 'assistant';
  /** In the order the model produced them; reasoning parts, when present, come first. */
  content: Array<TextPart | ToolCallPart | ReasoningPart>;
}

export interface ToolMessage {
  role: 'tool';
  content: ToolResultPart[];
}

export type Message = UserMessage | AssistantMessage | ToolMessage;

/**
 * `openai` is Chat Completions (and any OpenAI-compatible server); `openai-responses` is OpenAI's
 * Responses API, with reasoning items carried across steps. They are separate providers, as
 * `openai.chat(model)` and `openai.responses(model)` are separate models in the AI SDK, because
 * their wire formats and what they keep in history differ.
 */
export type ModelProvider = 'openai' | 'openai-responses' | 'anthropic' | 'scripted';

/**
 * Anthropic extended thinking (Messages API `thinking`). `enabled` gives the model a budget of
 * thinking tokens: at least 1024 and less than `maxTokens` (thinking counts toward it);
 * `adaptive` lets the model decide how much to think; `disabled` turns thinking off explicitly.
 */
export type AnthropicThinking =
  | { type: 'enabled'; budgetTokens: number }
  | { type: 'adaptive' }
  | { type: 'disabled' };

/** OpenAI `reasoning_effort`, for reasoning models (o-series, gpt-5 family). */
export type OpenAIReasoningEffort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh';

/** OpenAI Responses `reasoning.summary`: ask for readable summaries of the reasoning. */
export type OpenAIReasoningSummary = 'auto' | 'concise' | 'detailed';

/** OpenAI `service_tier`. */
export type OpenAIServiceTier = 'auto' | 'default' | 'flex' | 'scale' | 'priority';

/**
 * Which model runs a turn. Never holds secrets: keys come from the worker's environment.
 *
 * Provider-specific options are fields of their own, each valid for one provider only; the turn
 * validates them when it starts and fails with `InvalidTurnInput` naming the field rather than
 * ignore one (see `workflows/model-settings.ts`).
 */
export interface ModelSettings {
  provider: ModelProvider;
  model: string;
  /**
   * The output token limit of each model call (reasoning included). Anthropic requires one and
   * gets 4096 when it is left out. OpenAI gets it as `max_completion_tokens` for reasoning models,
   * else as `max_tokens`; the Responses API as `max_output_tokens` (at least 16).
   */
  maxTokens?: number;
  temperature?: number;
  /** Anthropic only: extended thinking. */
  thinking?: AnthropicThinking;
  /** OpenAI only: sent as `reasoning_effort` (Chat Completions) or `reasoning.effort` (Responses). */
  reasoningEffort?: OpenAIReasoningEffort;
  /** `openai-responses` only: sent as `reasoning.summary`, so reasoning parts carry readable text. */
  reasoningSummary?: OpenAIReasoningSummary;
  /** OpenAI only (both APIs): `service_tier`. */
  serviceTier?: OpenAIServiceTier;
  /** OpenAI only (both APIs): `metadata`, at most 16 string pairs (keys ≤ 64, values ≤ 512 characters). */
  metadata?: Record<string, string>;
  /**
   * `openai-responses` only: whether OpenAI stores the response. Default `false`: nothing is kept
   * at OpenAI, and reasoning travels back encrypted in the turn's history.
   */
  store?: boolean;
  /**
   * Whether each model call streams (default true): the turn's listeners then see text, reasoning
   * and tool-call input as the model writes them. `false` makes one plain request per call, for an
   * OpenAI-compatible server that cannot stream; the step's result is the same either way.
   */
  stream?: boolean;
  /**
   * Anthropic only: prompt caching of the stable prefix (tools, system prompt, earlier messages),
   * on unless this is `false`. Cache reads show in `usage.cachedInputTokens`.
   */
  promptCaching?: boolean;
  [option: string]: unknown;
}

/** What the model is told about a tool. */
export interface ModelToolSpec {
  name: string;
  description: string;
  inputSchema: JsonSchema;
}

/** One model step, as providers receive it: the whole transcript. */
export interface ModelStepInput {
  model: ModelSettings;
  system?: string;
  messages: Message[];
  tools: ModelToolSpec[];
  /**
   * Set by turns that stream: the activity publishes the provider's deltas, marked with this
   * step and its attempt, to the calling workflow's event stream while the model writes.
   */
  stream?: { step: number };
}

/**
 * The transcript of a model step by reference (see `workflows/transcript.ts`): the activity
 * already has, or fetches from the turn with the `transcript` query, the messages before `from`,
 * and checks the whole against `hash` before the model sees it.
 */
export interface TranscriptReference {
  /** Messages in the transcript the model is sent. */
  length: number;
  /** Chain hash of all `length` messages (`workflows/transcript-hash.ts`). */
  hash: string;
  /** Index of the first message in `added`: usually the length the previous step sent. */
  from: number;
  /** The messages from `from` to `length`. */
  added: Message[];
}

/**
 * What a turn sends its `callModel` activity. Turns recorded before history-by-reference send
 * `messages`, the whole transcript; later ones send `transcript` and no `messages`, so a step's
 * history no longer grows with the conversation. (A worker from before this change that picks up
 * a by-reference step fails it for want of `messages`, and Temporal retries it on another worker,
 * rather than call the model with part of the conversation.)
 */
export interface ModelStepRequest {
  model: ModelSettings;
  system?: string;
  messages?: Message[];
  transcript?: TranscriptReference;
  /**
   * The tools the model is offered. Turns that send `toolsHash` leave them out of the steps whose
   * worker most likely has them (see `workflows/tool-set.ts`); the activity then takes them from
   * its cache, or from the turn with the `modelTools` query.
   */
  tools?: ModelToolSpec[];
  /** Hash of the turn's tool list (`toolSetHash`); sent by turns that send their tools by reference. */
  toolsHash?: string;
  /** As in {@link ModelStepInput}: set by turns that stream. */
  stream?: { step: number };
  /**
   * Set on a turn's first step, which carries no tools: the activity describes the worker's tools
   * of these names (all when `names` is absent), offers them, and returns them as `described`.
   */
  describeTools?: { names?: string[] };
}

/**
 * Why the model stopped, mapped from each provider's own value: `length` when its output token
 * limit or the context window cut the reply off, `content-filter` when it refused or a filter
 * stopped it. Either ends the turn (status `max-tokens` / `refused`; see `cut-off-step.ts`).
 */
export type FinishReason = 'stop' | 'tool-calls' | 'length' | 'content-filter' | 'other';

export interface Usage {
  /** Every input token, cached ones included (Anthropic's cache reads and writes are added in). */
  inputTokens: number;
  /** Every output token, reasoning included. */
  outputTokens: number;
  /**
   * Of `inputTokens`, how many were read from the provider's prompt cache (OpenAI
   * `prompt_tokens_details.cached_tokens`, Anthropic `cache_read_input_tokens`). Present when the
   * provider reported it.
   */
  cachedInputTokens?: number;
  /**
   * Of `inputTokens`, how many were written to the provider's prompt cache (Anthropic
   * `cache_creation_input_tokens`, billed above plain input). Present when a step wrote any.
   */
  cacheWriteInputTokens?: number;
  /**
   * Of `outputTokens`, how many were reasoning (OpenAI `completion_tokens_details.reasoning_tokens`,
   * Anthropic `output_tokens_details.thinking_tokens`). Present when the provider reported it.
   */
  reasoningTokens?: number;
}

export interface ModelStepResult {
  message: AssistantMessage;
  finishReason: FinishReason;
  /** The provider's own value, e.g. OpenAI `length`, Anthropic `model_context_window_exceeded`. */
  providerFinishReason?: string;
  usage: Usage;
  /**
   * The step's stream events (deltas) the activity did not signal because the step finished
   * before its first flush was due (an instant step: nobody could have watched it stream). The
   * turn publishes them, in order, before `step-finished`, so subscribers see the same events,
   * and an instant step costs the turn no signal and no workflow task of its own.
   */
  unsentEvents?: TurnEvent[];
  /** The turn's tools, on the step that asked for them (`describeTools`). */
  described?: DescribedTools;
  /**
   * What the worker decided for each tool call of `message`, in the order of its tool-call parts
   * (validated input and approval policy; see `activities/prepare-tool-calls.ts`); null for a call
   * of a tool the step did not offer. Absent when the step made no call or was cut off.
   */
  dispositions?: Array<ToolCallDisposition | null>;
}

/** Timeout and retry of an activity (Temporal duration strings, e.g. '30s'). */
export interface ActivityCallOptions {
  startToCloseTimeout?: string;
  /** A tool that runs long must heartbeat within this interval to be cancellable. */
  heartbeatTimeout?: string;
  retry?: {
    maximumAttempts?: number;
    initialInterval?: string;
    backoffCoefficient?: number;
    maximumInterval?: string;
    nonRetryableErrorTypes?: string[];
  };
}

/** What the workflow knows of a registered tool: data only, no functions. */
export interface ToolSpec extends ModelToolSpec {
  kind: 'server' | 'client';
  outputSchema?: JsonSchema;
  /** 'never': runs at once; 'always': every call parks; 'policy': a function on the worker decides per call. */
  approval: 'never' | 'always' | 'policy';
  /** When set, only these approvers (or members of `approverGroups`) may decide this tool's calls. */
  approvers?: string[];
  /** When set, members of these groups may decide this tool's calls. */
  approverGroups?: string[];
  activityOptions?: ActivityCallOptions;
}

export type ApprovalDecision = 'approved' | 'denied' | 'user-approval';

/** What the worker decided about one tool call before anything runs. */
export type ToolCallDisposition =
  | { kind: 'invalid'; error: string }
  | { kind: 'execute'; input: unknown }
  | { kind: 'client'; input: unknown }
  | { kind: 'decided'; input: unknown; approved: boolean; reason?: string }
  | { kind: 'needs-approval'; input: unknown; reason?: string };

export interface ExecuteToolInput {
  toolName: string;
  toolCallId: string;
  input: unknown;
  idempotencyKey: string;
}

export interface ExecuteToolResult {
  output: unknown;
  isError: boolean;
}

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
  /** Every approval decision of the turn, oldest first (absent when none; turns recorded before it had none). */
  decisions?: DecisionRecord[];
}

export interface PendingToolCall {
  /** `elicitation`: an MCP server asked the user for input while the call ran; answer it with `submitToolResult`. */
  kind: 'approval' | 'client-tool' | 'elicitation';
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

/** The turn's tools as its first model step describes them, and whether the worker nudges approvers. */
export interface DescribedTools {
  specs: ToolSpec[];
  notifications?: { expiringBeforeMs: number };
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

// ---- conversations ------------------------------------------------------------------------

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

export interface AgentConversationInput extends TurnOptions {
  model: ModelSettings;
  /** Default: the workflow id. */
  conversationId?: string;
  /** Default 'queue'. */
  policy?: ParkedMessagePolicy;
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

export interface QueuedMessage {
  messageId: string;
  text: string;
  content?: UserContentPart[];
  options?: TurnOptions;
  turnWorkflowId: string;
  turnNumber: number;
}

export interface TurnFinishedInput {
  turnWorkflowId: string;
  result?: AgentTurnResult;
  /** Set instead of `result` when the turn failed. */
  failure?: string;
}

export interface SupersedeTurnInput {
  reason: string;
  messageId?: string;
}

export interface ConversationCarryOver {
  history: Message[];
  turnCount: number;
  queue: QueuedMessage[];
  current?: { turnWorkflowId: string; turnNumber: number; messageId: string; text: string; content?: UserContentPart[] };
  finished: TurnFinishedInput[];
  /** Recent message ids and their replies, for idempotent sendMessage. */
  seen: Array<[string, SendMessageResult]>;
  failedTurns: string[];
  runs: number;
  /** The conversation's event stream (its recent part), handed to the next run. */
  stream?: WorkflowStreamState;
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
}

export interface HistoryPageRequest {
  offset?: number;
  limit?: number;
}

export interface HistoryPage {
  messages: Message[];
  offset: number;
  total: number;
}
