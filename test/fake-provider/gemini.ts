/**
 * A strict fake of the Gemini API (`generateContent`, `streamGenerateContent?alt=sse`) for the
 * `ai-sdk` provider's tests through the real `@ai-sdk/google`.
 *
 * It checks what the real API checks, with its error texts where known: roles are `user` and
 * `model`; no content has empty parts; a function-response turn follows a function-call turn
 * and answers each of its calls; a function-call turn follows a user or function-response turn.
 * When thinking is on (a `thinkingConfig` that asks for it, or a Gemini 3 model) replies are
 * signed as the real API signs them: the first `functionCall` of a reply, else its last text
 * part, carries an opaque `thoughtSignature` (random bytes this server remembers with what it signed). A later
 * request must send each signature back unchanged on its part: a signed call of the current turn
 * sent without one gets the real API's "missing a thought_signature" 400, and a signature that
 * does not match its part gets "Corrupted thought signature.". A JSON answer
 * (`responseMimeType: application/json`) with function declarations is refused before Gemini 3,
 * and with forced function calling (mode `ANY`) on every model, in the API's words; a request
 * that forces function calling gets a call of an allowed function (a script answering otherwise
 * is recorded as an error).
 *
 * Replies are shaped like the recorded responses in vercel/ai's `packages/google/src/__fixtures__`
 * (google-tool-call-gemini3.chunks.txt, google-reasoning-gemini3.chunks.txt): parts by chunk, the
 * signature on the function call or on a final empty text part, `usageMetadata` on every chunk
 * with `thoughtsTokenCount`, `modelVersion` and `responseId`; a blocked prompt is a chunk with
 * only `promptFeedback` (issue-19758-prompt-block.chunks.txt), a safety stop a candidate with
 * `finishReason` and `safetyRatings` and no content. Errors are `{ error: { code,
 * message, status } }`; a 429 carries a `google.rpc.RetryInfo` detail as in google-429-retry-info.json,
 * and a suspended key's 403 names the key, as the real one does.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import Fastify from 'fastify';
import type { Json } from './server.js';

export interface GeminiReply {
  /** A thought summary, sent as a `thought: true` part when the request asked for thoughts. */
  thinking?: string;
  text?: string;
  toolCalls?: Array<{ name: string; args?: Record<string, unknown> }>;
  /** Default `STOP`. `MAX_TOKENS`, `SAFETY`, … as the API sends them. */
  finishReason?: string;
  /** A structured answer (`responseMimeType: application/json`): sent as the text. */
  json?: unknown;
  /** The text streamed in these pieces, one chunk each, as the API streams a longer reply (`text` is their concatenation). */
  textPieces?: string[];
  /** A candidate with a finish reason and no content at all, as a `SAFETY` stop often is (with its `safetyRatings`). */
  noContent?: true;
  /** The prompt itself blocked: no candidate, only `promptFeedback.blockReason` (e.g. `PROHIBITED_CONTENT`). */
  promptBlocked?: string;
  /** Google Search grounding of the reply: `groundingMetadata` on its last chunk. */
  grounding?: { queries: string[]; sources: Array<{ uri: string; title: string }> };
  /** Code the model ran itself (the `codeExecution` tool): an `executableCode` part and its `codeExecutionResult`, before the text. */
  codeExecution?: { code: string; output: string };
  /** Streaming only: hold the stream after this many chunks until `resume` settles. */
  stream?: { pauseAfterChunks: number; resume: Promise<void> };
}
export interface GeminiError {
  status: number;
  message?: string;
  headers?: Record<string, string>;
  /** For a 429: the `RetryInfo` delay, e.g. `'1s'`. */
  retryDelay?: string;
  /**
   * For a 403: the request's key has been suspended. The body is the real API's, which names the
   * key whole in its message, its `ErrorInfo` (`CONSUMER_SUSPENDED`) and its `LocalizedMessage`.
   */
  suspendedKey?: true;
}
export type GeminiScripted = GeminiReply | GeminiError | { reset: true };

