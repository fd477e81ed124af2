/**
 * `POST /v1/responses` for the fake provider server: OpenAI's Responses API, as strict as the
 * real one where turnpike depends on it.
 *
 * Requests are validated like api.openai.com validates them: the item shapes of `input` (messages
 * with input_text / input_image / input_file parts, function_call, function_call_output,
 * reasoning), every `function_call_output` answering an earlier `function_call` and every
 * `function_call` answered, `max_tokens` refused (the Responses API calls it
 * `max_output_tokens`, at least 16), reasoning options refused for other models, and tools with
 * strict schemas (the API's default) held to the strict-schema rules.
 *
 * Reasoning models answer with reasoning items; with `include: ['reasoning.encrypted_content']`
 * each carries encrypted content that this server signs. Sent back, it must verify (a tampered
 * blob is refused), with `store: false` a reasoning item without it is an unknown item, and — the
 * rule that makes parked turns honest — a continuation with `store: false` must carry, before each
 * function call a reasoning model made, the reasoning item that came with it.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Json, ScriptedReply, ScriptedResponse } from './server.js';
import { validateResponsesTextFormat } from './structured-output.js';
import { citationAnnotations, HOSTED_ITEM_TYPES, HostedItems, hostedOutputItems, impossibleHostedItems, validateHostedItem, validateHostedSequence, validateHostedTool } from './openai-hosted-tools.js';

/** What the scripted `finishReason` means here: the response `status`, or its `incomplete_details.reason`. */
export const RESPONSES_FINISH_REASONS: readonly string[] = ['completed', 'max_output_tokens', 'content_filter', 'failed', 'cancelled'];

/** With these the real API may return no output at all. */
export const RESPONSES_EMPTY_FINISH_REASONS: readonly string[] = ['content_filter', 'failed', 'cancelled'];

/**
 * The models api.openai.com treats as reasoning models. Written out here, not imported from
 * turnpike, so that the fake checks turnpike rather than agreeing with it.
 */
const REASONING_MODEL = /^(ft:)?(o1|o3|o4-mini|gpt-5|codex-mini)/;

const INCLUDABLES = [
  'file_search_call.results',
  'web_search_call.results',
  'web_search_call.action.sources',
  'message.input_image.image_url',
  'computer_call_output.output.image_url',
  'code_interpreter_call.outputs',
  'reasoning.encrypted_content',
  'message.output_text.logprobs',
];
const EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'];
const SERVICE_TIERS = ['auto', 'default', 'flex', 'scale', 'priority'];
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const IMAGE_DATA_URL = /^data:image\/(png|jpeg|gif|webp);base64,([A-Za-z0-9+/]+={0,2})$/;
const PDF_DATA_URL = /^data:application\/pdf;base64,([A-Za-z0-9+/]+={0,2})$/;
/** The real API's per-request cap on inline files and images. */
const MAX_INLINE_BYTES = 50 * 1024 * 1024;

const isObject = (value: unknown): value is Record<string, Json> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isNonEmptyString = (value: unknown): value is string => typeof value === 'string' && value.length > 0;

/** What the endpoint remembers between requests: its signing secret and which calls came with which reasoning. */
export class ResponsesState {
  private readonly secret = randomBytes(32);
  /** The reasoning item each function call was made with, by call id. */
  readonly reasoningOfCall = new Map<string, string>();
  /** The hosted tools' items it issued (openai-hosted-tools.ts). */
  readonly hosted = new HostedItems();

  /** Opaque, like the real blob: the item id and a nonce, with their MAC. */
  encrypt(itemId: string): string {
    const payload = Buffer.from(JSON.stringify({ id: itemId, nonce: randomBytes(8).toString('hex') })).toString('base64');
    return `${payload}.${this.mac(payload)}`;
  }

  /** Whether `blob` is one this server issued for `itemId`, unchanged. */
  verify(itemId: string, blob: unknown): boolean {
    if (typeof blob !== 'string') return false;
    const [payload, mac] = blob.split('.');
    if (!payload || !mac) return false;
    const expected = Buffer.from(this.mac(payload));
    const given = Buffer.from(mac);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return false;
    try {
      return JSON.parse(Buffer.from(payload, 'base64').toString('utf8')).id === itemId;
    } catch {
      return false;
    }
  }

