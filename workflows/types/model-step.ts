/**
 * One model step: what a turn sends its `callModel` activity, and what comes back.
 * Pure types: nothing here runs.
 */
import type { TurnEvent } from './turn-events.js';
import type { AssistantMessage, Message } from './messages.js';
import type { FinishReason, ModelSettings, Usage } from './model.js';
import type { DescribedTools, ModelToolSpec, ToolCallDisposition } from './tools.js';
import type { HandoffTarget } from './turn.js';
import type { TurnOutputSpec } from './turn.js';
import type { ForkReference } from './fork.js';
import type { TenantBudgetLimits, TenantBudgetReached } from './tenant-budget.js';

/** One model step, as providers receive it: the whole transcript. */
export interface ModelStepInput {
  model: ModelSettings;
  system?: string;
  messages: Message[];
  tools: ModelToolSpec[];
  /**
   * Set by turns that stream: the activity publishes the provider's deltas, marked with this
   * step and its attempt, to the calling workflow's event stream while the model writes.
   * `signalsBefore`: the batches the run's stream took before this step, which the activity's
   * pace follows (activities/step-stream.ts), so a run's stream stays within Temporal's signal
   * and history budgets however long it streams.
   */
  stream?: { step: number; signalsBefore?: number };
  /**
   * Set by turns that ask for a typed final answer: the provider asks the model natively for JSON
   * matching the schema (`name` and `maxRetries` filled in by the turn). Tools stay offered.
   */
  output?: TurnOutputSpec;
}

/**
 * The transcript of a model step by reference (see `workflows/context/transcript.ts`): the activity
 * already has, or fetches from the turn with the `transcript` query, the messages before `from`,
 * and checks the whole against `hash` before the model sees it.
 */
export interface TranscriptReference {
  /** Messages in the transcript the model is sent. */
  length: number;
  /** Chain hash of all `length` messages (`workflows/context/transcript-hash.ts`). */
  hash: string;
  /** Index of the first message in `added`: usually the length the previous step sent. */
  from: number;
  /** The messages from `from` to `length`. */
  added: Message[];
  /** A fork's: the messages below `prefix.prefixLength` are read from the turn it was forked from. */
  prefix?: ForkReference;
}

/**
 * What a turn sends its `callModel` activity: the transcript by reference (`transcript`), so a
 * step's history does not grow with the conversation. `messages`, the whole transcript inline,
 * is for a model step run outside a turn.
 */
export interface ModelStepRequest {
  model: ModelSettings;
  system?: string;
  messages?: Message[];
  transcript?: TranscriptReference;
  /**
   * The tools the model is offered. Turns that send `toolsHash` leave them out of the steps whose
   * worker most likely has them (see `workflows/turn/tool-set.ts`); the activity then takes them from
   * its cache, or from the turn with the `modelTools` query.
   */
  tools?: ModelToolSpec[];
  /** Hash of the turn's tool list (`toolSetHash`); sent by turns that send their tools by reference. */
  toolsHash?: string;
  /** As in {@link ModelStepInput}: set by turns that stream. */
  stream?: ModelStepInput['stream'];
  /** As in {@link ModelStepInput}: set by turns that ask for a typed final answer. */
  output?: TurnOutputSpec;
  /**
   * Set on a turn's first step, which carries no tools: the activity describes the worker's tools
   * of these names (all when `names` is absent), and the handoff tools of `handoffs`, offers
   * them, and returns them as `described`.
   */
  describeTools?: { names?: string[]; handoffs?: HandoffTarget[] };
  /**
   * Set by a turn a person let spend beyond its tenant's budget over time: what is left of that
   * grant. A limit the tenant has reached does not stop the step while its grant here is above 0.
   */
  tenantGrant?: TenantBudgetLimits;
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
  /**
   * Set when the worker's tenant budgets (`tenantBudgets`) found the turn's tenant over a limit:
   * the model was not called, the message is empty and the usage 0. The turn parks a budget
   * approval (`workflows/turn/tenant-budget-gate.ts`).
   */
  tenantBudget?: TenantBudgetReached;
}
