/**
 * A fake OpenAI + Anthropic HTTP server for tests.
 *
 * The real SDK clients talk to it over HTTP (point `baseURL` at it), so the tests exercise the
 * same serialization, headers and error classes as production. It is deliberately strict: every
 * request is validated the way the real APIs validate it (tool calls answered exactly once,
 * Anthropic's role alternation, …) and an invalid request gets the 400 the real API would send.
 * Every request is recorded with its validation errors, so a test can also assert
 * `server.requests.every((r) => r.errors.length === 0)`.
 *
 * Responses are scripted per provider as a queue, in a neutral shape:
 *
 * ```ts
 * const server = await startFakeProviderServer();
 * server.script('openai', [
 *   { toolCalls: [{ name: 'lookup_order', input: { orderId: '1001' } }] },
 *   { status: 429, headers: { 'retry-after': '2' } },
 *   { text: 'Order 1001 has', finishReason: 'length' },   // cut off by max_tokens
 *   { noContent: true, finishReason: 'content_filter' },  // what a content filter returns
 *   { text: 'Order 1001 has shipped.' },
 * ]);
 * // new OpenAI({ baseURL: server.openaiBaseURL, apiKey: 'test' }) …
 * await server.close();
 * ```
 *
 * Reasoning is held to the real rules too. A reply scripted with `thinking` is answered, when the
 * request enabled thinking, with `thinking` blocks the fake signs (HMAC with a secret of this
 * server) and `redacted_thinking` blocks whose data it can recognise; a request that sends any
 * back with a changed text or signature gets the 400 the real API sends, and a request that has
 * thinking on and continues a tool use must start that assistant turn with exactly the thinking
 * blocks the fake issued with those tool uses. OpenAI reasoning models refuse `max_tokens`.
 * Images and documents are checked as the APIs check them (binary-blocks.ts), and
 * `POST /v1/responses` speaks OpenAI's Responses API (openai-responses.ts).
 *
 * A request with `stream: true` gets the same reply as the real API streams it (openai-stream.ts,
 * anthropic-stream.ts, openai-responses-stream.ts): Chat Completions chunks ending in
 * `data: [DONE]`, the final usage chunk when `stream_options.include_usage` asks for it; Messages
 * API events from `message_start` to `message_stop`; Responses API events from `response.created`
 * to `response.completed` / `response.incomplete`. A scripted reply's `stream` control pauses it part-way until the test releases
 * it, drops the connection, sends the API's mid-stream error, or ends it early (sse.ts).
 *
 * The fake Anthropic also checks `cache_control` as the API does (at most 4 breakpoints, none on
 * thinking blocks, …) and keeps a prompt cache, so usage shows cache writes and reads the way the
 * API counts them (anthropic-cache.ts). A request may end with an assistant message (how a
 * `pause_turn` reply is continued), which, as for the API, may not end in whitespace. Its server
 * tools (web search, web fetch, code execution; a reply's `hosted` calls and `citations`) are
 * returned and checked as the API does (anthropic-server-tools.ts).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import type { IncomingHttpHeaders } from 'node:http';
import { validateAnthropicBinaryBlock, validateOpenAIBinaryPart } from './binary-blocks.js';
import {
  impossibleResponsesReply,
  RESPONSES_EMPTY_FINISH_REASONS,
  RESPONSES_FINISH_REASONS,
  ResponsesState,
  responsesReply,
  validateResponsesRequest,
  validateServiceTierAndMetadata,
} from './openai-responses.js';
import { PromptCache, validateCacheControl, type PromptCacheUsage } from './anthropic-cache.js';
import {
  impossibleStructuredReply,
  openAIStructuredErrorFields,
  resolveStructuredReply,
  validateAnthropicStructuredOutput,
  validateChatResponseFormat,
} from './structured-output.js';
import { ANTHROPIC_STREAM_ERROR, anthropicStreamFrames } from './anthropic-stream.js';
import { impossibleHostedReply, ServerToolLedger, validateServerToolBlock, validateServerToolDefinition, type ScriptedHostedCall } from './anthropic-server-tools.js';
import { OPENAI_STREAM_ERROR, openAIStreamFrames } from './openai-stream.js';
import { responsesStreamError, responsesStreamFrames } from './openai-responses-stream.js';
import type { ScriptedHostedItem } from './openai-hosted-tools.js';
import { writeEventStream, type ScriptedStreamControl, type StreamEnd } from './sse.js';

export type { ScriptedStreamControl } from './sse.js';
export type { ScriptedHostedCall } from './anthropic-server-tools.js';

/** `openai-responses` is OpenAI's `POST /v1/responses` (see openai-responses.ts), scripted apart from Chat Completions. */
export type FakeProvider = 'openai' | 'anthropic' | 'openai-responses';

/**
 * A request body: untrusted JSON of any shape. The validators check each field before relying
 * on it, and tests read into recorded bodies freely, so a loose type is the honest one here.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

/** A tool call the fake model makes. */
export interface ScriptedToolCall {
  /** Defaults to a fresh `call_…` (OpenAI) or `toolu_…` (Anthropic) id. */
  id?: string;
  name: string;
  /** Defaults to `{}`. */
  input?: unknown;
  /** OpenAI only: the raw `arguments` text, sent instead of `JSON.stringify(input)` (e.g. malformed JSON). */
  arguments?: string;
}

interface ScriptedBase {
  /** Wait this long before answering (or before the fault): for timeout and cancellation tests. */
  delayMs?: number;
}

