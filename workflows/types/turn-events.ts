/**
 * The events of a turn as it runs, published on the turn workflow's stream
 * (`@temporalio/workflow-streams`), each at an offset: a subscriber that reconnects from the
 * offset after the last event it saw gets every later event exactly once.
 *
 * Deltas (`text-delta`, `reasoning-delta`, `tool-input-*`) come from the model activity while
 * the provider streams; every other event comes from the workflow itself. The step's recorded
 * message is always the activity's complete result, never the deltas: a model step that is
 * retried publishes `step-retry` first, and a subscriber drops the deltas it showed for that
 * step's earlier attempts (see `applyTurnEvent`'s callers) instead of doubling the text.
 *
 * Side-effect free and workflow-safe: the workflow, the activities and the client import it.
 */
import type { EndedTurnStatus } from './turn-statuses.js';
import type { FinishReason, Usage } from './model.js';
import type { ToolServerLeftOut, ToolServersWait } from './tools.js';
import type { BudgetApprovalInput } from './budget.js';
import type { ApprovalRecord, ToolCallOutcome } from './call-records.js';
import type { SourceReference } from './messages.js';
import type { ApprovalProgress } from './approval-rules.js';

/** The topic of the workflow stream that carries a turn's (or a conversation's) events. */
export const TURN_EVENTS_TOPIC = 'turnpike';

/** Where a delta belongs: the model step (1-based) and the activity attempt that streamed it. */
export interface DeltaOrigin {
  step: number;
  /** The model activity's attempt; a `step-retry` with a higher attempt voids the deltas of lower ones. */
  attempt: number;
}

/**
 * One event of a turn. Every event except the deltas and `step-retry` is published by the
 * workflow, so it is in the stream exactly as in the turn's history and result.
 */
export type TurnEvent =
  /** Assistant text, as the provider streams it. */
  | ({ type: 'text-delta'; text: string } & DeltaOrigin)
  /** Reasoning text (thinking), kept apart from the answer. */
  | ({ type: 'reasoning-delta'; text: string } & DeltaOrigin)
  /** The model began writing a tool call's input. */
  | ({ type: 'tool-input-start'; toolCallId: string; toolName: string } & DeltaOrigin)
  /** A piece of a tool call's input JSON, unvalidated: the `tool-call` event carries the validated input. */
  | ({ type: 'tool-input-delta'; toolCallId: string; inputTextDelta: string } & DeltaOrigin)
  /**
   * A model step is being tried again (the provider failed, or a worker died mid-stream):
   * discard every delta of this step with a lower attempt; the new attempt streams from the start.
   */
  | ({ type: 'step-retry' } & DeltaOrigin)
  /** The model step ended: its finish reason and token usage. Its tool calls follow. */
  | { type: 'step-finished'; step: number; finishReason: FinishReason; usage: Usage; toolCalls: number }
  /**
   * A tool call of the step, with its input after validation against the tool's schema
   * (`invalid` says why not, and no executor or approver sees it).
   */
  | { type: 'tool-call'; step: number; toolCallId: string; toolName: string; input: unknown; invalid?: string }
  /** A call parked for a person's decision; decide with `approveToolCall` (the `approvalId` and the input the hash is of). */
  | {
      type: 'approval-requested';
      step: number;
      approvalId: string;
      toolCallId: string;
      toolName: string;
      input: unknown;
      inputHash: string;
      requestedAt: string;
      expiresAt: string;
      /** The approval policy's reason, when it gave one. */
      reason?: string;
    }
  /**
   * A parked call's approval moved without being decided: a vote short of the quorum (or of the
   * denials), a delegation, or an escalation step that added approvers. `progress` is the call's
   * progress after it (as `turnState` shows it); the decision itself is the call's `tool-result`.
   */
  | { type: 'approval-progress'; step: number; approvalId: string; toolCallId: string; toolName: string; change: 'vote' | 'delegation' | 'escalation'; progress: ApprovalProgress }
  /**
   * A limit of the turn's budget was reached: a budget approval parked (`toolName`
   * `turnpike_budget`, never a call the model made). Approve it to extend the budget by
   * `input.extendBy` (or an edit of it), deny it to stop the turn (`budget-exceeded`).
   */
  | { type: 'budget-requested'; step: number; approvalId: string; toolCallId: string; toolName: string; input: BudgetApprovalInput; inputHash: string; requestedAt: string; expiresAt: string; reason?: string }
  /** A client tool call parked for the caller's result (`submitToolResult`). */
  | { type: 'client-tool-requested'; step: number; toolCallId: string; toolName: string; input: unknown; inputHash: string; requestedAt: string; expiresAt: string }
  /**
   * A call settled with exactly one result: executed, approved (and run), denied, expired,
   * a client's result, an error, or cancelled.
   */
  | { type: 'tool-result'; step: number; toolCallId: string; toolName: string; outcome: ToolCallOutcome; output: unknown; isError: boolean; approval?: ApprovalRecord }
  /**
   * A hosted tool the provider ran itself within the step (`ProviderToolPart`): web search, code
   * execution, a remote MCP call. It is already done; it has no approval and no separate result.
   */
  | { type: 'provider-tool'; step: number; toolCallId: string; toolName: string; input: unknown; output: unknown; isError: boolean; sources?: SourceReference[] }
  /**
   * An agent tool call started its child turn: readers that follow nested events read the
   * child's stream (`turnId`) and show its events under this call (`parentToolCallId`).
   */
  | { type: 'agent-started'; step: number; toolCallId: string; toolName: string; turnId: string }
  /**
   * The turn ended; the last event of its stream. A turn that asked for a typed answer carries it
   * as `output` (status `completed`), or why the last answer failed as `outputErrors` (`invalid-output`).
   */
  | { type: 'turn-finished'; status: EndedTurnStatus; text: string; steps: number; usage: Usage; output?: unknown; outputErrors?: string[] }
  /** The turn was offered all tools, and these MCP servers did not answer its first step: it goes on without their tools. */
  | { type: 'tools-left-out'; servers: ToolServerLeftOut[] }
  /**
   * The model step's attempt failed because MCP servers the turn needs could not list their
   * tools: which, why, and when the step gives up on them (then the turn fails with
   * `McpServerUnavailable`). Published by the turn when the step's activity reports it, once per
   * failed attempt; a later attempt may succeed.
   */
  | ({ type: 'servers-unavailable' } & ToolServersWait);