  private mac(payload: string): string {
    return createHmac('sha256', this.secret).update(`reasoning\0${payload}`).digest('base64url');
  }
}

/** Why a scripted reply could never come from the Responses API for this request, or undefined. */
export function impossibleResponsesReply(body: Json, scripted: ScriptedResponse): string | undefined {
  const reply = scripted as ScriptedReply;
  if (reply.reasoning && !REASONING_MODEL.test(String(body?.model))) return `reasoning scripted for ${String(body?.model)}, which is not a reasoning model`;
  if (reply.refusal !== undefined && (reply.text !== undefined || reply.noContent)) return 'refusal excludes text and noContent';
  if (reply.finishReason === 'cancelled' && body?.stream === true) return 'only background responses are cancelled, and those are retrieved, not streamed';
  return impossibleHostedItems(body, reply.hostedItems);
}

// ---------------------------------------------------------------------------------------------
// Validation

/** The errors api.openai.com would report for this request (empty when valid). */
export function validateResponsesRequest(body: unknown, state: ResponsesState): string[] {
  if (!isObject(body)) return ['request body must be a JSON object'];
  const errors: string[] = [];
  if (!isNonEmptyString(body.model)) errors.push("Missing required parameter: 'model'.");
  if (body.stream != null && typeof body.stream !== 'boolean') errors.push("Invalid type for 'stream': expected a boolean.");
  const moved: Record<string, string> = { max_tokens: 'max_output_tokens', max_completion_tokens: 'max_output_tokens', messages: 'input', reasoning_effort: 'reasoning.effort' };
  for (const [field, replacement] of Object.entries(moved)) {
    if (body[field] !== undefined) errors.push(`Unsupported parameter: '${field}'. In the Responses API, this parameter has moved to '${replacement}'.`);
  }
  if (body.max_output_tokens != null && !(Number.isInteger(body.max_output_tokens) && body.max_output_tokens >= 16)) {
    errors.push(`Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got ${String(body.max_output_tokens)} instead.`);
  }
  if (body.temperature != null && !(typeof body.temperature === 'number' && body.temperature >= 0 && body.temperature <= 2)) {
    errors.push("Invalid 'temperature': decimal above maximum value. Expected a value <= 2.");
  }
  if (body.store != null && typeof body.store !== 'boolean') errors.push("Invalid type for 'store': expected a boolean.");
  if (body.instructions != null && typeof body.instructions !== 'string') errors.push("Invalid type for 'instructions': expected a string.");
  if (body.include != null) {
    if (!Array.isArray(body.include)) errors.push("Invalid type for 'include': expected an array of strings.");
    else for (const value of body.include) if (!INCLUDABLES.includes(value)) errors.push(`Invalid value: '${String(value)}'. Supported values are: ${INCLUDABLES.map((v) => `'${v}'`).join(', ')}. (param: include)`);
  }
  const reasoningModel = isNonEmptyString(body.model) && REASONING_MODEL.test(body.model);
  if (body.reasoning != null) {
    if (!isObject(body.reasoning)) errors.push("Invalid type for 'reasoning': expected an object.");
    else {
      const { effort, summary } = body.reasoning;
      if (effort != null && !reasoningModel) errors.push("Unsupported parameter: 'reasoning.effort' is not supported with this model.");
      else if (effort != null && !EFFORTS.includes(effort)) errors.push(`Invalid value: '${String(effort)}'. Supported values are: ${EFFORTS.map((v) => `'${v}'`).join(', ')}. (param: reasoning.effort)`);
      if (summary != null && !reasoningModel) errors.push("Unsupported parameter: 'reasoning.summary' is not supported with this model.");
      else if (summary != null && !['auto', 'concise', 'detailed'].includes(summary)) errors.push(`Invalid value: '${String(summary)}'. Supported values are: 'auto', 'concise', and 'detailed'. (param: reasoning.summary)`);
    }
  }
  errors.push(...validateServiceTierAndMetadata(body));
  errors.push(...validateTools(body.tools));
  errors.push(...validateResponsesTextFormat(body));
  if (typeof body.input === 'string') {
    if (body.input.length === 0) errors.push("Invalid 'input': string too short. Expected a string with minimum length 1.");
  } else if (!Array.isArray(body.input) || body.input.length === 0) {
    errors.push("Invalid 'input': expected a string or a non-empty array of input items.");
  } else {
    const structural = body.input.flatMap((item: unknown, index: number) => (isObject(item) ? validateHostedItem(item, `input[${index}]`, body, state.hosted) : undefined) ?? validateItem(item, `input[${index}]`));
    errors.push(...structural);
    if (structural.length === 0) errors.push(...validateItemSequence(body.input, body, state, reasoningModel));
  }
  return errors;
}