/** A successful model reply. With neither `text`, `toolCalls` nor `noContent` the model answers `'ok'`. */
export interface ScriptedReply extends ScriptedBase {
  /** Response headers sent with the reply, e.g. a provider's `x-ratelimit-*` or `anthropic-ratelimit-*`. */
  headers?: Record<string, string>;
  text?: string;
  toolCalls?: ScriptedToolCall[];
  /**
   * The reply carries nothing: OpenAI `content: null` without tool calls, Anthropic `content: []`.
   * What a refusal or a content filter may return; only valid with such a `finishReason`.
   */
  noContent?: true;
  /**
   * The provider's own value, one the real API sends (see FINISH_REASONS): OpenAI `finish_reason`
   * (`stop`, `tool_calls`, `length`, `content_filter`) or Anthropic `stop_reason` (`end_turn`,
   * `tool_use`, `max_tokens`, `refusal`, `model_context_window_exceeded`, …); for openai-responses the
   * response `status` or incomplete reason (`completed`, `max_output_tokens`, `content_filter`,
   * `failed`, `cancelled`). Defaults to the
   * tool-call or stop value, depending on whether there are tool calls. A cut-off reply's tool
   * call is scripted as the API returns it: OpenAI `arguments` cut mid-JSON, Anthropic a partial
   * `input` object.
   */
  finishReason?: string;
  /**
   * Anthropic only: the reasoning the reply starts with, as `thinking` blocks (signed by the fake)
   * or, with `redacted: true`, `redacted_thinking` blocks. Only sent to a request that enabled
   * thinking; scripting it for one that did not is answered with a 500 naming the mistake.
   */
  thinking?: Array<{ text: string } | { redacted: true }>;
  /**
   * openai-responses only: the reasoning items a reasoning model returns before its output (one
   * empty item when left out), with their summary texts (sent only when the request asked for
   * `reasoning.summary`) and, when it included `reasoning.encrypted_content`, content this fake
   * signs and later verifies.
   */
  reasoning?: Array<{ summary?: string[] }>;
  /**
   * Anthropic only: server tools Claude ran before its text (anthropic-server-tools.ts), each a
   * `server_tool_use` block and its result block; only for a request that offers those tools.
   */
  hosted?: ScriptedHostedCall[];
  /** Anthropic only: the text cites the results of the reply's first web search (`citations`). */
  citations?: true;
  /**
   * openai-responses only: hosted tool calls the API ran within the reply, before its text and
   * function calls (openai-hosted-tools.ts); each must be of a tool the request offered.
   */
  hostedItems?: ScriptedHostedItem[];
  /** openai-responses only: `url_citation` annotations on the reply's text. */
  urlCitations?: Array<{ url: string; title: string }>;
  /** openai-responses only: the model declines, with a `refusal` content part instead of text. */
  refusal?: string;
  /**
   * A structured final answer (structured-output.ts), only for a request that asked for one: sent
   * as the message's JSON text (OpenAI `response_format` / `text.format`, Anthropic
   * `output_config.format`) or, when an Anthropic request forces a tool with `tool_choice`, as
   * the input of that tool's `tool_use`. Excludes `text`, `toolCalls`, `noContent` and `refusal`.
   * The fake does not check it against the request's schema: script one that conforms.
   */
  json?: unknown;
  /**
   * How the reply is delivered when the request asked for `stream: true` (ignored otherwise):
   * pause part-way until the test says so, drop the connection, or fail with the API's mid-stream error.
   */
  stream?: ScriptedStreamControl;
  /**
   * Defaults to 5 output tokens, none reasoning, and 10 input tokens, none cached (OpenAI) or the
   * input the fake's prompt cache counted, reads and writes included (Anthropic; see
   * anthropic-cache.ts). Scripting `inputTokens` or `cachedInputTokens` reports those instead.
   */
  usage?: { inputTokens?: number; outputTokens?: number; cachedInputTokens?: number; reasoningTokens?: number };
}

/** An HTTP error; the body is shaped like the real API's unless `errorBody` is given. */
export interface ScriptedStatus extends ScriptedBase {
  status: number;
  headers?: Record<string, string>;
  /** Replaces the default error message inside the realistic body. */
  message?: string;
  /** Replaces the whole body; with `status: 200` it sends an arbitrary body, e.g. one a broken proxy returns. */
  errorBody?: unknown;
}

/** A 200 whose JSON body is cut in half. */
export interface ScriptedMalformed extends ScriptedBase {
  malformed: true;
}

/** The socket is destroyed without any response. */
export interface ScriptedReset extends ScriptedBase {
  reset: true;
}

export type ScriptedResponse = ScriptedReply | ScriptedStatus | ScriptedMalformed | ScriptedReset;

/** A queued response may also be computed from the request body. */
export type ScriptedEntry = ScriptedResponse | ((body: Json) => ScriptedResponse);

export interface RecordedRequest {
  provider: FakeProvider | 'unknown';
  method: string;
  url: string;
  body: Json;
  headers: IncomingHttpHeaders;
  /** Why the request would be rejected by the real API; empty when it is valid. */
  errors: string[];
  /** The status answered, or `'reset'` when the socket was destroyed. */
  status: number | 'reset';
  /** For a streamed reply (`stream: true`): how the stream ended. */
  stream?: StreamEnd;
  /** The reply's body as built (the non-streamed form of a streamed one), for a successful reply. */
  reply?: Json;
}

export interface FakeProviderServer {
  /** `http://127.0.0.1:PORT`. */
  url: string;
  /** For `new OpenAI({ baseURL })` / `OPENAI_BASE_URL`: the OpenAI SDK appends `/chat/completions`. */
  openaiBaseURL: string;
  /** For `new Anthropic({ baseURL })` / `ANTHROPIC_BASE_URL`: the Anthropic SDK appends `/v1/messages`. */
  anthropicBaseURL: string;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  /** Appends responses to the provider's queue; each valid request consumes one. */
  script(provider: FakeProvider, responses: ScriptedEntry[]): void;
  /** What to answer when the provider's queue is empty. */
  setDefault(provider: FakeProvider, respond: (body: Json) => ScriptedResponse): void;
  /** How many scripted responses have not been consumed yet. */
  remaining(provider: FakeProvider): number;
  /** Forgets recorded requests, queues and defaults. */
  reset(): void;
  close(): Promise<void>;
}

const DEFAULT_USAGE = { inputTokens: 10, outputTokens: 5, cachedInputTokens: 0, reasoningTokens: 0 };

/** Every finish / stop reason each real API sends (Chat Completions; Messages API). */
export const FINISH_REASONS: Record<FakeProvider, readonly string[]> = {
  openai: ['stop', 'length', 'tool_calls', 'content_filter', 'function_call'],
  anthropic: ['end_turn', 'max_tokens', 'stop_sequence', 'tool_use', 'pause_turn', 'refusal', 'model_context_window_exceeded'],
  'openai-responses': RESPONSES_FINISH_REASONS,
};

/** Finish reasons with which a real API returns no content at all: a filter or refusal stopped it first. */
const EMPTY_FINISH_REASONS: Record<FakeProvider, readonly string[]> = {
  openai: ['content_filter'],
  anthropic: ['refusal'],
  'openai-responses': RESPONSES_EMPTY_FINISH_REASONS,
};

/**
 * Why a scripted reply is one the real API would never send, or undefined. A test that scripts
 * one has a bug, so `script()` throws at once rather than let a turn see an impossible reply.
 */
export function impossibleReply(provider: FakeProvider, scripted: ScriptedResponse): string | undefined {
  if (!('text' in scripted || 'toolCalls' in scripted || 'noContent' in scripted || 'finishReason' in scripted)) return undefined;
  const reply = scripted as ScriptedReply;
  if (reply.finishReason !== undefined && !FINISH_REASONS[provider].includes(reply.finishReason)) {
    return `${provider} never sends the finish reason "${reply.finishReason}"; it sends ${FINISH_REASONS[provider].join(', ')}`;
  }
  if (reply.noContent && (reply.text !== undefined || (reply.toolCalls?.length ?? 0) > 0)) return 'noContent excludes text and toolCalls';
  if (reply.noContent && !EMPTY_FINISH_REASONS[provider].includes(reply.finishReason ?? '')) {
    return `${provider} returns no content only with ${EMPTY_FINISH_REASONS[provider].join(', ')}`;
  }
  if (reply.finishReason === 'pause_turn' && (reply.toolCalls?.length ?? 0) > 0) return 'anthropic pauses a turn for its own server tools, never with client tool calls pending';
  if (reply.thinking && provider !== 'anthropic') return 'only anthropic returns thinking blocks (Chat Completions returns no reasoning)';
  if ((reply.hosted || reply.citations) && provider !== 'anthropic') return 'only anthropic returns server tool blocks and citations (scripted as hosted and citations)';
  if ((reply.reasoning || reply.refusal !== undefined) && provider !== 'openai-responses') return 'only openai-responses returns reasoning items and refusal parts';
  if ((reply.hostedItems || reply.urlCitations) && provider !== 'openai-responses') return 'only openai-responses returns hosted tool items (hostedItems) and url_citation annotations (urlCitations)';
  return undefined;
}

