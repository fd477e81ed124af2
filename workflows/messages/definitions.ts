/**
 * Every update, signal and query of turnpike's workflows, defined once. The workflows, the
 * client and the tests import these; nothing sends a message by a string literal.
 * Side-effect free, so Node code can import it as well as workflow code.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type {
  ApproveToolCallInput,
  BranchTurnResult,
  ConversationBranches,
  EditMessageInput,
  RegenerateInput,
  SwitchBranchInput,
  CallContext,
  CallContextRequest,
  ApproveToolCallResult,
  ConversationState,
  DelegateApprovalInput,
  DelegateApprovalResult,
  HistoryPage,
  HistoryPageRequest,
  ModelToolSpec,
  SendMessageInput,
  SendMessageResult,
  SubmitToolResultInput,
  SubmitToolResultResult,
  SupersedeTurnInput,
  ToolServersWait,
  TurnFinishedInput,
  TurnState,
} from '../types/index.js';
import type { ConversationEvent, StreamEventsPage, StreamEventsRequest, TurnEvent } from '../types/turn-events.js';
import type { ElicitationAnswerState, ParkElicitationInput, ParkElicitationResult } from '../types/elicitations.js';

/** Workflow type names, as operators see them in the Temporal CLI and Web UI. */
export const AGENT_TURN_WORKFLOW = 'agentTurn';
export const AGENT_CONVERSATION_WORKFLOW = 'agentConversation';
export const DEFAULT_TASK_QUEUE = 'turnpike';

/**
 * An update, not only a signal, because a dashboard must learn at once whether its
 * decision was accepted (unknown id, already decided, input edited into something invalid).
 */
export const approveToolCallUpdate = defineUpdate<ApproveToolCallResult, [ApproveToolCallInput]>('approveToolCall');
/** The same decision fire-and-forget, for `temporal workflow signal`. Invalid ones are logged and ignored. */
export const approveToolCallSignal = defineSignal<[ApproveToolCallInput]>('approveToolCall');

/**
 * An approver hands a parked approval to named approvers or groups, with a reason: they are
 * added to those who may decide it, nudged, and the delegation is recorded (docs/tools-and-approvals.md).
 */
export const delegateApprovalUpdate = defineUpdate<DelegateApprovalResult, [DelegateApprovalInput]>('delegateApproval');

export const submitToolResultUpdate = defineUpdate<SubmitToolResultResult, [SubmitToolResultInput]>('submitToolResult');
export const submitToolResultSignal = defineSignal<[SubmitToolResultInput]>('submitToolResult');

export const turnStateQuery = defineQuery<TurnState>('turnState');

/**
 * A page of the turn's event stream from an offset. Subscribers long-poll the stream by update
 * (`@temporalio/workflow-streams`); this query reads it without adding history, and still works
 * once the turn has ended.
 */
export const turnEventsQuery = defineQuery<StreamEventsPage<TurnEvent>, [StreamEventsRequest?]>('turnEvents');

/**
 * What an approver needs to decide a parked call: the user's request, what the model wrote
 * around the call, the turn's earlier tool results, and the tool's input schema (for an edit).
 * A query, so a dashboard reads it without adding anything to the turn's history.
 */
export const callContextQuery = defineQuery<CallContext, [CallContextRequest]>('callContext');

/**
 * The turn's transcript, paged: the history it was given, then the messages it appended. The
 * model activity reads what its worker does not have cached with this query (served while the
 * turn awaits the activity), so a model step's input carries the transcript by reference only.
 * `{ offset, limit }` (default: from 0, as much as fits about 1 MiB).
 */
export const transcriptQuery = defineQuery<HistoryPage, [HistoryPageRequest?]>('transcript');

/**
 * The tools the turn offers the model. A model step whose worker does not have the turn's tool
 * list (its input carries only the list's hash, `workflows/turn/tool-set.ts`) reads it with this query.
 */
export const modelToolsQuery = defineQuery<ModelToolSpec[]>('modelTools');

/**
 * Sent by a conversation to its running turn when a newer user message supersedes it: every
 * parked call gets an error result with the reason, and the turn ends after its current step.
 */
export const supersedeTurnSignal = defineSignal<[SupersedeTurnInput]>('supersedeTurn');

/**
 * Internal: sent by a model step's activity to its own turn when an attempt failed because MCP
 * servers the turn needs cannot list their tools, so the turn's state and stream name them
 * while the step is retried (activities/mcp/mcp-unavailable.ts).
 */
export const toolServersUnavailableSignal = defineSignal<[ToolServersWait]>('toolServersUnavailable');

// ---- conversations ------------------------------------------------------------------------

/**
 * Adds a user message; usable with update-with-start, so the first message creates the
 * conversation. Returns the new turn's workflow id at once; the turn runs on.
 */
export const sendMessageUpdate = defineUpdate<SendMessageResult, [SendMessageInput]>('sendMessage');

/** Sent by a turn to its conversation when it ends, so the conversation never waits on a handle it may have lost to continue-as-new. */
export const turnFinishedSignal = defineSignal<[TurnFinishedInput]>('turnFinished');

/** The conversation's messages, paged: `{ offset, limit }` (default 0, 100). */
export const historyQuery = defineQuery<HistoryPage, [HistoryPageRequest?]>('history');

/** A page of the conversation's event stream (turn starts and ends), as `turnEvents` is for a turn. */
export const conversationEventsQuery = defineQuery<StreamEventsPage<ConversationEvent>, [StreamEventsRequest?]>('conversationEvents');

export const conversationStateQuery = defineQuery<ConversationState>('conversationState');

/** Answers a user message again on a new branch, which becomes current; a running turn is superseded first. */
export const regenerateUpdate = defineUpdate<BranchTurnResult, [RegenerateInput]>('regenerate');
/** Replaces a user message on a new branch, which becomes current, and answers it; a running turn is superseded first. */
export const editMessageUpdate = defineUpdate<BranchTurnResult, [EditMessageInput]>('editMessage');
/** Makes another branch current (while no turn runs). */
export const switchBranchUpdate = defineUpdate<ConversationBranches, [SwitchBranchInput]>('switchBranch');
/** The conversation's branches and the current one. */
export const branchesQuery = defineQuery<ConversationBranches>('branches');

/**
 * Internal, sent by the activity of an MCP tool call whose server asks the user for input
 * (`elicitation/create`): the turn parks the question and answers it through `elicitationAnswer`.
 */
export const parkElicitationUpdate = defineUpdate<ParkElicitationResult, [ParkElicitationInput]>('parkElicitation');

/** Internal: polled by the waiting MCP call's activity until the question is answered or gone. */
export const elicitationAnswerQuery = defineQuery<ElicitationAnswerState, [string]>('elicitationAnswer');

/**
 * Internal: the waiting MCP call's activity sends it once, and it completes when the question is
 * answered or gone — a long poll that costs the turn two history events instead of a query every
 * half second. The turn refuses it while enough calls wait this way (each counts against the
 * server's limit of updates in flight per workflow, which people's decisions must not hit); the
 * activity then polls `elicitationAnswer` instead.
 */
export const awaitElicitationAnswerUpdate = defineUpdate<ElicitationAnswerState, [string]>('awaitElicitationAnswer');