/** `service_tier` and `metadata`, which Chat Completions and the Responses API check alike. */
export function validateServiceTierAndMetadata(body: Record<string, Json>): string[] {
  const errors: string[] = [];
  if (body.service_tier != null && !SERVICE_TIERS.includes(body.service_tier)) {
    errors.push(`Invalid value: '${String(body.service_tier)}'. Supported values are: ${SERVICE_TIERS.map((v) => `'${v}'`).join(', ')}. (param: service_tier)`);
  }
  return [...errors, ...validateMetadata(body.metadata)];
}

function validateMetadata(metadata: unknown): string[] {
  if (metadata == null) return [];
  if (!isObject(metadata)) return ["Invalid type for 'metadata': expected an object."];
  const entries = Object.entries(metadata);
  if (entries.length > 16) return [`Invalid 'metadata': too many properties. Expected an object with at most 16 properties, but got an object with ${entries.length} properties instead.`];
  return entries.flatMap(([key, value]) =>
    key.length > 64 ? [`Invalid 'metadata': key '${key}' is longer than 64 characters.`]
    : typeof value !== 'string' ? [`Invalid type for 'metadata.${key}': expected a string.`]
    : value.length > 512 ? [`Invalid 'metadata.${key}': string too long. Expected a string with maximum length 512.`]
    : [],
  );
}

function validateTools(tools: unknown): string[] {
  if (tools === undefined) return [];
  if (!Array.isArray(tools)) return ["Invalid type for 'tools': expected an array of objects."];
  return tools.flatMap((tool: Json, index: number): string[] => {
    const at = `tools[${index}]`;
    if (!isObject(tool)) return [`Invalid type for '${at}': expected an object.`];
    const hosted = validateHostedTool(tool, at);
    if (hosted) return hosted;
    if (tool.type !== 'function') return [`Invalid value: '${String(tool.type)}'. fake provider: only function and hosted tools are supported. (param: ${at}.type)`];
    // Chat Completions' nesting is the commonest mistake: the Responses API's function tools are flat.
    if (tool.function !== undefined) return [`Missing required parameter: '${at}.name'. (Function tools are flat in the Responses API: no 'function' object.)`];
    const errors: string[] = [];
    if (typeof tool.name !== 'string' || !TOOL_NAME.test(tool.name)) errors.push(`Invalid '${at}.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`);
    if (tool.description != null && typeof tool.description !== 'string') errors.push(`Invalid type for '${at}.description': expected a string.`);
    if (tool.strict != null && typeof tool.strict !== 'boolean') errors.push(`Invalid type for '${at}.strict': expected a boolean.`);
    if (!isObject(tool.parameters) || tool.parameters.type !== 'object') {
      errors.push(`Invalid schema for function '${String(tool.name)}': schema must be a JSON Schema of 'type: "object"', got 'type: "${String(tool.parameters?.type)}"'.`);
    } else if (tool.strict !== false) {
      // The Responses API makes function tools strict unless told otherwise.
      errors.push(...strictSchemaErrors(tool.parameters, String(tool.name), '()'));
    }
    return errors;
  });
}

