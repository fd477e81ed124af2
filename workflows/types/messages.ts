/**
 * Messages and their parts: what a conversation is made of, provider-neutral.
 * Pure types: nothing here runs.
 */

/** JSON Schema as produced by `z.toJSONSchema`; sent to the model and used by update validators. */
export type JsonSchema = Record<string, unknown>;

/**
 * What an AI SDK provider attached to a part it returned (`providerMetadata`, keyed by its own
 * name: Gemini's `{ google: { thoughtSignature } }`), kept in history and sent back with the part
 * as its `providerOptions`. Only the `ai-sdk` provider reads or writes it; JSON only.
 */
export type ProviderMetadata = Record<string, Record<string, unknown>>;

export interface TextPart {
  type: 'text';
  text: string;
  /** `ai-sdk` only: see {@link ProviderMetadata}. */
  providerMetadata?: ProviderMetadata;
  /**
   * `anthropic` only: the text block's `citations` (web search result locations, …) exactly as the
   * API returned them, sent back with the text, unchanged, to Anthropic only. Other providers ignore them.
   */
  citations?: unknown[];
}

export interface ToolCallPart {
  type: 'tool-call';
  toolCallId: string;
  toolName: string;
  /**
   * The arguments the model produced. When a provider receives arguments that are not valid
   * JSON it keeps the raw text here as a string; validation then turns the call into an error
   * result the model can correct.
   */
  input: unknown;
  /**
   * `ai-sdk`: see {@link ProviderMetadata} (Gemini signs its function calls here). Also, under
   * `turnpike`, the `mcp_approval_request` item of an OpenAI remote MCP approval (tool
   * `openai_mcp_approval`), kept verbatim for the Responses API.
   */
  providerMetadata?: ProviderMetadata;
}

export interface ToolResultPart {
  type: 'tool-result';
  toolCallId: string;
  toolName: string;
  output: unknown;
  isError?: boolean;
}

/**
 * A model's reasoning ("thinking"), kept so that it can be sent back, exactly as received, to the
 * provider that produced it: Anthropic requires a thinking turn's blocks, signatures intact, when
 * the model continues after a tool call, even if the turn was parked for days in between.
 *
 * It is never part of a turn's `text`, and it is dropped (not translated) when the history goes to
 * another provider: a signature only means something to the provider that issued it.
 */
export interface ReasoningPart {
  type: 'reasoning';
  /** The provider that produced it; the only one it is ever sent to. */
  provider: ReasoningProvider;
  /** The reasoning as the provider returned it; '' when it was redacted or omitted. */
  text: string;
  /** Anthropic `thinking.signature`: opaque, sent back verbatim. */
  signature?: string;
  /** Anthropic `redacted_thinking.data`: encrypted reasoning with no readable text, sent back verbatim. */
  redactedData?: string;
  /** OpenAI Responses: the reasoning item's id (`rs_…`), sent back with it. */
  itemId?: string;
  /**
   * OpenAI Responses: the reasoning item's `encrypted_content`, opaque, sent back verbatim. With
   * `store: false` (turnpike's default) OpenAI keeps nothing between calls, so this is the only
   * copy of the model's reasoning, and a continuation after a tool call needs it.
   */
  encryptedContent?: string;
  /** OpenAI Responses: the item's summary texts, in order (`text` is them joined by a blank line). */
  summary?: string[];
  /** `ai-sdk`: what the AI SDK provider attached (signatures, encrypted reasoning), sent back verbatim. */
  providerMetadata?: ProviderMetadata;
}

/**
 * Providers whose reasoning a {@link ReasoningPart} can carry: `anthropic` (thinking blocks),
 * `openai` (reasoning items of the Responses API, provider `openai-responses`; Chat Completions
 * returns no reasoning and takes none back) and `ai-sdk` (an AI SDK model's reasoning parts, with
 * their `providerMetadata`; sent to `ai-sdk` models only, whose providers read only their own keys).
 */
export type ReasoningProvider = 'anthropic' | 'openai' | 'ai-sdk';

/**
 * Where an image's or a document's bytes are: inline as base64 (checked against the size limits
 * in `workflows/turn/binary-parts.ts` when the turn starts, because they travel in workflow history),
 * in turnpike's content store by reference (`TurnpikeClient` and the HTTP API store every inline
 * part of 128 KiB or more there; the model step reads it back, see content/stored-content.ts),
 * or a URL the provider fetches itself.
 */
export type BinarySource =
  | {
      type: 'base64';
      /** e.g. `image/png`, `application/pdf`. */
      mediaType: string;
      /** The bytes, base64-encoded (no `data:` prefix). */
      data: string;
    }
  | {
      type: 'url';
      /** An `https://` (or `http://`) URL the provider can fetch. */
      url: string;
      /** Optional; the provider infers it from the response when absent. */
      mediaType?: string;
    }
  | StoredSource;

