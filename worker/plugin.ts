/**
 * `TurnpikePlugin`: turnpike on a Worker (and Client) the user creates, next to their own
 * workflows and activities, the way `@temporalio/ai-sdk` ships `AiSdkPlugin`:
 *
 *   const worker = await Worker.create({
 *     connection, taskQueue: 'orders',
 *     workflowsPath: require.resolve('./workflows'),   // re-exports agentTurn, agentConversation
 *     activities: myActivities,
 *     plugins: [new TurnpikePlugin({ tools: [lookupOrder, issueRefund] })],
 *   });
 *
 * On a Worker it adds turnpike's activities (model calls, tool policies, tool executions) and
 * its payload codecs (compression, and the claim check that keeps large payloads in the content
 * store), and has the workflow bundle preload zod once per V8 context. On a Client it adds the
 * codecs, so large turn inputs and results read back as JSON.
 */
import { fileURLToPath } from 'node:url';
import type { DataConverter } from '@temporalio/common';
import { SimplePlugin } from '@temporalio/plugin';
import { Runtime, type BundleOptions, type Worker, type WorkerOptions } from '@temporalio/worker';
import { createActivities } from '../activities/index.js';
import { checkedPushAllowList, pushAllowFromEnvironment } from '../activities/a2a-push/receiver-addresses.js';
import { checkedPushSigningKey, pushSigningKeyFromEnvironment, type A2aPushSigningKey } from '../activities/a2a-push/push-jwt-key.js';
import type { McpServerConfig } from '../activities/mcp/mcp-servers.js';
import { LazyMcpTools } from '../activities/mcp/lazy-mcp-tools.js';
import type { McpServerStatus } from '../activities/mcp/mcp-server-health.js';
import { notificationOptionsFromEnvironment, type NotificationOptions } from '../activities/notify.js';
import { checkedSlackMessageOptions, slackMessageOptionsFromEnvironment, type SlackMessageOptions } from '../activities/slack/slack-options.js';
import type { Tool } from '../activities/tools.js';
import type { TranscriptCacheOptions } from '../activities/transcript-cache.js';
import { turnpikeCodecs } from '../content/data-converter.js';
import type { ContentStore } from '../content/content-store.js';
import { contentStoreFromEnvironment } from '../content/store-from-environment.js';
import { checkedPrices, type PriceTable } from '../activities/prices.js';
import { checkedModels, type AiSdkModels } from '../activities/providers/ai-sdk-models.js';
import { checkedEndpoints, type OpenAIEndpoints } from '../activities/providers/endpoints.js';
import { checkedClouds, type CloudSettings } from '../activities/providers/clouds.js';
import { checkedRemoteMcpServers, type RemoteMcpServers } from '../activities/providers/remote-mcp-servers.js';
import type { LiveDeltaChannel } from '../activities/live-deltas.js';
import { liveDeltasFromEnvironment, type PostgresLiveDeltas } from '../activities/postgres-live/postgres-live-deltas.js';
import { checkedTenantBudgets, type TenantBudgetOptions } from '../activities/tenant-budgets/tenant-budget-options.js';
import { ModelTokenGate, type ModelTokenLimit } from '../activities/model-tokens/token-gate.js';

/** Our own modules' extension: `.ts` when run from source (tsx, vitest), `.js` once built. */
const extension = import.meta.url.endsWith('.ts') ? '.ts' : '.js';

/** The module every turnpike workflow bundle preloads (see workflows/preload.ts). */
export const WORKFLOW_PRELOAD_PATH = fileURLToPath(new URL(`../workflows/preload${extension}`, import.meta.url));

/** The workflow interceptor module every turnpike workflow bundle carries (see workflows/legacy-query-guard.ts). */
export const LEGACY_QUERY_GUARD_PATH = fileURLToPath(new URL(`../workflows/legacy-query-guard${extension}`, import.meta.url));

