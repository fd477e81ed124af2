/**
 * `turnpike/workflows`: workflow-safe code only. A user's workflows file re-exports the two
 * workflows, next to its own:
 *
 *   export { agentTurn, agentConversation } from 'turnpike/workflows';
 *   export * from './my-workflows.js';
 *
 * and a user's workflow runs a turn as a child with `executeAgentTurn` / `startAgentTurn`.
 * (Re-export the workflows by name rather than `export *`: every exported function of a
 * workflows file becomes a workflow type, and the helpers below are not workflows.)
 */
export { agentConversation } from './agent-conversation.js';
export { agentTurn } from './agent-turn.js';
export { executeAgentTurn, startAgentTurn, type AgentTurnChildOptions } from './child-turn.js';
export * from './definitions.js';
export { agentConversationIdKey, agentPendingToolsKey, agentTurnStatusKey, turnpikeParentTurnIdKey, SEARCH_ATTRIBUTE_TYPES } from './search-attributes.js';
export type * from './types.js';
export { INVALID_TURN_INPUT, isRejectionType, REJECTION_TYPES, type RejectedBy, type RejectionType, type RejectionTypeInfo } from './rejection-types.js';
export { isTurnEnded, TURN_STATUSES, type EndedTurnStatus, type TurnStatusInfo } from './turn-statuses.js';