/** Anthropic `thinking` is on for this request (`enabled` or `adaptive`). */
function thinkingOn(body: Json): boolean {
  return isObject(body?.thinking) && (body.thinking.type === 'enabled' || body.thinking.type === 'adaptive');
}

/**
 * Signs and verifies the reasoning the fake issues, with a secret of this server: what
 * Anthropic's opaque `signature` and `redacted_thinking.data` do for the real API.
 */
export class ThinkingSigner {
  private readonly secret = randomBytes(32);

  sign(text: string): string {
    return createHmac('sha256', this.secret).update(`thinking\0${text}`).digest('base64');
  }

  verify(text: unknown, signature: unknown): boolean {
    if (typeof text !== 'string' || typeof signature !== 'string') return false;
    const expected = Buffer.from(this.sign(text));
    const given = Buffer.from(signature);
    return expected.length === given.length && timingSafeEqual(expected, given);
  }

  /** Opaque data for a redacted block: a nonce and its MAC, so a forged or edited one is caught. */
  redactedData(): string {
    const nonce = randomBytes(12).toString('hex');
    return `${nonce}.${createHmac('sha256', this.secret).update(`redacted\0${nonce}`).digest('hex')}`;
  }

  verifyRedacted(data: unknown): boolean {
    if (typeof data !== 'string') return false;
    const [nonce, mac] = data.split('.');
    return !!nonce && !!mac && createHmac('sha256', this.secret).update(`redacted\0${nonce}`).digest('hex') === mac;
  }
}