function strictSchemaErrors(schema: Record<string, Json>, name: string, context: string): string[] {
  if (schema.type !== 'object') return [];
  const errors: string[] = [];
  if (schema.additionalProperties !== false) {
    errors.push(`Invalid schema for function '${name}': In context=${context}, 'additionalProperties' is required to be supplied and to be false.`);
  }
  const properties = isObject(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? schema.required : [];
  const missing = Object.keys(properties).filter((key) => !required.includes(key));
  if (missing.length > 0) {
    errors.push(`Invalid schema for function '${name}': In context=${context}, 'required' is required to be supplied and to be an array including every key in properties. Missing '${missing[0]}'.`);
  }
  for (const [key, value] of Object.entries(properties)) if (isObject(value)) errors.push(...strictSchemaErrors(value, name, `('properties', '${key}')`));
  return errors;
}

const ITEM_TYPES = ['message', 'function_call', 'function_call_output', 'reasoning', 'item_reference'];

function validateItem(item: unknown, at: string): string[] {
  if (!isObject(item)) return [`Invalid type for '${at}': expected an object.`];
  if (item.type === undefined || item.type === 'message') return validateMessage(item, at);
  switch (item.type) {
    case 'function_call': {
      const errors: string[] = [];
      if (!isNonEmptyString(item.call_id)) errors.push(`Missing required parameter: '${at}.call_id'.`);
      if (!isNonEmptyString(item.name)) errors.push(`Missing required parameter: '${at}.name'.`);
      if (typeof item.arguments !== 'string') errors.push(`Invalid type for '${at}.arguments': expected a string, but got ${typeof item.arguments} instead.`);
      return errors;
    }
    case 'function_call_output': {
      const errors: string[] = [];
      if (!isNonEmptyString(item.call_id)) errors.push(`Missing required parameter: '${at}.call_id'.`);
      if (typeof item.output !== 'string' && !Array.isArray(item.output)) errors.push(`Invalid type for '${at}.output': expected one of a string or array of objects.`);
      return errors;
    }
    case 'reasoning': {
      const errors: string[] = [];
      if (!isNonEmptyString(item.id)) errors.push(`Missing required parameter: '${at}.id'.`);
      if (!Array.isArray(item.summary)) errors.push(`Missing required parameter: '${at}.summary'.`);
      else item.summary.forEach((part: Json, index: number) => {
        if (!isObject(part) || part.type !== 'summary_text' || typeof part.text !== 'string') errors.push(`Invalid value for '${at}.summary[${index}]': expected { type: 'summary_text', text }.`);
      });
      if (item.encrypted_content != null && typeof item.encrypted_content !== 'string') errors.push(`Invalid type for '${at}.encrypted_content': expected a string.`);
      return errors;
    }
    default:
      return [`Invalid value: '${String(item.type)}'. Supported values are: ${ITEM_TYPES.map((v) => `'${v}'`).join(', ')}, …. (param: ${at}.type)`];
  }
}

function validateMessage(item: Record<string, Json>, at: string): string[] {
  if (!['user', 'assistant', 'system', 'developer'].includes(item.role)) {
    return [`Invalid value: '${String(item.role)}'. Supported values are: 'assistant', 'system', 'developer', and 'user'. (param: ${at}.role)`];
  }
  const { content } = item;
  if (typeof content === 'string') return [];
  if (!Array.isArray(content)) return [`Invalid type for '${at}.content': expected one of a string or array of objects.`];
  const allowed = item.role === 'assistant' ? ['output_text', 'refusal'] : ['input_text', 'input_image', 'input_file'];
  return content.flatMap((part: Json, index: number): string[] => {
    const partAt = `${at}.content[${index}]`;
    if (!isObject(part) || !allowed.includes(part.type)) {
      return [`Invalid value: '${String(part?.type)}'. Supported values are: ${allowed.map((v) => `'${v}'`).join(', ')}. (param: ${partAt}.type)`];
    }
    switch (part.type) {
      case 'input_text':
      case 'output_text':
        return typeof part.text === 'string' ? [] : [`Missing required parameter: '${partAt}.text'.`];
      case 'refusal':
        return typeof part.refusal === 'string' ? [] : [`Missing required parameter: '${partAt}.refusal'.`];
      case 'input_image':
        return validateInputImage(part, partAt);
      case 'input_file':
        return validateInputFile(part, partAt);
      default:
        return [];
    }
  });
}

function validateInputImage(part: Record<string, Json>, at: string): string[] {
  const errors: string[] = [];
  if (part.detail != null && !['low', 'high', 'auto', 'original'].includes(part.detail)) errors.push(`Invalid value: '${String(part.detail)}'. Supported values are: 'low', 'high', 'auto', and 'original'. (param: ${at}.detail)`);
  if (part.file_id != null) return errors;
  const url = part.image_url;
  if (typeof url !== 'string') return [...errors, `Missing required parameter: '${at}.image_url'.`];
  if (url.startsWith('data:')) {
    const match = IMAGE_DATA_URL.exec(url);
    if (!match) errors.push(`Invalid '${at}.image_url'. Expected a base64-encoded data URL with an image MIME type (e.g. 'data:image/png;base64,aW1nIGJ5dGVzIGhlcmU='), but got unsupported MIME type or invalid data.`);
    else if (match[2].length * 0.75 > MAX_INLINE_BYTES) errors.push(`Invalid '${at}.image_url': the image is larger than the allowed 50MB.`);
  } else if (!/^https?:\/\//.test(url)) errors.push(`Invalid '${at}.image_url'. Expected a valid URL, but got a value with an invalid format.`);
  return errors;
}

function validateInputFile(part: Record<string, Json>, at: string): string[] {
  if (part.file_id != null) return [];
  if (typeof part.file_url === 'string') return /^https?:\/\//.test(part.file_url) ? [] : [`Invalid '${at}.file_url'. Expected a valid URL.`];
  if (typeof part.file_data !== 'string') return [`Invalid '${at}': one of 'file_id', 'file_url' or 'file_data' is required.`];
  const errors: string[] = [];
  const match = PDF_DATA_URL.exec(part.file_data);
  if (!match) errors.push(`Invalid '${at}.file_data'. Expected a base64-encoded data URL with a supported file type (e.g. 'data:application/pdf;base64,…').`);
  else if (match[1].length * 0.75 > MAX_INLINE_BYTES) errors.push(`Invalid '${at}.file_data': the file is larger than the allowed 50MB.`);
  if (!isNonEmptyString(part.filename)) errors.push(`Missing required parameter: '${at}.filename'. A filename is required with 'file_data'.`);
  return errors;
}

/** Pairing of calls and outputs, and what reasoning items must carry and be followed by. */
function validateItemSequence(input: Array<Record<string, Json>>, body: Record<string, Json>, state: ResponsesState, reasoningModel: boolean): string[] {
  const errors: string[] = [];
  const calls = new Set<string>();
  const answered = new Set<string>();
  const reasoningSeen = new Set<string>();
  input.forEach((item, index) => {
    switch (item.type) {
      case 'function_call': {
        if (calls.has(item.call_id)) errors.push(`Duplicate item found with call_id '${item.call_id}'. (param: input[${index}])`);
        calls.add(item.call_id);
        const reasoningId = state.reasoningOfCall.get(item.call_id);
        // The real API keys this rule on the function call's item id; the fake on the call id,
        // which is what a client that does not resend item ids still sends.
        if (reasoningModel && body.store === false && reasoningId !== undefined && !reasoningSeen.has(reasoningId)) {
          errors.push(`Item '${item.call_id}' of type 'function_call' was provided without its required 'reasoning' item: '${reasoningId}'.`);
        }
        break;
      }
      case 'function_call_output':
        if (!calls.has(item.call_id)) errors.push(`No tool call found for function call output with call_id ${item.call_id}.`);
        else if (answered.has(item.call_id)) errors.push(`Duplicate function call output for call_id ${item.call_id}. (param: input[${index}])`);
        answered.add(item.call_id);
        break;
      case 'reasoning': {
        if (item.encrypted_content != null) {
          if (!state.verify(item.id, item.encrypted_content)) errors.push(`The encrypted content for item ${item.id} could not be verified.`);
        } else if (body.store === false) {
          errors.push(`Item with id '${item.id}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`);
        }
        const next = input[index + 1];
        const follows = next !== undefined && (next.type === 'function_call' || HOSTED_ITEM_TYPES.includes(next.type) || ((next.type === undefined || next.type === 'message') && next.role === 'assistant'));
        if (!follows) errors.push(`Item '${item.id}' of type 'reasoning' was provided without its required following item.`);
        reasoningSeen.add(item.id);
        break;
      }
    }
  });
  for (const id of calls) if (!answered.has(id)) errors.push(`No tool output found for function call ${id}.`);
  return [...errors, ...validateHostedSequence(input)];
}

// ---------------------------------------------------------------------------------------------
// Replies

/** The `Response` object for a scripted reply; remembers which reasoning came with which calls. */
export function responsesReply(body: Json, scripted: ScriptedReply, nextId: (prefix: string) => string, state: ResponsesState) {
  const reasoningModel = REASONING_MODEL.test(String(body.model));
  const encrypted = Array.isArray(body.include) && body.include.includes('reasoning.encrypted_content');
  const summaries = body.reasoning?.summary != null;
  // A reasoning model always reasons; the summary text is only returned when it was asked for.
  const reasoning = reasoningModel
    ? (scripted.reasoning ?? [{}]).map((item) => {
        const id = nextId('rs_');
        return {
          id,
          type: 'reasoning' as const,
          summary: summaries ? (item.summary ?? []).map((text) => ({ type: 'summary_text' as const, text })) : [],
          ...(encrypted ? { encrypted_content: state.encrypt(id) } : {}),
        };
      })
    : [];
  const calls = (scripted.toolCalls ?? []).map((call) => ({
    id: nextId('fc_'),
    type: 'function_call' as const,
    status: 'completed' as const,
    call_id: call.id ?? nextId('call_'),
    name: call.name,
    arguments: call.arguments ?? JSON.stringify(call.input ?? {}),
  }));
  for (const call of calls) if (reasoning.length > 0) state.reasoningOfCall.set(call.call_id, reasoning.at(-1)!.id);
  const hosted = hostedOutputItems(body, scripted.hostedItems, nextId, state.hosted);
  const asksApproval = hosted.some((item) => item.type === 'mcp_approval_request');
  const text = scripted.noContent || scripted.refusal !== undefined ? undefined : (scripted.text ?? (calls.length > 0 || asksApproval ? undefined : 'ok'));
  const messageContent = [
    ...(text !== undefined ? [{ type: 'output_text' as const, text, annotations: citationAnnotations(text, scripted.urlCitations), logprobs: [] }] : []),
    ...(scripted.refusal !== undefined ? [{ type: 'refusal' as const, refusal: scripted.refusal }] : []),
  ];
  const message = messageContent.length > 0 ? [{ id: nextId('msg_'), type: 'message' as const, status: 'completed' as const, role: 'assistant' as const, content: messageContent }] : [];
  const usage = { inputTokens: 10, outputTokens: 5, cachedInputTokens: 0, reasoningTokens: 0, ...scripted.usage };
  const finish = scripted.finishReason ?? 'completed';
  const incomplete = finish === 'max_output_tokens' || finish === 'content_filter';
  const status = incomplete ? 'incomplete' : finish;
  return {
    id: nextId('resp_'),
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status,
    background: false,
    error: status === 'failed' ? { code: 'server_error', message: 'The model failed to generate a response.' } : null,
    incomplete_details: incomplete ? { reason: finish } : null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    metadata: body.metadata ?? {},
    model: body.model,
    output: [...reasoning, ...hosted, ...message, ...calls],
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: body.reasoning?.effort ?? (reasoningModel ? 'medium' : null), summary: body.reasoning?.summary ?? null },
    service_tier: body.service_tier === 'flex' || body.service_tier === 'priority' ? body.service_tier : 'default',
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    text: { format: body.text?.format ?? { type: 'text' } },
    tool_choice: 'auto',
    tools: body.tools ?? [],
    top_p: 1,
    truncation: 'disabled',
    usage: {
      input_tokens: usage.inputTokens,
      input_tokens_details: { cached_tokens: usage.cachedInputTokens },
      output_tokens: usage.outputTokens,
      output_tokens_details: { reasoning_tokens: usage.reasoningTokens },
      total_tokens: usage.inputTokens + usage.outputTokens,
    },
    user: null,
  };
}
