/** One model step, routed to the provider the turn names. */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { importOptional } from '../peers/optional-packages.js';
import type { AiSdkModels } from './providers/ai-sdk-models.js';
import type { CloudSettings } from './providers/clouds.js';
import { endpointCallOptions, type OpenAIEndpoints } from './providers/endpoints.js';
import type { RemoteMcpServers } from './providers/remote-mcp-servers.js';
import type { ProviderCallOptions } from './providers/errors.js';
import { scriptedModelStep } from './providers/scripted.js';
import { redactedFailure, workerSecrets } from './providers/secret-redaction.js';
import { PROVIDER_APPROVAL_PROVIDERS, withoutProviderApprovals } from '../workflows/calls/provider-approvals.js';
import { StepStream } from './step-stream.js';
import type { LiveDeltaChannel } from './live-deltas.js';
import { isRateLimitedError, recordModelCall, recordModelRateLimited } from './telemetry.js';
import type { ModelProvider, ModelStepInput, ModelStepResult } from '../workflows/types/index.js';
import type { TurnEvent } from '../workflows/types/turn-events.js';

type ProviderCall = (input: ModelStepInput, options: ProviderCallOptions, worker: WorkerModels) => Promise<ModelStepResult>;

/** What a worker was given to reach models by name: AI SDK models, OpenAI-compatible endpoints, cloud settings. */
export interface WorkerModels {
  models: AiSdkModels;
  endpoints: OpenAIEndpoints;
  clouds?: CloudSettings;
  /** Remote MCP servers OpenAI may call for `openai-responses` turns that name them (providers/remote-mcp-servers.ts). */
  remoteMcpServers?: RemoteMcpServers;
  /** Where a streaming step also pushes each delta as it comes (live-deltas.ts). */
  liveDeltas?: LiveDeltaChannel;
}

const NO_WORKER_MODELS: WorkerModels = { models: {}, endpoints: {} };

/**
 * The SDKs are loaded when a provider is first called, not when the worker starts: together they
 * hold ~20 MB of RSS that a worker which never calls them (or calls only one) should not carry.
 * They are optional peer dependencies, so an application installs only the ones it calls; a turn
 * that names a provider whose SDK is missing fails at its first step, naming the package.
 */
const providers: Record<ModelProvider, ProviderCall> = {
  scripted: async (input, options) => scriptedModelStep(input, options.onDelta),
  openai: async (input, options, worker) =>
    (await importOptional('The model provider "openai"', ['openai'], () => import('./providers/openai.js'))).callOpenAI(input, { ...options, ...endpointCallOptions(worker.endpoints, input.model) }),
  'openai-responses': async (input, options, worker) =>
    (await importOptional('The model provider "openai-responses"', ['openai'], () => import('./providers/openai-responses.js'))).callOpenAIResponses(input, {
      ...options,
      ...endpointCallOptions(worker.endpoints, input.model),
    }, worker.remoteMcpServers),
  anthropic: async (input, options) =>
    (await importOptional('The model provider "anthropic"', ['@anthropic-ai/sdk'], () => import('./providers/anthropic.js'))).callAnthropic(input, options),
  // The clouds' clients come from their own packages, on top of the first-party SDK whose step they run.
  'anthropic-bedrock': async (input, options, worker) =>
    (await importOptional('The model provider "anthropic-bedrock"', ['@anthropic-ai/bedrock-sdk', '@anthropic-ai/sdk'], () => import('./providers/anthropic-bedrock.js'))).callAnthropicBedrock(
      worker.clouds ?? {},
      input,
      options,
    ),
  'anthropic-vertex': async (input, options, worker) =>
    (await importOptional('The model provider "anthropic-vertex"', ['@anthropic-ai/vertex-sdk', '@anthropic-ai/sdk'], () => import('./providers/anthropic-vertex.js'))).callAnthropicVertex(
      worker.clouds ?? {},
      input,
      options,
    ),
  'azure-openai': async (input, options, worker) =>
    (await importOptional('The model provider "azure-openai"', ['openai'], () => import('./providers/azure-openai.js'))).callAzureOpenAI(worker.clouds ?? {}, input, options),
  'azure-openai-responses': async (input, options, worker) =>
    (await importOptional('The model provider "azure-openai-responses"', ['openai'], () => import('./providers/azure-openai.js'))).callAzureOpenAIResponses(
      worker.clouds ?? {},
      input,
      options,
      worker.remoteMcpServers,
    ),
  // The application brings the AI SDK provider package and the model object; nothing to load here.
  'ai-sdk': async (input, options, worker) => (await import('./providers/ai-sdk.js')).callAiSdk(worker.models, input, options),
};