export interface TurnpikePluginOptions {
  /**
   * Where streaming model steps also push each delta as the provider streams it, for readers
   * whose `TurnpikeClient` has the same channel (`inProcessLiveDeltas` when they share this
   * process; docs/streaming.md). Default: the PostgreSQL channel `TURNPIKE_LIVE_POSTGRES_URL`
   * names (`liveDeltasFromEnvironment`), closed when the worker stops; without either, readers
   * follow the durable stream alone.
   */
  liveDeltas?: LiveDeltaChannel;
  /** The tools turns may offer the model, from `defineTool` / `defineClientTool` / `defineAgentTool`. Omit on a Client. */
  tools?: readonly Tool[];
  /**
   * Gzip payloads of 4 KiB or more (turn inputs and results carry conversations). Default true.
   * Every worker and client that reads these workflows needs the same codec; it leaves smaller
   * payloads, and payloads it did not compress, untouched.
   */
  compressPayloads?: boolean;
  /**
   * Where content too large for workflow history is kept: payloads of 128 KiB or more (the claim
   * check), large tool outputs, and stored images and documents that model steps read back.
   * Every worker, client, HTTP API and codec server of a namespace must use the same store.
   * Default: the one `TURNPIKE_CONTENT_STORE` names, else `.turnpike/content` (see
   * docs/content-store.md).
   */
  contentStore?: ContentStore;
  /**
   * The most of one stored tool output (one of 128 KiB or more) a model step sends: its first this
   * many bytes of JSON and a note with its size and reference. Default 1 MiB
   * (`DEFAULT_MODEL_OUTPUT_BYTES`): no provider takes a 50 MB tool result in a request, and a
   * model's context holds a few MB of text at most. The caller still reads the whole output.
   */
  modelToolOutputBytes?: number;
  /**
   * Model prices, USD per million tokens, keyed `provider:model` (a dated model name matches its
   * undated key): over the built-in table of common OpenAI and Anthropic models
   * (`DEFAULT_PRICES`, activities/prices.ts). Each model step's `usage.costUsd` comes from it,
   * and turns' `costUsd` budgets (docs/budgets.md).
   */
  prices?: PriceTable;
  /**
   * Webhook nudges for approvals: when a call parks, when its approval is about to expire, and
   * when it is decided. Default: from `TURNPIKE_WEBHOOK_URL` (+ `_SECRET`, `_EXPIRING_BEFORE`).
   */
  notifications?: NotificationOptions;
  /**
   * Approval messages in Slack: one per parked call, in the channel of its tool, else of its first
   * approver group that has one, else the default; updated as votes, escalation steps and
   * delegations come, and replaced by the final state (no buttons) once it is decided or expires.
   * Needs `@slack/web-api`. Default: from `SLACK_BOT_TOKEN` and `TURNPIKE_SLACK_CHANNEL` (both
   * needed). See docs/tools-and-approvals.md.
   */
  slack?: SlackMessageOptions;
  /**
   * Limits of the worker's cache of turn transcripts, which lets each model step's activity input
   * carry only the messages new since the previous step (default: 1,000 turns, 16 Mi of JSON).
   * A step whose transcript is not cached reads it from its turn, so a smaller cache costs a
   * query per step, never correctness.
   */
  transcriptCache?: TranscriptCacheOptions;
  /**
   * MCP servers whose tools turns may offer, by a name that prefixes their tools
   * (`<server>__<tool>`): `{ command, args?, env? }` for stdio, `{ url, headers? }` for streamable
   * HTTP, each with optional approval and activity options per server and per tool. Connected
   * on first use and kept open while the worker runs; closed when it stops.
   */
  mcpServers?: Record<string, McpServerConfig>;
  /**
   * Keep the original source text in the workflow bundle's source map. Default false: the SDK
   * reads it only for `showStackTraceSources`, which is off by default, and it is 1.7 MB of the
   * 3.6 MB bundle that every workflow thread holds (twice over, as a two-byte string). Stack traces
   * still map to the original files and lines without it. Set true if your workers set
   * `showStackTraceSources` for the Web UI's stack trace view.
   */
  bundleSourceContent?: boolean;
  /**
   * How deep agent tools (`defineAgentTool`) may nest: a call that would start a child turn
   * deeper than this gets an error result instead. Default 3; a turn's `maxAgentDepth` overrides it.
   */
  maxAgentDepth?: number;
  /**
   * AI SDK language models by name, for turns of provider `ai-sdk`:
   * `{ gemini: google('gemini-2.5-flash'), local: ollama('qwen3') }` (any provider package of
   * specification v3 or v4). A turn names one: `model: { provider: 'ai-sdk', model: 'gemini' }`.
   * The model objects hold their keys and base URLs; a turn's history holds only the name.
   */
  models?: AiSdkModels;
  /**
   * Named OpenAI-compatible endpoints (vLLM, llama.cpp, Ollama, LiteLLM, …) for turnpike's own
   * `openai` provider: `{ vllm: { baseURL: 'http://vllm:8000/v1', apiKeyEnv: 'VLLM_API_KEY' } }`.
   * A turn names one: `model: { provider: 'openai', endpoint: 'vllm', model: 'qwen3-32b' }`.
   */
  endpoints?: OpenAIEndpoints;
  /**
   * Claude on Amazon Bedrock and Google Vertex AI, GPT on Azure OpenAI: each cloud's settings by
   * name, `{ bedrock: { eu: { region: 'eu-central-1' } }, azure: { prod: { endpoint, apiVersion } } }`.
   * A turn names them: `model: { provider: 'anthropic-bedrock', endpoint: 'eu', model: 'claude-sonnet-4-5' }`.
   * Credentials come from the environment and each cloud's credential chain (docs/models.md).
   */
  clouds?: CloudSettings;
  /**
   * Named remote MCP servers that OpenAI calls itself, for `openai-responses` turns that offer the
   * hosted `mcp` tool: `{ deepwiki: { url: 'https://mcp.deepwiki.com/mcp', headersEnv: { Authorization: 'DEEPWIKI_AUTH' } } }`.
   * A turn names one (`providerTools: [{ type: 'mcp', server_label: 'deepwiki' }]`); the URL and
   * the headers (read from the environment at every call) never enter its history.
   */
  remoteMcpServers?: RemoteMcpServers;
  /**
   * Budgets per tenant over time: what each tenant (a turn's `tenant`) may spend on model calls
   * per UTC day or month, counted in a store every worker of the fleet shares
   * (`PostgresTenantUsageStore`). A tenant over a limit has its next model step answered without
   * the model, and the turn parks a budget approval (docs/tenants-and-capacity.md). The store is
   * the caller's to close.
   */
  tenantBudgets?: TenantBudgetOptions;
  /**
   * A tokens-per-minute limit on this Worker's model calls, held across the fleet in a shared
   * counter: give it to the Worker of the model task queue (`createWorker` does, from
   * `modelCapacity.tokenLimit`).
   */
  modelTokenLimit?: ModelTokenLimit;
  /**
   * The A2A push receivers on private networks this worker may deliver to: CIDRs (`10.0.0.0/8`,
   * `fd00::/8`), addresses, or host names (every address of an allowed name is allowed). A push
   * notification to any other receiver whose address (the URL's, or one its name resolves to when
   * it is sent) is loopback, private, link-local, unique-local, CGNAT, multicast, unspecified or
   * reserved is refused and given up on (docs/protocols.md). Default `TURNPIKE_A2A_PUSH_ALLOW`
   * (comma-separated), else none.
   */
  a2aPushAllow?: readonly string[];
  /**
   * The private key this worker signs each A2A push notification's JWT with (beside the HMAC
   * signature, which is always sent): a PKCS#8 PEM or a private JWK (EC P-256/384/521, RSA of
   * 2048 bits or more, or Ed25519), and the `kid` its tokens name (default: the JWK's `kid`, else
   * the public key's RFC 7638 thumbprint). The API publishes the public keys
   * (`A2aOptions.pushKeys`); to rotate, publish the new key beside the old, then give the workers
   * the new one. A malformed key is refused as the plugin is made. Needs the optional peer `jose`.
   * Default `TURNPIKE_A2A_PUSH_SIGNING_KEY` (and `TURNPIKE_A2A_PUSH_SIGNING_KID`), else none: the
   * notifications carry no JWT.
   */
  a2aPushSigningKey?: A2aPushSigningKey;
}

