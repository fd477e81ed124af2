/**
 * `turnpike/client`: for backends, dashboards and tests — start and inspect turns and
 * conversations, decide approvals, submit client-tool results. With a plain
 * `@temporalio/client` `Client`, use the message definitions and `turnpikeDataConverter` here.
 */
export { DEFAULT_START_CONCURRENCY, type BatchTurn, type BatchTurnStart, type StartTurnsOptions } from './turn-batch.js';
export { TurnpikeClient, STARTED_BY_MEMO_KEY, type ParkedCall, type ParkedCallsOptions, type ParkedPage, type ParkedPageOptions, type StartRecord, type StartTurnInput, type StartTurnOptions, type TurnpikeClientOptions, type TurnpikeConnectOptions } from './turnpike-client.js';
export { capacityWaitOf, MODEL_ACTIVITY_TYPE, type WaitingForCapacity } from './capacity-wait.js';
export { taskQueueBacklog, type TaskQueueBacklog } from './queue-backlog.js';
export { MAX_TENANT_BYTES, TURN_PRIORITIES, type TenantPlacement, type TurnPriority } from './tenants.js';
export { toOutputSpec, typedOutput, TurnpikeOutputError, type DeepPartial, type OutputOf, type OutputOption, type OutputStreamItem } from './typed-output.js';
export type { ClientToolOutput, ClientToolResult } from '../activities/tools.js';
export { TurnpikeNotFoundError, TurnpikeRejectedError, TurnpikeUnavailableError } from './errors.js';
export { connectTemporal, temporalConnectionOptions, TEMPORAL_RECEIVE_LIMIT_BYTES } from '../connection/temporal-connection.js';
export { type DecisionQuery, type TurnDecision } from './decisions.js';
export { parseConversationCursor, type ConversationStreamEvent } from './conversation-events.js';
export { TURN_EVENTS_TOPIC, type ConversationEvent, type DeltaOrigin, type LiveAhead, type StreamEventsPage, type StreamEventsRequest, type TurnEvent, type TurnEventRecord } from '../workflows/types/turn-events.js';
export { CompressionCodec, GZIP_ENCODING } from '../codec/payload-codec.js';
export { createTurnpikeDataConverter, turnpikeCodecs, turnpikeDataConverter, type TurnpikeCodecOptions } from '../content/data-converter.js';
export { ContentUnavailableError, contentKey, contentRef, keyOfRef, readVerified, storeContent, type ContentStore, type StoredObject } from '../content/content-store.js';
export { FileContentStore } from '../content/file-content-store.js';
export { PostgresContentStore, type PostgresContentStoreOptions } from '../content/postgres-content-store.js';
export { S3ContentStore, type S3ContentStoreOptions } from '../content/s3-content-store.js';
export { InProcessLiveDeltas, inProcessLiveDeltas, type LiveDeltaChannel, type LiveDeltaEvent, type LiveDeltaPiece } from '../activities/live-deltas.js';
export { PostgresLiveDeltas, liveDeltasFromEnvironment, DEFAULT_LIVE_CHANNEL, LIVE_POSTGRES_VARIABLE, type PostgresLiveDeltasOptions, type PostgresConnectionSettings } from '../activities/postgres-live/postgres-live-deltas.js';
export { CONTENT_STORE_VARIABLE, contentStoreFromEnvironment, contentStoreFromUrl } from '../content/store-from-environment.js';
export { CLAIM_ENCODING, ClaimCheckCodec, DEFAULT_CLAIM_THRESHOLD_BYTES, type ClaimCheckOptions } from '../content/claim-check-codec.js';
export { DEFAULT_MODEL_OUTPUT_BYTES, DEFAULT_STORE_THRESHOLD_BYTES, isStoredOutput } from '../content/stored-content.js';
export { sweepContent, type SweepOptions, type SweepReport, type UnreadableWorkflow } from '../content/content-sweep.js';
export * from '../workflows/messages/definitions.js';
export { agentConversationIdKey, agentPendingToolsKey, agentTurnStatusKey, turnpikeParentTurnIdKey, turnpikeForkOfKey, turnpikeTenantKey, turnpikeApproversKey, turnpikeNextExpiryKey, SEARCH_ATTRIBUTE_TYPES } from '../workflows/context/search-attributes.js';
export type { agentConversation, agentTurn } from '../workflows/registered-workflows.js';
export type * from '../workflows/types/index.js';
export { INVALID_TURN_INPUT, isRejectionType, REJECTION_TYPES, type RejectedBy, type RejectionType, type RejectionTypeInfo } from '../workflows/messages/rejection-types.js';
export { isTurnEnded, TURN_STATUSES, type EndedTurnStatus, type TurnStatusInfo } from '../workflows/types/turn-statuses.js';
export { resolveNestedCursor, type NestedReadOptions, type NestedTurnEventRecord, type NestedTurnResume } from './nested-turn-events.js';
export { NestedCursorError, parseNestedCursor, encodeNestedCursor, type NestedCursor, type OpenChild } from './nested-cursor.js';
export { type EvaluateOptions, type EvaluateResult } from './evaluations.js';
export {
  EVALUATION_WORKFLOW,
  type EvaluationBudget,
  type EvaluationChange,
  type EvaluationReport,
  type EvaluationRow,
  type EvaluationTotals,
  type TurnSpendRow,
} from '../workflows/evaluation/evaluation-types.js';
export { type EvaluationGrade, type GraderSpec, type GraderTotals, type ModelGraderSpec } from '../workflows/evaluation/grader-types.js';
export { FORK_OF_MEMO_KEY, readTurnTranscript, transcriptThroughStep, type ForkTurnOptions, type ForkTurnResult, type TurnFork } from './turn-fork.js';