/** A turn event with its offset in the turn's stream. */
export interface TurnEventRecord {
  /** Position in the stream, from 0; resume after it with `fromOffset: offset + 1`. */
  offset: number;
  event: TurnEvent;
  /**
   * On a record of `turnEvents(id, { live: true })` while the reader has shown deltas the durable
   * stream does not hold yet, by step-attempt (docs/streaming.md). Resume after the record with
   * `{ fromOffset: offset + 1, liveAhead: live }`; a live delta's `offset` is the last durable
   * event's before it.
   */
  live?: LiveAhead[];
}

/** Delta units (characters; a `tool-input-start` is one) of a step-attempt shown live. */
export interface LiveAhead {
  /** The model step, as on its delta events. */
  step: number;
  /** The step's attempt, as on its delta events. */
  attempt: number;
  /** Units of this step-attempt's deltas shown so far, from its first. */
  units: number;
}

/**
 * The events of a conversation: the start of each turn (in order) and the end of the
 * conversation's knowledge of it; the turns' own events are read from each turn's stream.
 */
export type ConversationEvent =
  | { type: 'turn-started'; turnId: string; turnNumber: number; messageId: string }
  | { type: 'turn-ended'; turnId: string; turnNumber: number; failed: boolean }
  /** The turn `turnId` handed the conversation from agent `from` to agent `to`. */
  | { type: 'handoff'; turnId: string; from: string; to: string };

/** Request of the `turnEvents` query: the events from an offset (default 0). */
export interface StreamEventsRequest {
  fromOffset?: number;
  /** At most this many (default and maximum 1,000; with `maxBytes`, maximum 100,000). */
  limit?: number;
  /**
   * A page bounded by size instead of by count: events while their payloads take at most this
   * many bytes (at most 1,500,000, under Temporal's 2 MB payload limit; always at least one
   * event). For reading a closed run, where each query replays the run on a worker.
   */
  maxBytes?: number;
}

/** Answer of the `turnEvents` query. */
export interface StreamEventsPage<E> {
  events: Array<{ offset: number; event: E }>;
  /** The offset to ask for next. */
  nextOffset: number;
  /** The first offset this run holds (a run a hand-over started holds the last events of the runs before it, not all). */
  base?: number;
  /** The stream's end: the offset its next event will get. `nextOffset` equal to it means this page read to the end. */
  end?: number;
}