/** The worker's A2A push signing key, checked now: a malformed one stops the worker before it polls. */
function signingKeyOf(given: A2aPushSigningKey | undefined) {
  const key = given ?? pushSigningKeyFromEnvironment();
  return key ? { a2aPushSigningKey: checkedPushSigningKey(key, given ? 'TurnpikePlugin a2aPushSigningKey' : 'TURNPIKE_A2A_PUSH_SIGNING_KEY') } : {};
}

/** The SDK's own devtool (bundler.js); a devtool the user chose is left as it is. */
const SDK_DEVTOOL = 'inline-source-map';

function checkedOutputBytes(bytes: number): number {
  if (!Number.isInteger(bytes) || bytes < 1024) throw new TypeError(`TurnpikePlugin: modelToolOutputBytes must be an integer of at least 1024 (got ${String(bytes)})`);
  return bytes;
}

/** turnpike's codecs around the user's own: compress before encrypting, store what is still large last. */
function withTurnpikeCodecs(contentStore: ContentStore, compressPayloads: boolean): (existing: DataConverter | undefined) => DataConverter {
  return (existing) => ({ ...existing, payloadCodecs: turnpikeCodecs(existing?.payloadCodecs ?? [], { contentStore, compressPayloads }) });
}

export class TurnpikePlugin extends SimplePlugin {
  private readonly activityNames: string[];
  private readonly mcp?: LazyMcpTools;
  private readonly bundleSourceContent: boolean;
  private readonly ownedStore?: ContentStore;
  private readonly ownedLiveDeltas?: PostgresLiveDeltas;

