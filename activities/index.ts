/**
 * The activities of turnpike's workflows, bound to one worker's tool set. Every side effect
 * of a turn happens here: model calls (with the description of the turn's tools and the
 * approval policies of each step's calls; see model-step.ts), tool executions, nudges.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure, msToNumber } from '@temporalio/common';
import type { ContentStore } from '../content/content-store.js';
import { readStoredContent, storeLargeOutput } from '../content/stored-content.js';
import { agentToolPrompt } from './agent-tools.js';
import { executeTool } from './execute-tool.js';
import { cancelToolCall } from './cancel-tool-call.js';
import { callModel, type WorkerModels } from './model.js';
import { modelGovernorActivities } from './model-governor.js';
import type { AiSdkModels } from './providers/ai-sdk-models.js';
import type { OpenAIEndpoints } from './providers/endpoints.js';
import type { CloudSettings } from './providers/clouds.js';
import type { RemoteMcpServers } from './providers/remote-mcp-servers.js';
import { sendNotification, type NotificationOptions } from './notify.js';
import { SlackNotifier } from './slack/slack-notifier.js';
import type { SlackMessageOptions } from './slack/slack-options.js';
import { runModelStep, type StepTools } from './model-step.js';
import { prepareToolCalls } from './prepare-tool-calls.js';
import { aiSdkPriceOf, costOf, DEFAULT_PRICES, priceOf, type PriceTable } from './prices.js';
import { recordModelAdmitted, recordModelCost } from './telemetry.js';
import { createToolRegistry } from './tool-registry.js';
import type { LazyMcpTools } from './mcp/lazy-mcp-tools.js';
import type { Tool } from './tools.js';
import type { LiveDeltaChannel } from './live-deltas.js';
import { ToolSetCache } from './tool-set-cache.js';
import type { CheckedTenantBudgets } from './tenant-budgets/tenant-budget-options.js';
import { TenantBudgetGuard } from './tenant-budgets/tenant-budget-guard.js';
import type { ModelTokenGate } from './model-tokens/token-gate.js';
import { TranscriptCache, type TranscriptCacheOptions } from './transcript-cache.js';
import type { A2aPushDeliveryResult, A2aPushNotifierInput } from '../workflows/a2a/a2a-push-types.js';
import { NOTHING_ALLOWED, type PushAllowList } from './a2a-push/receiver-addresses.js';
import type { CheckedPushKey } from './a2a-push/push-jwt-key.js';
import type { AgentToolPromptInput, ApprovalNotification, CancelToolCallInput, NotifyApproversResult, SlackMessageRef, ExecuteToolInput, ExecuteToolResult, ModelStepInput, ModelStepRequest } from '../workflows/types/index.js';

export interface CreateActivitiesOptions {
  tools: readonly Tool[];
  /** Webhook nudges for approvals (parked, expiring, decided); none when absent. */
  notifications?: NotificationOptions;
  /** Approval messages in Slack, posted when a call parks and updated as it goes (slack/slack-notifier.ts); none when absent. */
  slack?: SlackMessageOptions;
  /** Limits of the worker-side cache of turn transcripts (see activities/transcript-cache.ts). */
  transcriptCache?: TranscriptCacheOptions;
  /** Tools of MCP servers, offered next to `tools` under `<server>__<tool>` names. */
  mcp?: LazyMcpTools;
  /**
   * Where large tool outputs are kept, and stored images, documents and outputs are read from
   * for model steps (content/stored-content.ts). Without one, outputs stay inline (and one over
   * Temporal's 2 MB payload limit fails as it is recorded).
   */
  contentStore?: ContentStore;
  /** The most of one stored tool output a model step sends (default 1 MiB; see content/stored-content.ts). */
  modelToolOutputBytes?: number;
  /** Prices by `provider:model`, over the built-in table (activities/prices.ts): each model step's `usage.costUsd`. */
  prices?: PriceTable;
  /** How deep agent tools may nest (default 3; see agent-tools.ts). */
  maxAgentDepth?: number;
  /** AI SDK language models by name, for turns of provider `ai-sdk` (providers/ai-sdk.ts). */
  models?: AiSdkModels;
  /** Named OpenAI-compatible endpoints, for turns of provider `openai` that name one (providers/endpoints.ts). */
  endpoints?: OpenAIEndpoints;
  /** Bedrock, Vertex AI and Azure OpenAI settings by name, for turns on those clouds (providers/clouds.ts). */
  clouds?: CloudSettings;
  /** Named remote MCP servers, for `openai-responses` turns whose hosted `mcp` tool names one (providers/remote-mcp-servers.ts). */
  remoteMcpServers?: RemoteMcpServers;
  /** Where streaming model steps also push each delta as it comes, for readers (live-deltas.ts). */
  liveDeltas?: LiveDeltaChannel;
  /** Budgets per tenant over time, counted in a store the fleet shares (tenant-budgets/). */
  tenantBudgets?: CheckedTenantBudgets;
  /** The fleet's tokens-per-minute limit, on the model queue's Worker (model-tokens/). */
  modelTokens?: ModelTokenGate;
  /** The private A2A push receivers the worker may reach (a2a-push/receiver-addresses.ts); none when absent. */
  a2aPushAllow?: PushAllowList;
  /** The key A2A push notifications' JWTs are signed with (a2a-push/push-jwt-key.ts), checked; none: HMAC only. */
  a2aPushSigningKey?: CheckedPushKey & { privateKey: NonNullable<CheckedPushKey['privateKey']> };
}

