/**
 * `turnpike`: what every part of an application may import — defining tools, the
 * provider-neutral message, turn and result types, and the typed errors. Nothing here loads
 * the Temporal client or worker.
 *
 *   import { defineTool, defineClientTool, type AgentTurnResult } from 'turnpike';
 *
 * The other entry points: `turnpike/worker` (createWorker, TurnpikePlugin), `turnpike/client`
 * (TurnpikeClient, data converter, message definitions), `turnpike/workflows` (workflow-safe:
 * agentTurn, agentConversation, executeAgentTurn) and `turnpike/api` (HTTP API and dashboard).
 */
export {
  defineClientTool,
  defineTool,
  ToolDefinitionError,
  type ApprovalPolicy,
  type ApprovalVerdict,
  type ClientTool,
  type ClientToolOptions,
  type ClientToolOutput,
  type ClientToolResult,
  type ServerTool,
  type ServerToolOptions,
  type Tool,
  type ToolExecutionContext,
  type ToolCancelContext,
  type AgentTool,
} from './activities/tools.js';
export { defineAgentTool, DEFAULT_MAX_AGENT_DEPTH, type AgentToolOptions } from './activities/agent-tools.js';
export { A2A_TOOL_INPUT, defineA2aAgentTool, type A2aAgentToolOptions } from './activities/a2a-remote/a2a-agent-tool.js';
export { checkPushNotification, signPushNotification, type PushNotificationCheck } from './activities/a2a-push/push-signature.js';
export { verifyA2aPush, type A2aPushVerdict, type A2aPushVerification } from './activities/a2a-push/push-jwt-verify.js';
export type { A2aAgentCard } from './activities/a2a-remote/a2a-remote-settings.js';
export { TurnpikeNotFoundError, TurnpikeRejectedError, TurnpikeUnavailableError } from './client/errors.js';
export { AGENT_CONVERSATION_WORKFLOW, AGENT_TURN_WORKFLOW, DEFAULT_TASK_QUEUE } from './workflows/messages/definitions.js';
export type * from './workflows/types/index.js';
export {
  DOCUMENT_MEDIA_TYPES,
  IMAGE_MEDIA_TYPES,
  MAX_INLINE_PART_BYTES,
  MAX_INLINE_TOTAL_BASE64_CHARS,
  MAX_STORED_PART_BYTES,
  MAX_URL_LENGTH,
} from './workflows/turn/binary-parts.js';
export type { ConversationEvent, DeltaOrigin, LiveAhead, TurnEvent, TurnEventRecord } from './workflows/types/turn-events.js';
export { INVALID_TURN_INPUT, isRejectionType, REJECTION_TYPES, type RejectedBy, type RejectionType, type RejectionTypeInfo } from './workflows/messages/rejection-types.js';
export { isTurnEnded, TURN_STATUSES, type EndedTurnStatus, type TurnStatusInfo } from './workflows/types/turn-statuses.js';