/** Starts the fake on 127.0.0.1 with a free port. */
export async function startFakeProviderServer(): Promise<FakeProviderServer> {
  // forceCloseConnections: the SDKs keep connections alive, and `close()` must not wait for them.
  const app = Fastify({ logger: false, bodyLimit: 32 * 1024 * 1024, forceCloseConnections: true });
  const requests: RecordedRequest[] = [];
  const queues: Record<FakeProvider, ScriptedEntry[]> = { openai: [], anthropic: [], 'openai-responses': [] };
  const defaults: Partial<Record<FakeProvider, (body: Json) => ScriptedResponse>> = {};
  const delays = new Set<() => void>();
  const signer = new ThinkingSigner();
  const promptCache = new PromptCache();
  const serverTools = new ServerToolLedger();
  let releaseStreams!: () => void;
  const closing = new Promise<void>((resolve) => (releaseStreams = resolve));
  /** The thinking blocks each Anthropic reply carried, by the ids of the tool uses it made. */
  const issuedThinking = new Map<string, Json[]>();
  const responsesState = new ResponsesState();
  let counter = 0;
  const nextId = (prefix: string) => `${prefix}${(++counter).toString().padStart(4, '0')}${randomBytes(6).toString('hex')}`;

  const delay = (ms: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        delays.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      delays.add(done);
    });

  const handle = (provider: FakeProvider) => async (request: FastifyRequest, reply: FastifyReply) => {
    const body = request.body as Json;
    const recorded: RecordedRequest = { provider, method: request.method, url: request.url, body, headers: request.headers, errors: [], status: 200 };
    requests.push(recorded);

    const headerErrors = provider === 'anthropic' ? validateAnthropicHeaders(request.headers) : validateOpenAIHeaders(request.headers);
    const bodyErrors =
      provider === 'openai' ? validateOpenAIRequest(body) : provider === 'anthropic' ? validateAnthropicRequest(body) : validateResponsesRequest(body, responsesState);
    // Signatures are checked only on a request whose shape is right, as the real API does.
    if (provider === 'anthropic' && bodyErrors.length === 0) bodyErrors.push(...validateAnthropicThinkingBlocks(body, signer, issuedThinking));
    // So are server tool blocks, citations and the code execution container.
    if (provider === 'anthropic' && bodyErrors.length === 0) bodyErrors.push(...serverTools.validate(body));
    recorded.errors = [...headerErrors.map((error) => error.message), ...bodyErrors];
    if (recorded.errors.length > 0) {
      // A missing credential is a 401 on both real APIs; everything else is a 400. An invalid
      // request consumes nothing from the script, as a real API would not have run the model.
      recorded.status = headerErrors.some((error) => error.status === 401) ? 401 : 400;
      return sendError(reply, provider, recorded.status, recorded.errors.join('; '), body);
    }

    const scripted = nextResponse(provider, body);
    if (scripted.delayMs) await delay(scripted.delayMs);
    return answer(provider, scripted, request, reply, recorded);
  };

  function answer(provider: FakeProvider, scripted: ScriptedResponse, request: FastifyRequest, reply: FastifyReply, recorded: RecordedRequest) {
    if ('reset' in scripted) {
      recorded.status = 'reset';
      reply.hijack();
      request.raw.socket.destroy();
      return reply;
    }
    if ('status' in scripted) {
      recorded.status = scripted.status;
      reply.headers(scripted.headers ?? {});
      if (scripted.errorBody !== undefined) return reply.code(scripted.status).send(scripted.errorBody);
      return sendError(reply, provider, scripted.status, scripted.message, recorded.body, header(request.headers, 'authorization'));
    }
    let replyBody: Json;
    const replyScript = resolveStructuredReply(provider, recorded.body, scripted as ScriptedReply);
    if (provider === 'openai') replyBody = openAICompletion(recorded.body, replyScript, nextId);
    else if (provider === 'openai-responses') replyBody = responsesReply(recorded.body, replyScript, nextId, responsesState);
    else {
      replyBody = anthropicMessage(recorded.body, replyScript, nextId, signer, promptCache.use(recorded.body), serverTools);
      const thinking = replyBody.content.filter((block: Json) => block.type === 'thinking' || block.type === 'redacted_thinking');
      for (const block of replyBody.content) if (block.type === 'tool_use') issuedThinking.set(block.id, thinking);
    }
    recorded.reply = replyBody;
    const requestIdHeader = { ...(scripted as ScriptedReply).headers, [provider === 'anthropic' ? 'request-id' : 'x-request-id']: nextId('req_') };
    if (recorded.body.stream === true) return stream(provider, replyBody, scripted, request, reply, recorded, requestIdHeader);
    reply.headers(requestIdHeader);
    if ('malformed' in scripted) {
      const text = JSON.stringify(replyBody);
      return reply.type('application/json').send(text.slice(0, Math.floor(text.length / 2)));
    }
    return reply.send(replyBody);
  }

  async function stream(provider: FakeProvider, replyBody: Json, scripted: ScriptedResponse, request: FastifyRequest, reply: FastifyReply, recorded: RecordedRequest, headers: Record<string, string>) {
    const frames =
      provider === 'openai' ? openAIStreamFrames(replyBody, recorded.body)
      : provider === 'anthropic' ? anthropicStreamFrames(replyBody)
      : responsesStreamFrames(replyBody);
    const control = { ...(scripted as ScriptedReply).stream, ...('malformed' in scripted ? { truncate: true } : {}) };
    const errorFrame =
      provider === 'openai' ? OPENAI_STREAM_ERROR
      : provider === 'anthropic' ? ANTHROPIC_STREAM_ERROR
      : responsesStreamError(control.errorAfterEvents ?? 0);
    recorded.stream = await writeEventStream(request, reply, frames, { headers, control, errorFrame, closing });
    return reply;
  }

  function nextResponse(provider: FakeProvider, body: Json): ScriptedResponse {
    const entry = queues[provider].shift();
    const scripted = entry !== undefined ? (typeof entry === 'function' ? entry(body) : entry) : (defaults[provider]?.(body) ?? { text: 'ok' });
    const impossible =
      impossibleReply(provider, scripted) ??
      ((scripted as ScriptedReply).thinking && !thinkingOn(body) ? 'thinking blocks scripted for a request that did not enable thinking' : undefined) ??
      (provider === 'openai-responses' ? impossibleResponsesReply(body, scripted) : undefined) ??
      (provider === 'anthropic' ? impossibleHostedReply(body, scripted as ScriptedReply) : undefined) ??
      impossibleStructuredReply(provider, body, scripted);
    // Computed replies are only known now: answer a 500 the test will see, not a reply no API sends.
    return impossible ? { status: 500, message: `fake provider: impossible scripted reply: ${impossible}` } : scripted;
  }

  app.post('/v1/chat/completions', handle('openai'));
  app.post('/v1/messages', handle('anthropic'));
  app.post('/v1/responses', handle('openai-responses'));
  // A wrong base URL is the commonest integration mistake: say so in a body both SDKs can read.
  app.setNotFoundHandler((request, reply) => {
    const message = `fake provider: no route ${request.method} ${request.url} (check the base URL)`;
    requests.push({ provider: 'unknown', method: request.method, url: request.url, body: request.body, headers: request.headers, errors: [message], status: 404 });
    return reply.code(404).send({ type: 'error', error: { type: 'not_found_error', message, code: 'not_found' } });
  });

  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  const url = address.replace('localhost', '127.0.0.1');

  return {
    url,
    openaiBaseURL: `${url}/v1`,
    anthropicBaseURL: url,
    requests,
    script(provider, responses) {
      for (const response of responses) {
        const impossible = typeof response === 'function' ? undefined : impossibleReply(provider, response);
        if (impossible) throw new Error(`fake provider: impossible scripted reply: ${impossible}`);
      }
      queues[provider].push(...responses);
    },
    setDefault(provider, respond) {
      defaults[provider] = respond;
    },
    remaining(provider) {
      return queues[provider].length;
    },
    reset() {
      requests.length = 0;
      for (const provider of Object.keys(queues) as FakeProvider[]) {
        queues[provider].length = 0;
        delete defaults[provider];
      }
      promptCache.clear();
    },
    async close() {
      for (const release of [...delays]) release();
      releaseStreams();
      await app.close();
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Responses

function openAICompletion(body: Json, scripted: ScriptedReply, nextId: (prefix: string) => string) {
  const toolCalls = (scripted.toolCalls ?? []).map((call) => ({
    id: call.id ?? nextId('call_'),
    type: 'function' as const,
    function: { name: call.name, arguments: call.arguments ?? JSON.stringify(call.input ?? {}) },
  }));
  const text = scripted.noContent ? null : (scripted.text ?? (toolCalls.length > 0 ? null : 'ok'));
  const usage = { ...DEFAULT_USAGE, ...scripted.usage };
  return {
    id: nextId('chatcmpl-'),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: body.model,
    system_fingerprint: 'fp_fake',
    service_tier: 'default',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: text,
          refusal: null,
          annotations: [],
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        logprobs: null,
        finish_reason: scripted.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
      },
    ],
    usage: {
      prompt_tokens: usage.inputTokens,
      completion_tokens: usage.outputTokens,
      total_tokens: usage.inputTokens + usage.outputTokens,
      // api.openai.com always sends both details objects.
      prompt_tokens_details: { cached_tokens: usage.cachedInputTokens, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: usage.reasoningTokens, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
    },
  };
}

/**
 * `cache` is what the fake's prompt cache counted for the request; a reply whose usage scripts
 * input or cached tokens reports those instead (no cache write).
 */
function anthropicMessage(body: Json, scripted: ScriptedReply, nextId: (prefix: string) => string, signer: ThinkingSigner, cache: PromptCacheUsage, serverTools: ServerToolLedger) {
  const thinking = (scripted.thinking ?? []).map((block) =>
    'redacted' in block ? { type: 'redacted_thinking' as const, data: signer.redactedData() } : { type: 'thinking' as const, thinking: block.text, signature: signer.sign(block.text) },
  );
  const toolUses = (scripted.toolCalls ?? []).map((call) => ({
    type: 'tool_use' as const,
    id: call.id ?? nextId('toolu_'),
    name: call.name,
    input: call.input ?? {},
  }));
  // A reply cut off right after a server_tool_use has nothing after it.
  const cutInHostedCall = scripted.hosted?.at(-1)?.unanswered === true;
  const text = scripted.noContent || cutInHostedCall ? undefined : (scripted.text ?? (toolUses.length > 0 ? undefined : 'ok'));
  const usage = { ...DEFAULT_USAGE, ...scripted.usage };
  const hosted = serverTools.reply(body, scripted.hosted ?? [], scripted.citations === true, nextId);
  const offersServerTools = Array.isArray(body.tools) && body.tools.some((tool: Json) => tool?.type !== undefined && tool.type !== 'custom');
  const scriptedInput = scripted.usage?.inputTokens !== undefined || scripted.usage?.cachedInputTokens !== undefined;
  return {
    id: nextId('msg_'),
    type: 'message',
    role: 'assistant',
    model: body.model,
    content: [...thinking, ...hosted.blocks, ...(text !== undefined ? [{ type: 'text' as const, text, citations: hosted.citations ?? null }] : []), ...toolUses] as Json[],
    ...(hosted.container ? { container: hosted.container } : {}),
    stop_reason: scripted.finishReason ?? (toolUses.length > 0 ? 'tool_use' : 'end_turn'),
    stop_sequence: null,
    usage: {
      // Anthropic's input_tokens leaves out cache reads and writes; the scripted figure is the whole input.
      ...(scriptedInput
        ? { input_tokens: usage.inputTokens - usage.cachedInputTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: usage.cachedInputTokens }
        : cache),
      output_tokens: usage.outputTokens,
      output_tokens_details: scripted.usage?.reasoningTokens !== undefined || thinking.length > 0 ? { thinking_tokens: usage.reasoningTokens } : null,
      ...(offersServerTools ? { server_tool_use: hosted.usage } : {}),
      service_tier: 'standard',
    },
  };
}

function sendError(reply: FastifyReply, provider: FakeProvider, status: number, message: string | undefined, body: Json, authorization?: string) {
  const errorBody =
    provider === 'anthropic' ? anthropicErrorBody(status, message, body) : openAIErrorBody(status, message, body, message ? openAIStructuredErrorFields(provider, message) : undefined, authorization);
  return reply.code(status).send(errorBody);
}

/** `{ error: { message, type, param, code } }`, as api.openai.com answers. */
export function openAIErrorBody(status: number, message?: string, body?: Json, fields?: { param: string; code: string | null }, authorization?: string) {
  const model = typeof body?.model === 'string' ? body.model : 'unknown';
  const [type, code, defaultMessage]: [string, string | null, string] =
    status === 400 ? ['invalid_request_error', null, 'Invalid request.']
    : status === 401 ? ['invalid_request_error', 'invalid_api_key', `Incorrect API key provided: ${keyAsShown(authorization)}. You can find your API key at https://platform.openai.com/account/api-keys.`]
    : status === 403 ? ['invalid_request_error', 'unsupported_country_region_territory', 'Country, region, or territory not supported']
    : status === 404 ? ['invalid_request_error', 'model_not_found', `The model \`${model}\` does not exist or you do not have access to it.`]
    : status === 429 ? ['requests', 'rate_limit_exceeded', `Rate limit reached for ${model} on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s.`]
    : status === 503 ? ['server_error', null, 'The engine is currently overloaded, please try again later']
    : status >= 500 ? ['server_error', null, 'The server had an error while processing your request. Sorry about that!']
    : ['invalid_request_error', null, `Request failed with status ${status}.`];
  return { error: { message: message ?? defaultMessage, type, param: fields?.param ?? null, code: fields ? fields.code : code } };
}

/**
 * The key as OpenAI's 401 names it: its first 8 and last 4 characters around asterisks, and a key
 * of 12 characters or fewer whole (`Incorrect API key provided: sk-xxxxxx.`, as users report it).
 */
function keyAsShown(authorization: string | undefined): string {
  const key = authorization?.replace(/^Bearer\s+/i, '') ?? '';
  return key.length <= 12 ? key : `${key.slice(0, 8)}${'*'.repeat(key.length - 12)}${key.slice(-4)}`;
}

/** `{ type: 'error', error: { type, message }, request_id }`, as api.anthropic.com answers. */
export function anthropicErrorBody(status: number, message?: string, body?: Json) {
  const model = typeof body?.model === 'string' ? body.model : 'unknown';
  const [type, defaultMessage]: [string, string] =
    status === 400 ? ['invalid_request_error', 'Invalid request.']
    : status === 401 ? ['authentication_error', 'invalid x-api-key']
    : status === 403 ? ['permission_error', 'Your API key does not have permission to use the specified resource.']
    : status === 404 ? ['not_found_error', `model: ${model}`]
    : status === 413 ? ['request_too_large', 'Request exceeds the maximum allowed number of bytes.']
    : status === 429 ? ['rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit.']
    : status === 529 ? ['overloaded_error', 'Overloaded']
    : status >= 500 ? ['api_error', 'Internal server error']
    : ['invalid_request_error', `Request failed with status ${status}.`];
  return { type: 'error', error: { type, message: message ?? defaultMessage }, request_id: `req_fake${Date.now()}` };
}

// ---------------------------------------------------------------------------------------------
// Validation: as strict as the real APIs. Messages follow the real ones where they are known.

interface HeaderError {
  status: 400 | 401;
  message: string;
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** OpenAI wants `Authorization: Bearer <key>`. */
export function validateOpenAIHeaders(headers: IncomingHttpHeaders): HeaderError[] {
  const authorization = header(headers, 'authorization');
  if (!authorization || !/^Bearer \S+/.test(authorization)) {
    return [{ status: 401, message: "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)." }];
  }
  return [];
}

/** Anthropic wants `x-api-key` (or a bearer token) and `anthropic-version`. */
export function validateAnthropicHeaders(headers: IncomingHttpHeaders): HeaderError[] {
  const errors: HeaderError[] = [];
  const authorization = header(headers, 'authorization');
  if (!header(headers, 'x-api-key') && !(authorization && /^Bearer \S+/.test(authorization))) {
    errors.push({ status: 401, message: 'x-api-key header is required' });
  }
  if (!header(headers, 'anthropic-version')) errors.push({ status: 400, message: 'anthropic-version: header is required' });
  return errors;
}

const isObject = (value: unknown): value is Record<string, Json> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isNonEmptyString = (value: unknown): value is string => typeof value === 'string' && value.length > 0;
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * Validates a Chat Completions request body. Returns the errors the real API would report
 * (empty when valid), including OpenAI's rule that an assistant's `tool_calls` are each answered
 * by exactly one following `tool` message before any other message.
 */
export function validateOpenAIRequest(body: unknown): string[] {
  if (!isObject(body)) return ['request body must be a JSON object'];
  const errors: string[] = [];
  if (!isNonEmptyString(body.model)) errors.push('you must provide a model parameter');
  errors.push(...validateOpenAIStreamOptions(body));
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    errors.push("Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.");
  } else {
    body.messages.forEach((message: unknown, index: number) => errors.push(...validateOpenAIMessage(message, index)));
    errors.push(...validateOpenAIToolCallPairing(body.messages));
  }
  errors.push(...validateOpenAITools(body));
  errors.push(...validateChatResponseFormat(body));
  for (const field of ['max_tokens', 'max_completion_tokens'] as const) {
    if (body[field] != null && !(Number.isInteger(body[field]) && body[field] >= 1)) {
      errors.push(`Invalid '${field}': integer below minimum value. Expected a value >= 1.`);
    }
  }
  const reasoningModel = isNonEmptyString(body.model) && OPENAI_REASONING_MODEL.test(body.model);
  if (reasoningModel && body.max_tokens != null) {
    errors.push("Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.");
  }
  if (body.reasoning_effort != null) {
    if (!reasoningModel) errors.push("Unsupported parameter: 'reasoning_effort' is not supported with this model.");
    else if (!['none', 'minimal', 'low', 'medium', 'high', 'xhigh'].includes(body.reasoning_effort)) {
      errors.push(`Invalid value: '${String(body.reasoning_effort)}'. Supported values are: 'none', 'minimal', 'low', 'medium', 'high', and 'xhigh'.`);
    }
  }
  if (body.temperature != null && !(typeof body.temperature === 'number' && body.temperature >= 0 && body.temperature <= 2)) {
    errors.push("Invalid 'temperature': expected a number between 0 and 2.");
  }
  errors.push(...validateServiceTierAndMetadata(body));
  return errors;
}

/** `stream` is a boolean; `stream_options` ({ include_usage }) only with `stream: true`. */
function validateOpenAIStreamOptions(body: Record<string, Json>): string[] {
  const errors: string[] = [];
  if (body.stream != null && typeof body.stream !== 'boolean') errors.push("Invalid type for 'stream': expected a boolean.");
  if (body.stream_options != null) {
    if (body.stream !== true) errors.push("The 'stream_options' parameter is only allowed when 'stream' is enabled.");
    else if (!isObject(body.stream_options)) errors.push("Invalid type for 'stream_options': expected an object.");
    else if (body.stream_options.include_usage != null && typeof body.stream_options.include_usage !== 'boolean') {
      errors.push("Invalid type for 'stream_options.include_usage': expected a boolean.");
    }
  }
  return errors;
}

const OPENAI_ROLES = ['system', 'developer', 'user', 'assistant', 'tool', 'function'];

/**
 * The models api.openai.com treats as reasoning models: o-series and gpt-5 families. Written out
 * here, not imported from turnpike, so that the fake checks turnpike rather than agreeing with it.
 */
const OPENAI_REASONING_MODEL = /^(ft:)?(o1|o3|o4-mini|gpt-5|codex-mini)/;

function validateOpenAIMessage(message: unknown, index: number): string[] {
  const at = `messages[${index}]`;
  if (!isObject(message)) return [`Invalid type for '${at}': expected an object.`];
  if (!OPENAI_ROLES.includes(message.role)) {
    return [`Invalid value: '${String(message.role)}'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'. (param: ${at}.role)`];
  }
  const errors: string[] = [];
  const textContent = (allowNull: boolean) => {
    const { content } = message;
    if (content == null) return allowNull ? [] : [`Missing required parameter: '${at}.content'.`];
    if (typeof content === 'string') return [];
    if (!Array.isArray(content)) return [`Invalid type for '${at}.content': expected one of a string or array of objects.`];
    if (content.length === 0 && !allowNull) return [`Invalid '${at}.content': empty array. Expected an array with minimum length 1.`];
    const allowed = message.role === 'user' ? ['text', 'image_url', 'input_audio', 'file'] : message.role === 'assistant' ? ['text', 'refusal'] : ['text'];
    return content.flatMap((part: Json, partIndex: number) =>
      !isObject(part) || !allowed.includes(part.type) ? [`Invalid value for '${at}.content[${partIndex}].type'.`]
      : part.type === 'text' && typeof part.text !== 'string' ? [`Missing required parameter: '${at}.content[${partIndex}].text'.`]
      : validateOpenAIBinaryPart(part, `${at}.content[${partIndex}]`),
    );
  };
  switch (message.role) {
    case 'assistant': {
      const hasToolCalls = message.tool_calls !== undefined;
      if (message.content == null && !hasToolCalls && message.function_call == null) {
        errors.push(`Invalid value for '${at}.content': expected a string, got null.`);
      }
      errors.push(...textContent(true));
      if (hasToolCalls) errors.push(...validateOpenAIToolCalls(message.tool_calls, at));
      break;
    }
    case 'tool':
      if (!isNonEmptyString(message.tool_call_id)) errors.push(`Missing required parameter: '${at}.tool_call_id'.`);
      errors.push(...textContent(false));
      break;
    case 'function':
      if (!isNonEmptyString(message.name)) errors.push(`Missing required parameter: '${at}.name'.`);
      break;
    default:
      errors.push(...textContent(false));
  }
  return errors;
}

function validateOpenAIToolCalls(toolCalls: unknown, at: string): string[] {
  if (!Array.isArray(toolCalls)) return [`Invalid type for '${at}.tool_calls': expected an array of objects.`];
  if (toolCalls.length === 0) return [`Invalid '${at}.tool_calls': empty array. Expected an array with minimum length 1, but got an empty array instead.`];
  const errors: string[] = [];
  const ids = new Set<string>();
  toolCalls.forEach((call: Json, index: number) => {
    const callAt = `${at}.tool_calls[${index}]`;
    if (!isObject(call)) return errors.push(`Invalid type for '${callAt}': expected an object.`);
    if (!isNonEmptyString(call.id)) errors.push(`Missing required parameter: '${callAt}.id'.`);
    else if (ids.has(call.id)) errors.push(`Invalid '${callAt}.id': duplicate tool call id '${call.id}'.`);
    else ids.add(call.id);
    if (call.type !== 'function') errors.push(`Invalid value for '${callAt}.type': expected 'function'.`);
    if (!isObject(call.function) || !isNonEmptyString(call.function.name)) errors.push(`Missing required parameter: '${callAt}.function.name'.`);
    // The API does not parse `arguments`: malformed JSON the model produced is accepted back.
    else if (typeof call.function.arguments !== 'string') errors.push(`Invalid type for '${callAt}.function.arguments': expected a string.`);
  });
  return errors;
}

/** Every tool call is answered by exactly one `tool` message, directly after its assistant message. */
function validateOpenAIToolCallPairing(messages: unknown[]): string[] {
  const errors: string[] = [];
  // The ids of the latest assistant message's calls while we are in its run of `tool` messages.
  let open: { callIds: Set<string>; answered: Set<string> } | undefined;
  const closeOpen = () => {
    const missing = open ? [...open.callIds].filter((id) => !open!.answered.has(id)) : [];
    if (missing.length > 0) {
      errors.push(`An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${missing.join(', ')}`);
    }
    open = undefined;
  };
  messages.forEach((message: Json, index) => {
    if (!isObject(message)) return;
    if (message.role === 'tool') {
      const id = message.tool_call_id;
      if (!open || !open.callIds.has(id)) {
        errors.push(`Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'. (messages[${index}], tool_call_id ${String(id)})`);
      } else if (open.answered.has(id)) {
        errors.push(`Invalid parameter: duplicate response for tool_call_id ${id} at messages[${index}]; each tool call must have exactly one 'tool' message.`);
      } else {
        open.answered.add(id);
      }
      return;
    }
    closeOpen();
    if (message.role === 'assistant' && Array.isArray(message.tool_calls) && message.tool_calls.length > 0) {
      open = { callIds: new Set(message.tool_calls.map((call: Json) => call?.id)), answered: new Set() };
    }
  });
  closeOpen();
  return errors;
}

function validateOpenAITools(body: Record<string, Json>): string[] {
  if (body.tools === undefined) {
    return body.parallel_tool_calls != null
      ? ["Invalid value for 'parallel_tool_calls': 'parallel_tool_calls' is only allowed when 'tools' are specified."]
      : [];
  }
  if (!Array.isArray(body.tools)) return ["Invalid type for 'tools': expected an array of objects."];
  if (body.tools.length === 0) return ["Invalid 'tools': empty array. Expected an array with minimum length 1, but got an empty array instead."];
  return body.tools.flatMap((tool: Json, index: number): string[] => {
    const at = `tools[${index}]`;
    if (!isObject(tool) || tool.type !== 'function') return [`Invalid value for '${at}.type': expected 'function'.`];
    const fn = tool.function;
    if (!isObject(fn)) return [`Missing required parameter: '${at}.function'.`];
    const errors: string[] = [];
    if (typeof fn.name !== 'string' || !TOOL_NAME.test(fn.name)) {
      errors.push(`Invalid '${at}.function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$' (max 64).`);
    }
    if (fn.description !== undefined && typeof fn.description !== 'string') errors.push(`Invalid type for '${at}.function.description': expected a string.`);
    if (!isObject(fn.parameters) || fn.parameters.type !== 'object') {
      errors.push(`Invalid schema for function '${String(fn.name)}': schema must be a JSON Schema of 'type: "object"', got 'type: "${String(fn.parameters?.type)}"'.`);
    }
    return errors;
  });
}

/**
 * Validates a Messages API request body. Returns the errors the real API would report (empty
 * when valid), including its rules that turns alternate starting with `user`, and that every
 * `tool_use` is answered by exactly one `tool_result` at the start of the very next message.
 */
export function validateAnthropicRequest(body: unknown): string[] {
  if (!isObject(body)) return ['request body must be a JSON object'];
  const errors: string[] = [];
  if (!isNonEmptyString(body.model)) errors.push('model: Field required');
  if (body.max_tokens === undefined) errors.push('max_tokens: Field required');
  else if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1) errors.push('max_tokens: Input should be a valid integer greater than or equal to 1');
  if (body.stream !== undefined && typeof body.stream !== 'boolean') errors.push('stream: Input should be a valid boolean');
  if (body.temperature != null && !(typeof body.temperature === 'number' && body.temperature >= 0 && body.temperature <= 1)) {
    errors.push('temperature: Input should be less than or equal to 1');
  }
  errors.push(...validateAnthropicSystem(body.system));
  errors.push(...validateAnthropicThinkingConfig(body));
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    errors.push('messages: at least one message is required');
  } else {
    const structural = body.messages.flatMap((message: unknown, index: number) => validateAnthropicMessage(message, index));
    errors.push(...structural);
    // Pairing rules assume well-formed messages; skip them rather than report noise.
    if (structural.length === 0) {
      errors.push(...validateAnthropicTurns(body.messages), ...validateAnthropicToolPairing(body.messages), ...validateFinalAssistantMessage(body.messages));
      if (thinkingOn(body)) errors.push(...validateThinkingLeadsToolContinuation(body.messages));
    }
  }
  errors.push(...validateAnthropicTools(body.tools));
  errors.push(...validateAnthropicStructuredOutput(body, thinkingOn(body)));
  if (errors.length === 0) errors.push(...validateCacheControl(body));
  return errors;
}