/** Bytes kept in turnpike's content store: only their reference travels in workflow history. */
export interface StoredSource {
  type: 'stored';
  /** `sha256:` and the 64 hex digits of the bytes' SHA-256: the store's key, checked on every read. */
  ref: string;
  mediaType: string;
  /** How many bytes are stored. */
  bytes: number;
}

/**
 * A tool's output that was too large for workflow history (128 KiB or more as JSON): it is kept
 * in the content store as JSON, and the tool result carries this in its place. The model step
 * reads it back, so the model sees the whole output; callers read it with
 * `TurnpikeClient.readStoredOutput` or `turnpike content get <ref>`.
 */
export interface StoredOutput {
  turnpikeStored: string;
  mediaType: 'application/json';
  bytes: number;
}

/**
 * An image in a user message: PNG, JPEG, GIF or WebP. Sent to OpenAI Chat Completions as an
 * `image_url` part, to the Responses API as `input_image`, to Anthropic as an `image` block.
 */
export interface ImagePart {
  type: 'image';
  source: BinarySource;
  /** OpenAI only (ignored by Anthropic): how closely the model looks. Default `auto`. */
  detail?: 'low' | 'high' | 'auto';
}

/**
 * A PDF document in a user message. Sent to OpenAI Chat Completions as a `file` part (base64
 * only: Chat Completions takes no file URL), to the Responses API as `input_file`, to Anthropic
 * as a `document` block.
 */
export interface DocumentPart {
  type: 'document';
  source: BinarySource;
  /** The name the model sees; OpenAI requires one and gets `document.pdf` when it is left out. */
  filename?: string;
}

/** What a user message may hold besides plain text. */
export type UserContentPart = TextPart | ImagePart | DocumentPart;

export interface UserMessage {
  role: 'user';
  content: string | UserContentPart[];
}

/** A page or file a provider cited or found (web search results, citations): for streams and `useChat` source parts. */
export interface SourceReference {
  url: string;
  title?: string;
}

/**
 * A tool the provider ran itself: a hosted tool such as web search, code execution or a remote
 * MCP server (see `ModelSettings.providerTools`). It is never an activity and never parks (a
 * provider's own approval request parks as a tool call, see docs/models.md); the turn records it
 * in `toolCalls` with `executedBy: 'provider'`.
 *
 * `raw` keeps the provider's blocks (Anthropic: `server_tool_use` and its result block) or items
 * (OpenAI Responses: `web_search_call`, `code_interpreter_call`, `mcp_call`, …) exactly as the API
 * returned them, ids, encrypted content and container ids included, and they go back verbatim, in
 * their place, to that provider only. Another provider never sees them.
 */
export interface ProviderToolPart {
  type: 'provider-tool';
  /** The provider that ran it; the only one its blocks are ever sent to. */
  provider: ProviderToolProvider;
  /** The provider's id of the call (`srvtoolu_…`, `ws_…`, `ci_…`, `mcp_…`). */
  toolCallId: string;
  /** The hosted tool: `web_search`, `web_fetch`, `code_execution`, `file_search`, `code_interpreter`, `mcp`, … */
  toolName: string;
  /** What the model asked the tool for (a query, code, a URL), as the provider reported it. */
  input?: unknown;
  /** A readable summary of the result, for records, streams and `useChat`; JSON. */
  output?: unknown;
  /** The provider reported the call failed. */
  isError?: boolean;
  /** The pages or files the call found or cited. */
  sources?: SourceReference[];
  /** The provider's blocks or items of this call, exactly as received, in order. */
  raw: unknown[];
  /**
   * `anthropic` code execution: the container the code ran in (the response's `container`),
   * sent as the next request's `container` so its files are still there, until it expires.
   */
  container?: ProviderToolContainer;
}

/** A provider's code execution container: its id and when the provider drops it (ISO 8601). */
export interface ProviderToolContainer {
  id: string;
  expiresAt?: string;
}

/** Providers whose hosted tools a {@link ProviderToolPart} can carry. */
export type ProviderToolProvider = 'anthropic' | 'openai' | 'ai-sdk';

export interface AssistantMessage {
  role: 'assistant';
  /** In the order the model produced them; reasoning parts, when present, come first. */
  content: Array<TextPart | ToolCallPart | ReasoningPart | ProviderToolPart>;
}

export interface ToolMessage {
  role: 'tool';
  content: ToolResultPart[];
}

export type Message = UserMessage | AssistantMessage | ToolMessage;