export interface GeminiRequest {
  model: string;
  stream: boolean;
  body: Json;
  headers: IncomingHttpHeaders;
  errors: string[];
  status: number | 'reset';
  /** The reply's chunks (one for `generateContent`), as sent. */
  reply?: Json[];
}

export interface FakeGemini {
  /** For `createGoogleGenerativeAI({ baseURL })`. */
  baseURL: string;
  requests: GeminiRequest[];
  script(replies: GeminiScripted[]): void;
  remaining(): number;
  close(): Promise<void>;
}

const STATUS_NAMES: Record<number, string> = { 400: 'INVALID_ARGUMENT', 403: 'PERMISSION_DENIED', 404: 'NOT_FOUND', 429: 'RESOURCE_EXHAUSTED', 500: 'INTERNAL', 503: 'UNAVAILABLE' };
const SKIP_SENTINEL = 'skip_thought_signature_validator';

const isObject = (value: unknown): value is Record<string, Json> => typeof value === 'object' && value !== null && !Array.isArray(value);

export async function startFakeGemini(apiKey: string): Promise<FakeGemini> {
  const app = Fastify({ logger: false, bodyLimit: 32 * 1024 * 1024, forceCloseConnections: true });
  /** Every signature issued, with what it signed: a call's name and args, or a reply's text. */
  const issued = new Map<string, string>();
  const queue: GeminiScripted[] = [];
  const requests: GeminiRequest[] = [];
  let counter = 0;

  // Opaque to the client, as the real ones are; a call's signature is only valid on that call
  // (same name and arguments), a text signature on any text part of a reply (the AI SDK joins a
  // reply's text pieces, and the signed empty piece that ends it, into one part).
  const signed = (part: Json) => (part.functionCall ? JSON.stringify(['call', part.functionCall.name, part.functionCall.args ?? {}]) : 'text');
  const sign = (part: Json) => {
    const signature = randomBytes(48).toString('base64');
    issued.set(signature, signed(part));
    return signature;
  };
  const verify = (part: Json) => issued.get(String(part.thoughtSignature)) === signed(part);

  app.post('/v1beta/models/:call', async (request, reply) => {
    const [model, method] = String((request.params as { call: string }).call).split(':');
    const stream = method === 'streamGenerateContent';
    const body = request.body as Json;
    const recorded: GeminiRequest = { model, stream, body, headers: request.headers, errors: [], status: 200 };
    requests.push(recorded);
    if (request.headers['x-goog-api-key'] !== apiKey) {
      recorded.status = 400;
      recorded.errors.push('API key not valid. Please pass a valid API key.');
      return reply.code(400).send(errorBody(400, recorded.errors[0]));
    }
    if ((method !== 'generateContent' && !stream) || (stream && (request.query as { alt?: string }).alt !== 'sse')) {
      recorded.status = 404;
      return reply.code(404).send(errorBody(404, `fake gemini: no method ${method}`));
    }
    recorded.errors = validate(body, model, verify);
    if (recorded.errors.length > 0) {
      recorded.status = 400;
      return reply.code(400).send(errorBody(400, recorded.errors.join('\n')));
    }
    const scripted = queue.shift() ?? { text: 'ok' };
    if ('reset' in scripted) {
      recorded.status = 'reset';
      reply.hijack();
      request.raw.socket.destroy();
      return reply;
    }
    if ('status' in scripted) {
      recorded.status = scripted.status;
      reply.headers(scripted.headers ?? {});
      if (scripted.suspendedKey) return reply.code(403).send(suspendedKeyBody(String(request.headers['x-goog-api-key'])));
      return reply.code(scripted.status).send(errorBody(scripted.status, scripted.message, scripted.retryDelay));
    }
    let chunks: Json[];
    try {
      chunks = candidateChunks(scripted, body, model, sign, `fake${++counter}`);
    } catch (error) {
      // A script that does not fit the request is the test's mistake: recorded, and a 500.
      recorded.status = 500;
      recorded.errors.push((error as Error).message);
      return reply.code(500).send(errorBody(500, (error as Error).message));
    }
    recorded.reply = chunks;
    if (!stream) return reply.send(merge(chunks));
    reply.hijack();
    reply.raw.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const [index, chunk] of chunks.entries()) {
      if ('stream' in scripted && scripted.stream?.pauseAfterChunks === index) await scripted.stream.resume;
      reply.raw.write(`data: ${JSON.stringify(chunk)}\r\n\r\n`);
    }
    reply.raw.end();
    return reply;
  });
  app.setNotFoundHandler((request, reply) => {
    requests.push({ model: '', stream: false, body: request.body, headers: request.headers, errors: [`no route ${request.url}`], status: 404 });
    return reply.code(404).send(errorBody(404, `fake gemini: no route ${request.method} ${request.url} (check the base URL)`));
  });
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    baseURL: `${address.replace('localhost', '127.0.0.1')}/v1beta`,
    requests,
    script: (replies) => void queue.push(...replies),
    remaining: () => queue.length,
    close: () => app.close(),
  };
}