/**
 * A request may end with an assistant message (a prefill, or the content of a `pause_turn` sent
 * back to continue), but its content may not end in whitespace.
 */
function validateFinalAssistantMessage(messages: Array<Record<string, Json>>): string[] {
  const last = messages.at(-1)!;
  if (last.role !== 'assistant') return [];
  const lastBlock = typeof last.content === 'string' ? { type: 'text', text: last.content } : blocksOf(last).at(-1);
  if (lastBlock?.type === 'text' && typeof lastBlock.text === 'string' && /\s$/.test(lastBlock.text)) {
    return ['final assistant content cannot end with trailing whitespace'];
  }
  return [];
}

/** `thinking`: a known type; `enabled` with 1024 ≤ budget_tokens < max_tokens; temperature 1 or unset while thinking. */
function validateAnthropicThinkingConfig(body: Record<string, Json>): string[] {
  const { thinking } = body;
  if (thinking === undefined) return [];
  if (!isObject(thinking) || !['enabled', 'disabled', 'adaptive', 'between_tools'].includes(thinking.type)) {
    return ["thinking: Input tag found using 'type' does not match any of the expected tags: 'enabled', 'disabled', 'adaptive', 'between_tools'"];
  }
  const errors: string[] = [];
  if (thinking.type === 'enabled') {
    const budget = thinking.budget_tokens;
    if (!Number.isInteger(budget)) errors.push('thinking.enabled.budget_tokens: Field required');
    else if (budget < 1024) errors.push('thinking.enabled.budget_tokens: Input should be greater than or equal to 1024');
    else if (Number.isInteger(body.max_tokens) && budget >= body.max_tokens) {
      errors.push('`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size');
    }
  }
  if (thinkingOn(body) && body.temperature != null && body.temperature !== 1) {
    errors.push('`temperature` may only be set to 1 when thinking is enabled. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#feature-compatibility');
  }
  return errors;
}

