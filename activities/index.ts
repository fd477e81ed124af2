/**
 * The activities of turnpike's workflows, bound to one worker's tool set. Every side effect
 * of a turn happens here: model calls, approval policies, tool executions.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure, msToNumber } from '@temporalio/common';
import { executeTool } from './execute-tool.js';
import { callModel } from './model.js';
import { sendNotification, type NotificationOptions } from './notify.js';
import { prepareToolCalls, type PrepareToolCallsInput } from './prepare-tool-calls.js';
import { createToolRegistry } from './tool-registry.js';
import type { LazyMcpTools } from './mcp/lazy-mcp-tools.js';
import type { Tool } from './tools.js';
import { ToolSetCache } from './tool-set-cache.js';
import { TranscriptCache, type TranscriptCacheOptions } from './transcript-cache.js';
import { resolveModelStep } from './transcript-source.js';
import type { ApprovalNotification, DescribedTools, ExecuteToolInput, ModelStepRequest, ToolSpec } from '../workflows/types.js';

export interface CreateActivitiesOptions {
  tools: readonly Tool[];
  /** Webhook nudges for approvals (parked, expiring, decided); none when absent. */
  notifications?: NotificationOptions;
  /** Limits of the worker-side cache of turn transcripts (see activities/transcript-cache.ts). */
  transcriptCache?: TranscriptCacheOptions;
  /** Tools of MCP servers, offered next to `tools` under `<server>__<tool>` names. */
  mcp?: LazyMcpTools;
}

export function createActivities({ tools, notifications, transcriptCache, mcp }: CreateActivitiesOptions) {
  const registry = createToolRegistry(tools);
  mcp?.checkLocalTools(tools.map((tool) => tool.name));
  // One per worker (per plugin): a second worker in the same process has a cache of its own.
  const caches = { transcripts: new TranscriptCache(transcriptCache), toolSets: new ToolSetCache() };

  const expiringBeforeMs = notifications ? msToNumber((notifications.expiringBefore ?? '1h') as Parameters<typeof msToNumber>[0]) : 0;
  return {
    /**
     * Data-only specs of the tools offered this turn (local activity), and whether to nudge
     * approvers: the turn reads this once, so a running turn keeps the setting it started with.
     */
    async describeTools({ names }: { names?: string[] }): Promise<ToolSpec[] | DescribedTools> {
      // The MCP servers' tools are listed here, so the turn records the set it offers and keeps it.
      const specs = mcp ? await mcp.describe(registry, names) : registry.specs(names);
      return notifications ? { specs, notifications: { expiringBeforeMs } } : specs;
    },
    /** One webhook nudge; retried with backoff by the turn's activity options while the receiver is down. */
    async notifyApprovers(notification: ApprovalNotification): Promise<void> {
      if (!notifications) return;
      await sendNotification(notifications, notification, Context.current().cancellationSignal);
    },
    /** Validation and approval policy for every call of a step (local activity). */
    async prepareToolCalls(input: PrepareToolCallsInput) {
      if (!mcp || !input.calls.some((call) => mcp.owns(call.toolName))) return prepareToolCalls(registry, input);
      const own = await prepareToolCalls(registry, { calls: input.calls.filter((call) => !mcp.owns(call.toolName)) });
      return Promise.all(input.calls.map((call) => (mcp.owns(call.toolName) ? mcp.prepare(call) : own.shift()!)));
    },
    async executeTool(input: ExecuteToolInput) {
      return mcp?.owns(input.toolName) ? mcp.execute(input) : executeTool(registry, input);
    },
    async callModel(request: ModelStepRequest) {
      if (!request?.model?.provider) throw ApplicationFailure.nonRetryable('model.provider is required', 'InvalidModelSettings');
      return resolveModelStep(request, caches, Context.current(), callModel);
    },
  };
}

export type TurnpikeActivities = ReturnType<typeof createActivities>;