/** Thinking is on for Gemini 3 models, and for others when `thinkingConfig` asks for thoughts or a budget. */
function thinkingOn(body: Json, model: string): boolean {
  const config = body?.generationConfig?.thinkingConfig;
  return /^gemini-3/.test(model) || (isObject(config) && (config.includeThoughts === true || (typeof config.thinkingBudget === 'number' && config.thinkingBudget !== 0) || config.thinkingLevel !== undefined));
}

function errorBody(code: number, message = 'fake gemini error', retryDelay?: string) {
  return {
    error: {
      code,
      message,
      status: STATUS_NAMES[code] ?? 'UNKNOWN',
      ...(retryDelay ? { details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay }] } : {}),
    },
  };
}

/** The real 403 for a suspended key: the key in the message and in the details. */
function suspendedKeyBody(key: string) {
  const message = `Permission denied: Consumer 'api_key:${key}' has been suspended.`;
  return {
    error: {
      code: 403,
      message,
      status: 'PERMISSION_DENIED',
      details: [
        {
          '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
          reason: 'CONSUMER_SUSPENDED',
          domain: 'googleapis.com',
          metadata: { consumer: 'projects/895908428397', service: 'generativelanguage.googleapis.com', containerInfo: `api_key:${key}` },
        },
        { '@type': 'type.googleapis.com/google.rpc.LocalizedMessage', locale: 'en-US', message },
      ],
    },
  };
}