export function createActivities({ tools, notifications, slack, transcriptCache, mcp, contentStore, modelToolOutputBytes, prices, maxAgentDepth, models, endpoints, clouds, remoteMcpServers, liveDeltas, tenantBudgets, modelTokens, a2aPushAllow, a2aPushSigningKey }: CreateActivitiesOptions) {
  const priceTable: PriceTable = { ...DEFAULT_PRICES, ...prices };
  const workerModels: WorkerModels = { models: models ?? {}, endpoints: endpoints ?? {}, clouds: clouds ?? {}, ...(remoteMcpServers ? { remoteMcpServers } : {}), ...(liveDeltas ? { liveDeltas } : {}) };
  const callWorkerModel = (input: ModelStepInput) => callModel(input, workerModels);
  const tenantGuard = tenantBudgets ? new TenantBudgetGuard(tenantBudgets) : undefined;
  const registry = createToolRegistry(tools, maxAgentDepth);
  mcp?.checkLocalTools(tools.map((tool) => tool.name));
  // One per worker (per plugin): a second worker in the same process has a cache of its own.
  const caches = { transcripts: new TranscriptCache(transcriptCache), toolSets: new ToolSetCache() };

  const expiringBeforeMs = notifications || slack ? msToNumber((notifications?.expiringBefore ?? '1h') as Parameters<typeof msToNumber>[0]) : 0;
  const slackNotifier = slack ? new SlackNotifier(slack, { warn: (message, meta) => Context.current().log.warn(message, meta) }) : undefined;
  /** What a turn's model steps need of the worker's tools (model-step.ts). */
  const stepTools: StepTools = {
    // The MCP servers' tools are listed here, so the turn records the set it offers and keeps it.
    async describe(names) {
      const { specs, leftOut } = mcp ? await mcp.describe(registry, names) : { specs: registry.specs(names), leftOut: [] };
      return { specs, ...(notifications || slack ? { notifications: { expiringBeforeMs } } : {}), ...(leftOut.length > 0 ? { leftOut } : {}) };
    },
    async prepare(calls) {
      if (!mcp || !calls.some((call) => mcp.owns(call.toolName))) return prepareToolCalls(registry, { calls });
      const own = await prepareToolCalls(registry, { calls: calls.filter((call) => !mcp.owns(call.toolName)) });
      return Promise.all(calls.map((call) => (mcp.owns(call.toolName) ? mcp.prepare(call) : own.shift()!)));
    },
  };
  return {
    // The model governor's (workflows/capacity/model-governor.ts): they pause and restore a model queue's rate.
    ...modelGovernorActivities,
    /** An A2A task's push notifications to one config (workflows/a2a/a2a-push-notifier.ts); loads `@a2a-js/sdk` at its first run. */
    async deliverA2aPush(input: A2aPushNotifierInput): Promise<A2aPushDeliveryResult> {
      const { deliverA2aPush } = await import('./a2a-push/push-delivery.js');
      return deliverA2aPush(input, { allow: a2aPushAllow ?? NOTHING_ALLOWED }, a2aPushSigningKey);
    },
    /**
     * One nudge: the call's Slack message (posted on `parked`, updated after), then the webhook;
     * retried with backoff by the turn's activity options while either is down. A retry does not
     * post the message again (the attempt that posted it records it in its heartbeat, and the
     * worker remembers it); it may repeat the webhook under the same delivery id, which its
     * receiver can drop. One refused for good does not keep the other from being sent.
     */
    async notifyApprovers(notification: ApprovalNotification): Promise<NotifyApproversResult | undefined> {
      const context = Context.current();
      const failures: unknown[] = [];
      let posted: SlackMessageRef | undefined;
      if (slackNotifier) {
        const earlier = (context.info.heartbeatDetails as NotifyApproversResult | undefined)?.slack;
        try {
          posted = await slackNotifier.deliver(notification, earlier);
          if (posted && notification.event === 'parked' && !earlier) context.heartbeat({ slack: posted } satisfies NotifyApproversResult);
        } catch (error) {
          failures.push(error);
        }
      }
      if (notifications) {
        try {
          await sendNotification(notifications, notification, context.cancellationSignal);
        } catch (error) {
          failures.push(error);
        }
      }
      // Nothing when no message was posted: the result in history stays empty (binary/null), as before Slack.
      const result: NotifyApproversResult | undefined = notification.event === 'parked' && posted ? { slack: posted } : undefined;
      if (failures.length === 0) return result;
      // Either may pass on a retry: try again. Both refused for good: so is the nudge.
      const retryable = failures.find((failure) => !(failure instanceof ApplicationFailure && failure.nonRetryable));
      if (retryable !== undefined) throw retryable;
      // The message is posted, the webhook refused for good: later nudges still update the message.
      if (result) {
        context.log.warn('The webhook refused an approval nudge; its Slack message was posted', { approvalId: notification.approvalId, error: String(failures[0]) });
        return result;
      }
      throw failures[0];
    },
    async executeTool(input: ExecuteToolInput): Promise<ExecuteToolResult> {
      const result = mcp?.owns(input.toolName) ? await mcp.execute(input) : await executeTool(registry, input);
      return contentStore ? storeLargeOutput(result, contentStore) : result;
    },
    /** A call of a `cancellable` tool running when its turn was cancelled: the tool undoes what it started (cancel-tool-call.ts). */
    async cancelToolCall(input: CancelToolCallInput): Promise<string> {
      return cancelToolCall(registry, input);
    },
    /** An agent tool call's user message for its child turn, from the tool's prompt function. */
    async agentToolPrompt(request: AgentToolPromptInput): Promise<string> {
      const tool = registry.get(request.toolName);
      try {
        return agentToolPrompt(tool?.kind === 'agent' ? tool : undefined, request.toolName, request.input);
      } catch (error) {
        throw ApplicationFailure.nonRetryable(error instanceof Error ? error.message : String(error), 'AgentToolPromptFailed');
      }
    },
    async callModel(request: ModelStepRequest) {
      if (!request?.model?.provider) throw ApplicationFailure.nonRetryable('model.provider is required', 'InvalidModelSettings');
      const context = Context.current();
      // Taken from its queue: counted with how long it waited there (model capacity's metrics).
      recordModelAdmitted(context);
      // Alive while it runs, however long the model takes: a step whose worker died, or whose
      // task a worker's shutdown lost in transit, is tried again after the turn's heartbeat
      // timeout (30 s by default), not after the whole start-to-close timeout.
      const keepAlive = setInterval(() => context.heartbeat(), MODEL_HEARTBEAT_MS);
      try {
        // Under the fleet's token limit, the call waits for its booking first (model-tokens/token-gate.ts).
        const metered = modelTokens ? (input: ModelStepInput) => modelTokens.around(context, input, callWorkerModel) : callWorkerModel;
        const call = contentStore
          ? async (input: ModelStepInput) => metered({ ...input, messages: await readStoredContent(input.messages, contentStore, modelToolOutputBytes) })
          : metered;
        const price = aiSdkPriceOf(priceTable, request.model, workerModels.models) ?? priceOf(priceTable, request.model);
        // With tenant budgets, a tenant over its budget is answered without the model (tenant-budgets/tenant-budget-guard.ts).
        const guarded = tenantGuard ? (input: ModelStepInput) => tenantGuard.around(context, request, input, call, (usage) => costOf(price, usage)) : call;
        const result = await runModelStep(request, stepTools, caches, context, guarded);
        if (result.tenantBudget) return result;
        const costUsd = costOf(price, result.usage);
        if (costUsd === undefined) return result;
        recordModelCost(context, request.model, costUsd);
        return { ...result, usage: { ...result.usage, costUsd } };
      } finally {
        clearInterval(keepAlive);
      }
    },
  };
}

/** How often a model step heartbeats: well inside the turn's default heartbeat timeout of 30 s. */
const MODEL_HEARTBEAT_MS = 5_000;

export type TurnpikeActivities = ReturnType<typeof createActivities>;