/**
 * With thinking on, a request that continues a tool use (it ends with the user turn holding the
 * tool results) must start the assistant turn that made those calls with its thinking block(s).
 */
function validateThinkingLeadsToolContinuation(messages: Array<Record<string, Json>>): string[] {
  const index = messages.length - 2;
  const last = messages.at(-1)!;
  const assistant = messages[index];
  if (last.role !== 'user' || !blocksOf(last).some((block) => block.type === 'tool_result')) return [];
  if (assistant?.role !== 'assistant' || !blocksOf(assistant).some((block) => block.type === 'tool_use')) return [];
  const first = blocksOf(assistant)[0];
  if (first?.type === 'thinking' || first?.type === 'redacted_thinking') return [];
  return [
    `messages.${index}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${String(first?.type ?? (typeof assistant.content === 'string' ? 'text' : 'nothing'))}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking`,
  ];
}

/**
 * Every thinking block sent back must be one this server issued, unmodified (its signature or
 * redacted data verifies); and with thinking on, the assistant turn a request continues must
 * start with exactly the thinking blocks that came with its tool uses, in their order.
 */
export function validateAnthropicThinkingBlocks(body: Record<string, Json>, signer: ThinkingSigner, issued: Map<string, Json[]>): string[] {
  const messages: Array<Record<string, Json>> = body.messages;
  const errors: string[] = [];
  messages.forEach((message, index) => {
    if (message.role !== 'assistant') return;
    blocksOf(message).forEach((block, blockIndex) => {
      if (block.type === 'thinking' && !signer.verify(block.thinking, block.signature)) {
        errors.push(`messages.${index}.content.${blockIndex}: Invalid \`signature\` in \`thinking\` block`);
      }
      if (block.type === 'redacted_thinking' && !signer.verifyRedacted(block.data)) {
        errors.push(`messages.${index}.content.${blockIndex}: Invalid \`data\` in \`redacted_thinking\` block`);
      }
    });
  });
  if (errors.length > 0 || !thinkingOn(body) || messages.length < 2) return errors;
  const assistant = messages[messages.length - 2];
  if (assistant.role !== 'assistant' || messages.at(-1)!.role !== 'user') return errors;
  const blocks = blocksOf(assistant);
  const firstToolUse = blocks.find((block) => block.type === 'tool_use');
  const expected = firstToolUse ? issued.get(firstToolUse.id) : undefined;
  if (!expected || expected.length === 0) return errors;
  const leading = blocks.slice(0, expected.length);
  const same = (a: Json, b: Json) => a?.type === b?.type && a?.thinking === b?.thinking && a?.signature === b?.signature && a?.data === b?.data;
  if (!expected.every((block, blockIndex) => same(block, leading[blockIndex])) || blocks[expected.length]?.type === 'thinking' || blocks[expected.length]?.type === 'redacted_thinking') {
    errors.push(`messages.${messages.length - 2}.content: thinking blocks in the latest assistant message cannot be modified. These blocks must remain as they were in the original response.`);
  }
  return errors;
}