/** Why the real API would refuse the request, in its words where known. */
function validate(body: Json, model: string, verify: (part: Json) => boolean): string[] {
  const errors: string[] = [];
  const contents: Json[] = body?.contents;
  if (!Array.isArray(contents) || contents.length === 0) return ['* GenerateContentRequest.contents: contents is not specified'];
  contents.forEach((content, index) => {
    if (content?.role !== 'user' && content?.role !== 'model') errors.push('Please use a valid role: user, model.');
    if (!Array.isArray(content?.parts) || content.parts.length === 0) errors.push(`* GenerateContentRequest.contents[${index}].parts: contents.parts must not be empty.`);
  });
  if (errors.length > 0) return errors;
  // Structured output with function calling: Gemini 3 takes both; earlier models refuse them
  // together, and every model refuses JSON with forced function calling.
  const config = body?.generationConfig;
  const json = config?.responseMimeType === 'application/json';
  const declarations = (body?.tools ?? []).some((tool: Json) => Array.isArray(tool?.functionDeclarations) && tool.functionDeclarations.length > 0);
  if (json && declarations && body?.toolConfig?.functionCallingConfig?.mode === 'ANY') return ["Forced function calling (ANY mode) with a response mime type: 'application/json' is unsupported"];
  if (json && declarations && !/^gemini-3/.test(model)) return ["Function calling with a response mime type: 'application/json' is unsupported"];
  if ((config?.responseSchema !== undefined || config?.responseJsonSchema !== undefined) && !json) return ['fake gemini: a response schema needs responseMimeType application/json'];
  const calls = (content: Json): Json[] => content.parts.filter((part: Json) => part.functionCall);
  const responses = (content: Json): Json[] => content.parts.filter((part: Json) => part.functionResponse);
  contents.forEach((content, index) => {
    const previous = contents[index - 1];
    if (responses(content).length > 0) {
      if (!previous || previous.role !== 'model' || calls(previous).length === 0) {
        errors.push('Please ensure that function response turn comes immediately after a function call turn.');
      } else if (calls(previous).length !== responses(content).length) {
        errors.push('Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.');
      } else if (calls(previous).some((call, i) => call.functionCall.name !== responses(content)[i].functionResponse.name)) {
        errors.push(`fake gemini: the function responses of contents[${index}] do not name the calls of contents[${index - 1}] in order`);
      }
    }
    if (content.role === 'model' && calls(content).length > 0 && previous && previous.role !== 'user') {
      errors.push('Please ensure that function call turn comes immediately after a user turn or after a function response turn.');
    }
  });
  // Signatures: any sent must be one this server issued for that very part; the first call of
  // each model turn since the last user text must carry one when thinking is on.
  const lastUserText = contents.findLastIndex((content) => content.role === 'user' && responses(content).length === 0);
  contents.forEach((content, index) => {
    for (const part of content.parts) {
      if (part.thoughtSignature !== undefined && part.thoughtSignature !== SKIP_SENTINEL && !verify(part)) errors.push('Corrupted thought signature.');
    }
    const [first] = calls(content);
    if (content.role === 'model' && index > lastUserText && first && thinkingOn(body, model) && first.thoughtSignature === undefined) {
      const position = content.parts.indexOf(first) + 1;
      errors.push(
        `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${first.functionCall.name}\` , position ${position}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`,
      );
    }
  });
  return errors;
}