  constructor(options: TurnpikePluginOptions = {}) {
    const notifications = options.notifications ?? notificationOptionsFromEnvironment();
    const slack = options.slack ? checkedSlackMessageOptions(options.slack, 'TurnpikePlugin') : slackMessageOptionsFromEnvironment();
    const mcp =
      options.mcpServers && Object.keys(options.mcpServers).length > 0
        ? new LazyMcpTools(options.mcpServers, () => ({ logger: Runtime.instance().logger, meter: Runtime.instance().metricMeter }))
        : undefined;
    const contentStore = options.contentStore ?? contentStoreFromEnvironment();
    const ownedLiveDeltas = options.liveDeltas ? undefined : liveDeltasFromEnvironment();
    const liveDeltas = options.liveDeltas ?? ownedLiveDeltas;
    const activities = createActivities({
      tools: options.tools ?? [],
      contentStore,
      ...(options.modelToolOutputBytes !== undefined ? { modelToolOutputBytes: checkedOutputBytes(options.modelToolOutputBytes) } : {}),
      ...(options.prices !== undefined ? { prices: checkedPrices(options.prices) } : {}),
      ...(notifications ? { notifications } : {}),
      ...(slack ? { slack } : {}),
      ...(options.transcriptCache ? { transcriptCache: options.transcriptCache } : {}),
      ...(mcp ? { mcp } : {}),
      ...(options.maxAgentDepth !== undefined ? { maxAgentDepth: options.maxAgentDepth } : {}),
      ...(options.models !== undefined ? { models: checkedModels(options.models, 'TurnpikePlugin') } : {}),
      ...(options.endpoints !== undefined ? { endpoints: checkedEndpoints(options.endpoints, 'TurnpikePlugin') } : {}),
      ...(options.clouds !== undefined ? { clouds: checkedClouds(options.clouds, 'TurnpikePlugin') } : {}),
      ...(options.remoteMcpServers !== undefined ? { remoteMcpServers: checkedRemoteMcpServers(options.remoteMcpServers, 'TurnpikePlugin') } : {}),
      ...(liveDeltas ? { liveDeltas } : {}),
      ...(options.tenantBudgets !== undefined ? { tenantBudgets: checkedTenantBudgets(options.tenantBudgets) } : {}),
      ...(options.modelTokenLimit !== undefined ? { modelTokens: new ModelTokenGate(options.modelTokenLimit) } : {}),
      a2aPushAllow: checkedPushAllowList(options.a2aPushAllow ?? pushAllowFromEnvironment(), options.a2aPushAllow ? 'TurnpikePlugin a2aPushAllow' : 'TURNPIKE_A2A_PUSH_ALLOW'),
      ...signingKeyOf(options.a2aPushSigningKey),
    });
    super({
      name: 'turnpike',
      activities,
      dataConverter: withTurnpikeCodecs(contentStore, options.compressPayloads !== false),
    });
    this.activityNames = Object.keys(activities);
    // A store the plugin opened is the plugin's to close; one it was given is the caller's.
    this.ownedStore = options.contentStore ? undefined : contentStore;
    this.ownedLiveDeltas = ownedLiveDeltas;
    this.mcp = mcp;
    this.bundleSourceContent = options.bundleSourceContent ?? false;
  }

  /**
   * What this worker knows of its MCP servers: up, down (with the error, and when it is tried
   * again) or unknown (no turn has needed it yet). `runWorker` serves it at `GET /mcp-servers`.
   */
  async mcpServers(): Promise<McpServerStatus[]> {
    return (await this.mcp?.statuses()) ?? [];
  }

  /** Closes the MCP connections (and stops stdio servers) once the worker has stopped. */
  override async runWorker(worker: Worker, next: (w: Worker) => Promise<void>): Promise<void> {
    try {
      await super.runWorker(worker, next);
    } finally {
      await this.mcp?.close();
      await this.ownedStore?.close?.();
      await this.ownedLiveDeltas?.close();
    }
  }

  override configureWorker(options: WorkerOptions): WorkerOptions {
    // Activities are merged by name: a user's activity of the same name would silently replace
    // turnpike's (or the reverse), so refuse to start instead.
    const clashes = this.activityNames.filter((name) => Object.hasOwn(options.activities ?? {}, name));
    if (clashes.length > 0) {
      throw new Error(
        `TurnpikePlugin: the worker already has activities named ${clashes.join(', ')}; turnpike registers activities under these names. Rename yours.`,
      );
    }
    return super.configureWorker(options);
  }

  override configureBundler(options: BundleOptions): BundleOptions {
    const configured = super.configureBundler(options);
    const userHook = configured.webpackConfigHook;
    const keepSources = this.bundleSourceContent;
    return {
      ...configured,
      preloadModules: [...new Set([...(configured.preloadModules ?? []), WORKFLOW_PRELOAD_PATH])],
      workflowInterceptorModules: [...new Set([...(configured.workflowInterceptorModules ?? []), LEGACY_QUERY_GUARD_PATH])],
      webpackConfigHook: (config) => {
        const hooked = userHook ? userHook(config) : config;
        return keepSources || hooked.devtool !== SDK_DEVTOOL ? hooked : { ...hooked, devtool: 'inline-nosources-source-map' };
      },
    };
  }
}