function validateAnthropicSystem(system: unknown): string[] {
  if (system === undefined || typeof system === 'string') return [];
  if (Array.isArray(system) && system.every((block) => isObject(block) && block.type === 'text' && typeof block.text === 'string')) return [];
  return ['system: Input should be a valid string or a list of text blocks'];
}

function validateAnthropicMessage(message: unknown, index: number): string[] {
  const at = `messages.${index}`;
  if (!isObject(message)) return [`${at}: Input should be a valid dictionary`];
  if (message.role === 'system') {
    return [`${at}.role: Unexpected role "system". The Messages API accepts a top-level \`system\` parameter, not "system" as an input message role.`];
  }
  if (message.role !== 'user' && message.role !== 'assistant') return [`${at}.role: Input should be 'user' or 'assistant'`];
  const { content } = message;
  if (typeof content === 'string') {
    return content.trim().length === 0 ? [`${at}: all messages must have non-empty content except for the optional final assistant message`] : [];
  }
  if (!Array.isArray(content)) return [`${at}.content: Input should be a valid string or list of content blocks`];
  if (content.length === 0) return [`${at}: all messages must have non-empty content except for the optional final assistant message`];
  return content.flatMap((block: unknown, blockIndex: number) => validateAnthropicBlock(block, `${at}.content.${blockIndex}`, message.role));
}

