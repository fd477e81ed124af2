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
export { agentConversation } from './conversation/agent-conversation.js';
export { agentTurn } from './turn/agent-turn.js';
export { MODEL_GOVERNOR_WORKFLOW, modelGovernor, modelGovernorId, modelGovernorStateQuery, modelSlowDownSignal, type ModelGovernorInput, type ModelGovernorState, type ModelQueueRate, type ModelSlowDown } from './capacity/model-governor.js';
export { turnpikeEvaluation } from './evaluation/evaluation-run.js';
export { A2A_PUSH_CONFIG_MEMO_KEY, A2A_PUSH_NOTIFIER_WORKFLOW, a2aPushConfigQuery, a2aPushNotifier, a2aPushNotifierId, type A2aPushConfig, type A2aPushNotifierInput, type A2aPushNotifierResult, type A2aPushProgress } from './a2a/a2a-push-notifier.js';
export { executeAgentTurn, startAgentTurn, type AgentTurnChildOptions } from './turn/child-turn.js';
export * from './messages/definitions.js';
export { agentConversationIdKey, agentPendingToolsKey, agentTurnStatusKey, turnpikeParentTurnIdKey, turnpikeForkOfKey, turnpikeTenantKey, turnpikeApproversKey, turnpikeNextExpiryKey, SEARCH_ATTRIBUTE_TYPES } from './context/search-attributes.js';
export type * from './types/index.js';
export { INVALID_TURN_INPUT, isRejectionType, REJECTION_TYPES, type RejectedBy, type RejectionType, type RejectionTypeInfo } from './messages/rejection-types.js';
export { isTurnEnded, TURN_STATUSES, type EndedTurnStatus, type TurnStatusInfo } from './types/turn-statuses.js';
