/**
 * `turnpike/client`: for backends, dashboards and tests — start and inspect turns and
 * conversations, decide approvals, submit client-tool results. With a plain
 * `@temporalio/client` `Client`, use the message definitions and `turnpikeDataConverter` here.
 */
export { TurnpikeClient, STARTED_BY_MEMO_KEY, type ParkedCall, type StartRecord, type TurnpikeClientOptions } from './turnpike-client.js';
export type { ClientToolOutput, ClientToolResult } from '../activities/tools.js';
export { TurnpikeNotFoundError, TurnpikeRejectedError } from './errors.js';
export { type DecisionQuery, type TurnDecision } from './decisions.js';
export { parseConversationCursor, type ConversationStreamEvent } from './conversation-events.js';
export { TURN_EVENTS_TOPIC, type ConversationEvent, type DeltaOrigin, type StreamEventsPage, type StreamEventsRequest, type TurnEvent, type TurnEventRecord } from '../workflows/turn-events.js';
export { CompressionCodec, GZIP_ENCODING } from '../codec/payload-codec.js';
export { createTurnpikeDataConverter, turnpikeCodecs, turnpikeDataConverter, type TurnpikeCodecOptions } from '../codec/data-converter.js';
export * from '../workflows/definitions.js';
export { agentConversationIdKey, agentPendingToolsKey, agentTurnStatusKey, SEARCH_ATTRIBUTE_TYPES } from '../workflows/search-attributes.js';
export type { agentConversation, agentTurn } from '../workflows/registered-workflows.js';
export type * from '../workflows/types.js';
export { INVALID_TURN_INPUT, isRejectionType, REJECTION_TYPES, type RejectedBy, type RejectionType, type RejectionTypeInfo } from '../workflows/rejection-types.js';
export { isTurnEnded, TURN_STATUSES, type EndedTurnStatus, type TurnStatusInfo } from '../workflows/turn-statuses.js';
