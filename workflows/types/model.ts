/**
 * Model settings, finish reasons and token usage.
 * Pure types: nothing here runs.
 */

/**
 * `openai` is Chat Completions (and any OpenAI-compatible server); `openai-responses` is OpenAI's
 * Responses API, with reasoning items carried across steps. They are separate providers, as
 * `openai.chat(model)` and `openai.responses(model)` are separate models in the AI SDK, because
 * their wire formats and what they keep in history differ. `ai-sdk` is any AI SDK language model
 * (`@ai-sdk/google`, `@ai-sdk/mistral`, `@ai-sdk/openai-compatible`, …) the worker registered by
 * name (`models` on `createWorker` / `TurnpikePlugin`); the turn's `model` is that name.
 */
export type ModelProvider = 'openai' | 'openai-responses' | 'anthropic' | 'ai-sdk' | 'scripted' | CloudProvider;

/**
 * Claude and GPT in a cloud account: `anthropic-bedrock` (Amazon Bedrock), `anthropic-vertex`
 * (Google Vertex AI), `azure-openai` (Azure OpenAI, Chat Completions) and `azure-openai-responses`
 * (Azure OpenAI, the Responses API). Each speaks its first-party
 * API's wire format through the official client (`@anthropic-ai/bedrock-sdk`,
 * `@anthropic-ai/vertex-sdk`, `openai`'s `AzureOpenAI`), so it takes that provider's options. Its
 * region, project, deployments, API version and credentials are settings the worker holds by name
 * (`clouds` on `createWorker` / `TurnpikePlugin`); a turn names them with `endpoint`.
 */
export type CloudProvider = 'anthropic-bedrock' | 'anthropic-vertex' | 'azure-openai' | 'azure-openai-responses';

/**
 * Anthropic extended thinking (Messages API `thinking`). `enabled` gives the model a budget of
 * thinking tokens: at least 1024 and less than `maxTokens` (thinking counts toward it);
 * `adaptive` lets the model decide how much to think; `disabled` turns thinking off explicitly.
 */
export type AnthropicThinking =
  | { type: 'enabled'; budgetTokens: number }
  | { type: 'adaptive' }
  | { type: 'disabled' };

/** OpenAI `reasoning_effort`, for reasoning models (o-series, gpt-5 family). */
export type OpenAIReasoningEffort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh';

/** OpenAI Responses `reasoning.summary`: ask for readable summaries of the reasoning. */
export type OpenAIReasoningSummary = 'auto' | 'concise' | 'detailed';

/** OpenAI `service_tier`. */
export type OpenAIServiceTier = 'auto' | 'default' | 'flex' | 'scale' | 'priority';

/**
 * Which model runs a turn. Never holds secrets: keys come from the worker's environment.
 *
 * Provider-specific options are fields of their own, each valid for one provider only; the turn
 * validates them when it starts and fails with `InvalidTurnInput` naming the field rather than
 * ignore one (see `workflows/turn/model-settings.ts`). There is no catch-all field: an option spelt
 * wrong in an object literal (`maxToken`) does not compile.
 */