function validateAnthropicBlock(block: unknown, at: string, role: 'user' | 'assistant'): string[] {
  if (!isObject(block)) return [`${at}: Input should be a valid dictionary`];
  switch (block.type) {
    case 'text':
      if (typeof block.text !== 'string' || block.text.length === 0) return [`${at}.text: text content blocks must be non-empty`];
      if (block.text.trim().length === 0) return [`${at}.text: text content blocks must contain non-whitespace text`];
      return [];
    case 'image':
    case 'document':
      return validateAnthropicBinaryBlock(block, at, role);
    case 'thinking':
    case 'redacted_thinking':
      return role === 'assistant' ? [] : [`${at}: thinking blocks may only appear in assistant messages`];
    case 'tool_use': {
      if (role !== 'assistant') return [`${at}: \`tool_use\` blocks can only be in \`assistant\` messages`];
      const errors: string[] = [];
      if (typeof block.id !== 'string' || !/^[a-zA-Z0-9_-]+$/.test(block.id)) errors.push(`${at}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'`);
      if (!isNonEmptyString(block.name)) errors.push(`${at}.tool_use.name: Field required`);
      if (!isObject(block.input)) errors.push(`${at}.tool_use.input: Input should be a valid dictionary`);
      return errors;
    }
    case 'tool_result': {
      if (role !== 'user') return [`${at}: \`tool_result\` blocks can only be in \`user\` messages`];
      const errors: string[] = [];
      if (!isNonEmptyString(block.tool_use_id)) errors.push(`${at}.tool_result.tool_use_id: Field required`);
      if (block.is_error !== undefined && typeof block.is_error !== 'boolean') errors.push(`${at}.tool_result.is_error: Input should be a valid boolean`);
      const content = block.content;
      const validContent =
        content === undefined ||
        typeof content === 'string' ||
        (Array.isArray(content) && content.every((part) => isObject(part) && ['text', 'image', 'document', 'search_result'].includes(part.type) && (part.type !== 'text' || isNonEmptyString(part.text))));
      if (!validContent) errors.push(`${at}.tool_result.content: Input should be a valid string or list of text, image or document blocks`);
      return errors;
    }
    default:
      // Server tool blocks (server_tool_use, web_search_tool_result, …), and unknown tags.
      return validateServerToolBlock(block, at, role);
  }
}

/** Turns alternate, starting with `user`. */
function validateAnthropicTurns(messages: Array<Record<string, Json>>): string[] {
  const errors: string[] = [];
  if (messages[0].role !== 'user') errors.push('messages: first message must use the "user" role');
  for (let index = 1; index < messages.length; index++) {
    if (messages[index].role === messages[index - 1].role) {
      errors.push(`messages: roles must alternate between "user" and "assistant", but found multiple "${messages[index].role}" roles in a row (messages.${index})`);
    }
  }
  return errors;
}

const blocksOf = (message: Record<string, Json>): Array<Record<string, Json>> => (Array.isArray(message.content) ? message.content : []);

/** Each `tool_use` is answered by exactly one `tool_result`, first thing in the next message; ids are unique. */
function validateAnthropicToolPairing(messages: Array<Record<string, Json>>): string[] {
  const errors: string[] = [];
  const seenToolUseIds = new Set<string>();
  messages.forEach((message, index) => {
    const blocks = blocksOf(message);
    if (message.role === 'assistant') {
      blocks.forEach((block, blockIndex) => {
        if (block.type !== 'tool_use') return;
        if (seenToolUseIds.has(block.id)) errors.push(`messages.${index}.content.${blockIndex}: \`tool_use\` ids must be unique (${block.id})`);
        seenToolUseIds.add(block.id);
      });
      return;
    }
    const previous = index > 0 ? messages[index - 1] : undefined;
    const expected = new Set(
      previous?.role === 'assistant' ? blocksOf(previous).filter((block) => block.type === 'tool_use').map((block) => block.id as string) : [],
    );
    errors.push(...validateToolResultsAnswer(blocks, expected, index));
  });
  // An assistant turn that calls tools must be followed by the user turn that answers them.
  const last = messages.at(-1)!;
  const unanswered = last.role === 'assistant' ? blocksOf(last).filter((block) => block.type === 'tool_use').map((block) => block.id) : [];
  if (unanswered.length > 0) errors.push(toolUseWithoutResult(messages.length - 1, unanswered));
  return errors;
}

function validateToolResultsAnswer(blocks: Array<Record<string, Json>>, expected: Set<string>, index: number): string[] {
  const errors: string[] = [];
  const answered = new Set<string>();
  let leadingResults = 0;
  while (leadingResults < blocks.length && blocks[leadingResults].type === 'tool_result') leadingResults++;
  blocks.forEach((block, blockIndex) => {
    if (block.type !== 'tool_result') return;
    const id = block.tool_use_id as string;
    if (!expected.has(id)) {
      errors.push(`messages.${index}.content.${blockIndex}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`);
    } else if (answered.has(id)) {
      errors.push(`messages.${index}.content.${blockIndex}: each \`tool_use\` must have a single result. Found multiple \`tool_result\` blocks with id: ${id}`);
    } else if (blockIndex >= leadingResults) {
      errors.push(`messages.${index}: Did not find ${expected.size} \`tool_result\` block(s) at the beginning of this message. Messages following \`tool_use\` blocks must begin with a matching number of \`tool_result\` blocks.`);
    }
    answered.add(id);
  });
  const missing = [...expected].filter((id) => !answered.has(id));
  if (missing.length > 0) errors.push(toolUseWithoutResult(index - 1, missing));
  return errors;
}

function toolUseWithoutResult(index: number, ids: string[]): string {
  return `messages.${index}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${ids.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
}

function validateAnthropicTools(tools: unknown): string[] {
  if (tools === undefined) return [];
  if (!Array.isArray(tools)) return ['tools: Input should be a valid list'];
  const errors: string[] = [];
  const names = new Set<string>();
  tools.forEach((tool: unknown, index: number) => {
    const at = `tools.${index}.custom`;
    if (!isObject(tool)) return errors.push(`tools.${index}: Input should be a valid dictionary`);
    if (tool.type !== undefined && tool.type !== 'custom') return errors.push(...validateServerToolDefinition(tool, index));
    if (typeof tool.name !== 'string' || !TOOL_NAME.test(tool.name)) errors.push(`${at}.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`);
    else if (names.has(tool.name)) errors.push('tools: Tool names must be unique.');
    else names.add(tool.name);
    if (tool.description !== undefined && typeof tool.description !== 'string') errors.push(`${at}.description: Input should be a valid string`);
    if (!isObject(tool.input_schema)) errors.push(`${at}.input_schema: Field required`);
    else if (tool.input_schema.type !== 'object') errors.push(`${at}.input_schema.type: Input should be 'object'`);
  });
  return errors;
}