/** The reply as the API streams it: thoughts, text, then the signed call or a signed empty text part ending the reply. */
function candidateChunks(reply: GeminiReply, body: Json, model: string, sign: (part: Json) => string, responseId: string): Json[] {
  const thinking = thinkingOn(body, model);
  const includeThoughts = body?.generationConfig?.thinkingConfig?.includeThoughts === true;
  const usageMetadata = { promptTokenCount: 29, candidatesTokenCount: 15, totalTokenCount: 44 + (thinking ? 20 : 0), ...(thinking ? { thoughtsTokenCount: 20 } : {}) };
  // As recorded in issue-19758-prompt-block.chunks.txt: no candidate, the reason in promptFeedback.
  if (reply.promptBlocked) return [{ promptFeedback: { blockReason: reply.promptBlocked }, usageMetadata: { promptTokenCount: 29, totalTokenCount: 29 }, modelVersion: model, responseId }];
  if (reply.noContent) {
    const safetyRatings = [{ category: 'HARM_CATEGORY_DANGEROUS_CONTENT', probability: 'HIGH', blocked: true }];
    return [{ candidates: [{ finishReason: reply.finishReason ?? 'SAFETY', index: 0, safetyRatings }], usageMetadata: { promptTokenCount: 29, totalTokenCount: 29 }, modelVersion: model, responseId }];
  }
  // Forced function calling (mode ANY, as @ai-sdk/google asks for a typed answer with tools on
  // Gemini 2.x): the model answers with a call of an allowed function, never with text.
  const forced = body?.toolConfig?.functionCallingConfig;
  if (forced?.mode === 'ANY') {
    const allowed: string[] = forced.allowedFunctionNames ?? (body.tools ?? []).flatMap((tool: Json) => (tool.functionDeclarations ?? []).map((declaration: Json) => declaration.name));
    if (!reply.toolCalls?.length || reply.toolCalls.some((call) => !allowed.includes(call.name))) {
      throw new Error(`fake gemini: function calling is forced (ANY of ${allowed.join(', ')}), but the script answers ${JSON.stringify(reply)}`);
    }
  }
  if (reply.grounding && !(body?.tools ?? []).some((tool: Json) => tool?.googleSearch !== undefined)) {
    throw new Error('fake gemini: the script grounds its answer in Google Search, but the request offers no googleSearch tool');
  }
  if (reply.codeExecution && !(body?.tools ?? []).some((tool: Json) => tool?.codeExecution !== undefined)) {
    throw new Error('fake gemini: the script runs code, but the request offers no codeExecution tool');
  }
  const text = reply.json !== undefined ? JSON.stringify(reply.json) : (reply.textPieces?.join('') ?? reply.text ?? (reply.toolCalls?.length ? undefined : 'ok'));
  const parts: Json[][] = [];
  if (thinking && includeThoughts && reply.thinking) parts.push([{ text: reply.thinking, thought: true }]);
  if (reply.codeExecution) {
    parts.push([{ executableCode: { language: 'PYTHON', code: reply.codeExecution.code } }, { codeExecutionResult: { outcome: 'OUTCOME_OK', output: reply.codeExecution.output } }]);
  }
  if (reply.textPieces) parts.push(...reply.textPieces.map((piece) => [{ text: piece }]));
  else if (text !== undefined) parts.push([{ text }]);
  const calls = (reply.toolCalls ?? []).map((call) => ({ functionCall: { name: call.name, args: call.args ?? {} } }));
  if (calls.length > 0) {
    if (thinking) Object.assign(calls[0], { thoughtSignature: sign(calls[0]) });
    parts.push(calls);
  } else if (thinking) {
    parts.push([{ text: '', thoughtSignature: sign({ text: '' }) }]);
  }
  const groundingMetadata = reply.grounding && {
    webSearchQueries: reply.grounding.queries,
    searchEntryPoint: { renderedContent: '<div class="container">…</div>' },
    groundingChunks: reply.grounding.sources.map((source) => ({ web: source })),
    groundingSupports: [{ segment: { startIndex: 0, endIndex: Math.min(10, text?.length ?? 0), text: text?.slice(0, 10) ?? '' }, groundingChunkIndices: reply.grounding.sources.map((_, index) => index), confidenceScores: reply.grounding.sources.map(() => 0.9) }],
  };
  return parts.map((chunk, index) => {
    const last = index === parts.length - 1;
    return {
      candidates: [{ content: { parts: chunk, role: 'model' }, ...(last ? { finishReason: reply.finishReason ?? 'STOP' } : {}), ...(last && groundingMetadata ? { groundingMetadata } : {}), index: 0 }],
      usageMetadata,
      modelVersion: model,
      responseId,
    };
  });
}

/** A non-streamed reply: one candidate with every part. */
function merge(chunks: Json[]): Json {
  const last = chunks[chunks.length - 1];
  if (!last.candidates || !last.candidates[0].content) return last;
  // Text streamed in pieces is one part in a whole reply; thoughts and signed parts stay apart.
  const plain = (part: Json) => typeof part.text === 'string' && part.thought === undefined && part.thoughtSignature === undefined;
  const parts: Json[] = [];
  for (const part of chunks.flatMap((chunk) => chunk.candidates[0].content.parts)) {
    const previous = parts.at(-1);
    if (previous && plain(previous) && plain(part)) parts[parts.length - 1] = { text: previous.text + part.text };
    else parts.push(part);
  }
  return { ...last, candidates: [{ ...last.candidates[0], content: { role: 'model', parts } }] };
}
