/**
 * `turnpike/worker`: for worker processes. `TurnpikePlugin` adds turnpike to a Worker of your
 * own; `createWorker` builds a turnpike-only Worker in one line.
 */
export { TurnpikePlugin, WORKFLOW_PRELOAD_PATH, type TurnpikePluginOptions } from './plugin.js';
export {
  bundleWorkflows,
  createWorker,
  DEFAULT_MAX_CACHED_WORKFLOWS,
  DEFAULT_SHUTDOWN_GRACE_TIME,
  WORKFLOWS_PATH,
  type CreateWorkerOptions,
} from './create-worker.js';
export { runWorker, type RunWorkerOptions } from './run-worker.js';
export type { A2aPushJwk, A2aPushSigningKey } from '../activities/a2a-push/push-jwt-key.js';
export type { ModelCapacityOptions } from './model-capacity.js';
export { expectedTokens, IMAGE_TOKENS, type ModelTokenLimit } from '../activities/model-tokens/token-gate.js';
export { InMemoryModelTokenCounter, earliestBooking, placeBooking, type ModelTokenCounter, type TokenBooking, type TokenBookingRequest } from '../activities/model-tokens/token-counter.js';
export { PostgresModelTokenCounter, DEFAULT_MODEL_TOKENS_TABLE, type PostgresModelTokenCounterOptions } from '../activities/model-tokens/postgres-token-counter.js';
export type { PostgresPoolOptions } from '../peers/postgres-options.js';
export type { FollowProviderHeaders } from './provider-headers.js';
export type { SlowDownThresholds } from '../activities/providers/rate-limit-headers.js';
export { providerObservedFetch } from '../activities/providers/observed-fetch.js';
export type { EvaluationWorkerOptions } from './evaluation-worker.js';
export type { Grader, GraderInput, GraderVerdict } from '../workflows/evaluation/evaluation-types.js';
export { InProcessLiveDeltas, inProcessLiveDeltas, type LiveDeltaChannel, type LiveDeltaEvent, type LiveDeltaPiece } from '../activities/live-deltas.js';
export { PostgresLiveDeltas, liveDeltasFromEnvironment, DEFAULT_LIVE_CHANNEL, LIVE_POSTGRES_VARIABLE, type PostgresLiveDeltasOptions, type PostgresConnectionSettings } from '../activities/postgres-live/postgres-live-deltas.js';
export type { ContentStore, StoredObject } from '../content/content-store.js';
export { FileContentStore } from '../content/file-content-store.js';
export { PostgresContentStore, type PostgresContentStoreOptions } from '../content/postgres-content-store.js';
export { S3ContentStore, type S3ContentStoreOptions } from '../content/s3-content-store.js';
export { contentStoreFromEnvironment, contentStoreFromUrl } from '../content/store-from-environment.js';
export { connectionOptionsFromEnvironment } from './environment.js';
export { ProviderErrorType, type ProviderName } from '../activities/providers/error-types.js';
export { notificationOptionsFromEnvironment, signNotification, type NotificationOptions } from '../activities/notify.js';
export { slackMessageOptionsFromEnvironment, type SlackChannels, type SlackMessageOptions } from '../activities/slack/slack-options.js';
export type { TurnpikeActivities } from '../activities/index.js';
export { DEFAULT_PRICES, OPENAI_TOOL_PRICES, type ModelPrice, type PriceTable } from '../activities/prices.js';
export type { AiSdkLanguageModel, AiSdkModels } from '../activities/providers/ai-sdk-models.js';
export type { OpenAIEndpoint, OpenAIEndpoints } from '../activities/providers/endpoints.js';
export type { AzureOpenAISettings, BedrockSettings, CloudModelIds, CloudSettings, VertexSettings } from '../activities/providers/clouds.js';
export type { RemoteMcpServer, RemoteMcpServers } from '../activities/providers/remote-mcp-servers.js';
export { DEFAULT_TRANSCRIPT_CACHE, TRANSCRIPT_MISMATCH, type TranscriptCacheOptions } from '../activities/transcript-cache.js';
export type {
  McpServerConfig,
  McpStdioServerConfig,
  McpHttpServerConfig,
  McpToolOptions,
  McpApprovalPolicy,
  McpPolicyContext,
  McpToolAnnotations,
} from '../activities/mcp/mcp-servers.js';
export { MCP_IDEMPOTENCY_KEY_META, DEFAULT_MCP_LIST_TIMEOUT_MS, DEFAULT_MCP_RECONNECT } from '../activities/mcp/mcp-servers.js';
export type { McpServerStatus } from '../activities/mcp/mcp-server-health.js';
export { failedEventId, replayFailureReason, replayHistories, REPLAY_WORKFLOW_IDS_FILE, ReplaySetError, type ReplayedHistory, type ReplayHistoriesOptions, type ReplayReport } from './replay-histories.js';
export { InMemoryTenantUsageStore, periodKey, type TenantUsageRecord, type TenantUsageStore } from '../activities/tenant-budgets/tenant-usage-store.js';
export { PostgresTenantUsageStore, DEFAULT_TENANT_USAGE_TABLE, type PostgresTenantUsageStoreOptions } from '../activities/tenant-budgets/postgres-tenant-usage-store.js';
export { tenantBudgetsFromEnvironment, type TenantBudgetOptions } from '../activities/tenant-budgets/tenant-budget-options.js';
export type { TenantBudgetLimits, TenantBudgetPeriod, TenantSpend } from '../workflows/types/index.js';