export interface ModelSettings {
  provider: ModelProvider;
  /** The provider's model id; for `ai-sdk`, the name the worker registered the model under. */
  model: string;
  /**
   * `openai` and `openai-responses`: a named OpenAI-compatible endpoint of the worker
   * (`endpoints` on `createWorker` / `TurnpikePlugin`), whose base URL and key the worker holds.
   * Without it, `OPENAI_BASE_URL` / `OPENAI_API_KEY`.
   * `anthropic-bedrock`, `anthropic-vertex`, `azure-openai`: the name of the worker's settings for
   * that cloud (`clouds`); without it, the worker's only settings for it.
   */
  endpoint?: string;
  /**
   * `ai-sdk` only: the call's `providerOptions`, keyed by the AI SDK provider's name, e.g.
   * `{ google: { thinkingConfig: { includeThoughts: true } } }`. Plain JSON; never a credential.
   */
  providerOptions?: Record<string, Record<string, unknown>>;
  /**
   * The output token limit of each model call (reasoning included). Anthropic requires one and
   * gets 4096 when it is left out. OpenAI gets it as `max_completion_tokens` for reasoning models,
   * else as `max_tokens`; the Responses API as `max_output_tokens` (at least 16).
   */
  maxTokens?: number;
  temperature?: number;
  /** Anthropic only (`anthropic`, `anthropic-bedrock`, `anthropic-vertex`): extended thinking. */
  thinking?: AnthropicThinking;
  /**
   * OpenAI: sent as `reasoning_effort` (Chat Completions) or `reasoning.effort` (Responses);
   * `ai-sdk`: the call's `reasoning` option, which the AI SDK provider maps to its own.
   */
  reasoningEffort?: OpenAIReasoningEffort;
  /** `openai-responses` only: sent as `reasoning.summary`, so reasoning parts carry readable text. */
  reasoningSummary?: OpenAIReasoningSummary;
  /** OpenAI only (both APIs): `service_tier`. */
  serviceTier?: OpenAIServiceTier;
  /** OpenAI only (both APIs): `metadata`, at most 16 string pairs (keys ≤ 64, values ≤ 512 characters). */
  metadata?: Record<string, string>;
  /**
   * `openai-responses` only: whether OpenAI stores the response. Default `false`: nothing is kept
   * at OpenAI, and reasoning travels back encrypted in the turn's history.
   */
  store?: boolean;
  /**
   * Whether each model call streams (default true): the turn's listeners then see text, reasoning
   * and tool-call input as the model writes them. `false` makes one plain request per call, for an
   * OpenAI-compatible server that cannot stream; the step's result is the same either way.
   */
  stream?: boolean;
  /**
   * Anthropic only: prompt caching of the stable prefix (tools, system prompt, earlier messages),
   * on unless this is `false`. Cache reads show in `usage.cachedInputTokens`.
   */
  promptCaching?: boolean;
  /**
   * Hosted tools the provider runs itself, offered beside the turn's own tools (docs/models.md):
   * `anthropic` takes `web_search`, `web_fetch` and `code_execution`; `openai-responses` takes
   * `web_search`, `file_search`, `code_interpreter` and `mcp` (remote MCP servers). Each is the
   * provider's own tool options with turnpike's name as `type`, e.g.
   * `{ type: 'web_search', max_uses: 3 }`. Plain JSON; never a credential.
   */
  providerTools?: ProviderToolSpec[];
}

/** A hosted tool of the provider, by turnpike's name, with the provider's options for it. */
export interface ProviderToolSpec {
  type: string;
  [option: string]: unknown;
}

/**
 * Why the model stopped, mapped from each provider's own value: `length` when its output token
 * limit or the context window cut the reply off, `content-filter` when it refused or a filter
 * stopped it. Either ends the turn (status `max-tokens` / `refused`; see `cut-off-step.ts`).
 */
export type FinishReason = 'stop' | 'tool-calls' | 'length' | 'content-filter' | 'other';

export interface Usage {
  /** Every input token, cached ones included (Anthropic's cache reads and writes are added in). */
  inputTokens: number;
  /** Every output token, reasoning included. */
  outputTokens: number;
  /**
   * Of `inputTokens`, how many were read from the provider's prompt cache (OpenAI
   * `prompt_tokens_details.cached_tokens`, Anthropic `cache_read_input_tokens`). Present when the
   * provider reported it.
   */
  cachedInputTokens?: number;
  /**
   * Of `inputTokens`, how many were written to the provider's prompt cache (Anthropic
   * `cache_creation_input_tokens`, billed above plain input). Present when a step wrote any.
   */
  cacheWriteInputTokens?: number;
  /**
   * Of `outputTokens`, how many were reasoning (OpenAI `completion_tokens_details.reasoning_tokens`,
   * Anthropic `output_tokens_details.thinking_tokens`). Present when the provider reported it.
   */
  reasoningTokens?: number;
  /**
   * USD, from the worker's price table (`prices` on `TurnpikePlugin`; docs/budgets.md): a step's
   * cost, or a turn's sum over the steps whose model had a price. Absent when none had one.
   */
  costUsd?: number;
  /**
   * Web searches a hosted web search tool ran (Anthropic `usage.server_tool_use.web_search_requests`;
   * OpenAI Responses: the step's `web_search_call` items): billed per search on top of the tokens,
   * and priced by the worker's table. Present when any ran.
   */
  webSearchRequests?: number;
  /** OpenAI Responses `file_search_call` items: billed per call. Present when any ran. */
  fileSearchRequests?: number;
  /**
   * OpenAI Responses code interpreter containers the step ran code in (distinct `container_id`s of
   * its `code_interpreter_call` items): billed per container. Present when any ran.
   */
  codeInterpreterContainers?: number;
  /** Pages a hosted web fetch tool fetched (Anthropic `usage.server_tool_use.web_fetch_requests`). Present when any were. */
  webFetchRequests?: number;
}