/**
 * What the HTTP providers need from the activity: its signal, so a cancelled turn aborts the
 * request instead of waiting for it; its attempt and retry policy, so a provider's `retry-after`
 * is fitted to the policy instead of overriding it (see `nextRetryDelayFor`).
 */
function providerCallOptions(context: Context, stream: StepStream | undefined): ProviderCallOptions {
  const { attempt, retryPolicy } = context.info;
  return { signal: context.cancellationSignal, retry: { attempt, retryPolicy }, ...(stream ? { onDelta: stream.listener } : {}) };
}

export async function callModel(input: ModelStepInput, worker: WorkerModels = NO_WORKER_MODELS): Promise<ModelStepResult> {
  const provider = Object.hasOwn(providers, input.model.provider) ? providers[input.model.provider] : undefined;
  if (!provider) {
    throw ApplicationFailure.nonRetryable(
      `Unknown model provider "${String(input.model.provider)}"; expected one of ${Object.keys(providers).join(', ')}`,
      'InvalidModelSettings',
    );
  }
  const context = Context.current();
  // A turn that streams asks for the deltas on its event stream (workflows/types/turn-events.ts).
  const stream = input.stream ? StepStream.open(input.stream, worker.liveDeltas) : undefined;
  let result: ModelStepResult;
  let unsent: TurnEvent[] = [];
  try {
    // A provider's approval requests go back only to the provider that made them.
    const sent = PROVIDER_APPROVAL_PROVIDERS.includes(input.model.provider) ? input : { ...input, messages: withoutProviderApprovals(input.messages) };
    result = await provider(sent, providerCallOptions(context, stream), worker);
  } catch (error) {
    if (isRateLimitedError(error)) recordModelRateLimited(context);
    // A provider's error may echo a credential; what is thrown here reaches history and the worker's log.
    throw redactedFailure(error, workerSecrets(worker));
  } finally {
    // Every delta reaches the turn before the step's result does, so `step-finished` follows
    // them; an instant step's deltas come back here instead and travel with its result.
    unsent = (await stream?.close()) ?? [];
  }
  if (unsent.length > 0) result = { ...result, unsentEvents: unsent };
  // Reasoning alone is empty too: the model thought but neither answered nor called a tool.
  const empty = !result.message.content.some((part) => part.type === 'tool-call' || (part.type === 'text' && part.text.trim() !== ''));
  // A refusal or a content filter often comes back empty, and asking again would only be refused
  // again (and billed): the turn ends with status `refused` and keeps no empty message
  // (workflows/turn/cut-off-step.ts). So does a reply the token limit cut off before it said anything.
  const cutOff = result.finishReason === 'length' || result.finishReason === 'content-filter';
  if (empty && !cutOff) {
    // An empty assistant message would make the history invalid (Anthropic rejects it), so it
    // never reaches the workflow: retried like any transient provider fault, then a clear failure.
    throw ApplicationFailure.retryable(`${input.model.provider}: the model returned an empty response (no text, no tool calls)`, 'EmptyModelResponse');
  }
  recordModelCall(context, input, result);
  return result;
}
