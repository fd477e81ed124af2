/**
 * Structured output for the fake provider server: the request checks and the scripted replies
 * of each API's native way to ask for a typed final answer.
 *
 * - Chat Completions `response_format` (`text`, `json_object`, `json_schema`; openai v6
 *   `ResponseFormatJSONSchema`) and Responses `text.format` (`ResponseFormatTextJSONSchemaConfig`).
 *   With `strict: true` the schema is held to the strict-mode subset
 *   (https://platform.openai.com/docs/guides/structured-outputs#supported-schemas), and refused
 *   with the API's own messages, e.g. `Invalid schema for response_format 'x': In context=(),
 *   'additionalProperties' is required to be supplied and to be false.` (param `response_format`;
 *   on the Responses API param `text.format.schema`, code `invalid_json_schema`).
 * - Anthropic `tool_choice` forcing a tool (`ToolChoiceTool`), and JSON outputs
 *   (`output_config.format`, `JSONOutputFormat` in @anthropic-ai/sdk 1.x; the deprecated beta
 *   `output_format` is checked alike) per
 *   https://platform.claude.com/docs/en/build-with-claude/structured-outputs.
 *
 * A reply scripted with `json` is sent as the JSON text of the message (OpenAI, Anthropic JSON
 * outputs) or as the input of the forced tool's `tool_use` (Anthropic).
 */
import type { FakeProvider, Json, ScriptedReply, ScriptedResponse } from './server.js';

const isObject = (value: unknown): value is Record<string, Json> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** `name` of a json_schema format: openai v6 `ResponseFormatJSONSchema.JSONSchema.name` ("a-z, A-Z, 0-9, underscores and dashes, max 64"). */
const FORMAT_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
/** Strict-mode limits from the structured-outputs guide ("up to 5000 object properties total, with up to 10 levels of nesting"). */
export const MAX_NESTING = 10;
export const MAX_PROPERTIES = 5000;
/**
 * Keywords strict mode refuses ("'allOf' is not permitted."): composition other than `anyOf`,
 * conditionals and the object/array keywords the guide lists as unsupported.
 */
const NOT_PERMITTED = [
  'allOf', 'oneOf', 'not', 'if', 'then', 'else', 'dependentRequired', 'dependentSchemas', 'patternProperties',
  'unevaluatedProperties', 'unevaluatedItems', 'propertyNames', 'minProperties', 'maxProperties', 'uniqueItems', 'contains', 'minContains', 'maxContains',
];

/** `('properties', 'a', 'items')`: how the API names a place in the schema (`()` is the root). */
const contextOf = (path: string[]) => `(${path.map((part) => `'${part}'`).join(', ')})`;

/**
 * Why a strict schema is refused, in the API's words (empty when it is valid). `name` is the
 * format's name; OpenAI says "response_format" for both endpoints.
 */
export function strictSchemaErrors(schema: unknown, name: string): string[] {
  const prefix = `Invalid schema for response_format '${name}'`;
  if (!isObject(schema) || schema.type !== 'object') {
    return [`${prefix}: schema must be a JSON Schema of 'type: "object"', got 'type: "${String(isObject(schema) ? schema.type : undefined)}"'.`];
  }
  const errors: string[] = [];
  let deepest = 0;
  let properties = 0;
  // Nesting counts the objects on the path to a schema (the root object is level 1): OpenAI does
  // not document how it counts, so this is the fake's reading of "levels of nesting".
  const visit = (node: unknown, path: string[], outer: number) => {
    if (!isObject(node)) return;
    const at = `In context=${contextOf(path)}`;
    for (const keyword of NOT_PERMITTED) if (keyword in node) errors.push(`${prefix}: ${at}, '${keyword}' is not permitted.`);
    const types = Array.isArray(node.type) ? node.type : [node.type];
    const depth = types.includes('object') ? outer + 1 : outer;
    deepest = Math.max(deepest, depth);
    if (types.includes('object')) {
      if (node.additionalProperties !== false) errors.push(`${prefix}: ${at}, 'additionalProperties' is required to be supplied and to be false.`);
      const keys = isObject(node.properties) ? Object.keys(node.properties) : [];
      properties += keys.length;
      const required: unknown[] = Array.isArray(node.required) ? node.required : [];
      const missing = keys.filter((key) => !required.includes(key));
      if (missing.length > 0 || !Array.isArray(node.required)) {
        errors.push(`${prefix}: ${at}, 'required' is required to be supplied and to be an array including every key in properties. Missing '${missing[0] ?? ''}'.`);
      }
      for (const key of keys) visit(node.properties[key], [...path, 'properties', key], depth);
    }
    if (node.items !== undefined) visit(node.items, [...path, 'items'], depth);
    if (Array.isArray(node.anyOf)) node.anyOf.forEach((branch: unknown, index: number) => visit(branch, [...path, 'anyOf', String(index)], depth));
    for (const defs of ['$defs', 'definitions']) {
      if (isObject(node[defs])) for (const [key, value] of Object.entries(node[defs])) visit(value, [...path, defs, key], depth);
    }
  };
  visit(schema, [], 0);
  if (deepest > MAX_NESTING) errors.push(`${prefix}: ${deepest} levels of nesting exceeds limit of ${MAX_NESTING}.`);
  if (properties > MAX_PROPERTIES) errors.push(`${prefix}: ${properties} parameters exceeds limit of ${MAX_PROPERTIES}.`);
  return errors;
}

/** The text of every message of a request, for the `json_object` rule below. */
function mentionsJson(...texts: unknown[]): boolean {
  return texts.some((text) => /json/i.test(JSON.stringify(text ?? '')));
}

/**
 * A json_schema format (`at` is where it sits: `response_format.json_schema` or `text.format`).
 * `strict` defaults to false on both endpoints (openai v6 `strict?: boolean | null`).
 */
function jsonSchemaFormatErrors(format: Record<string, Json>, at: string): string[] {
  if (typeof format.name !== 'string') return [`Missing required parameter: '${at}.name'.`];
  if (!FORMAT_NAME.test(format.name)) return [`Invalid '${at}.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`];
  const errors: string[] = [];
  if (format.description != null && typeof format.description !== 'string') errors.push(`Invalid type for '${at}.description': expected a string.`);
  if (format.strict != null && typeof format.strict !== 'boolean') errors.push(`Invalid type for '${at}.strict': expected a boolean.`);
  if (format.schema != null && !isObject(format.schema)) errors.push(`Invalid type for '${at}.schema': expected an object.`);
  if (errors.length > 0) return errors;
  if (format.strict === true) return strictSchemaErrors(format.schema ?? {}, format.name);
  return [];
}

const FORMAT_TYPES = "Supported values are: 'text', 'json_object', and 'json_schema'.";

/** Chat Completions `response_format`. */
export function validateChatResponseFormat(body: Record<string, Json>): string[] {
  const format = body.response_format;
  if (format == null) return [];
  if (!isObject(format)) return ["Invalid type for 'response_format': expected an object."];
  switch (format.type) {
    case 'text':
      return [];
    case 'json_object':
      // https://platform.openai.com/docs/guides/structured-outputs#json-mode: the API refuses JSON mode unless "JSON" appears in the context.
      return mentionsJson(body.messages) ? [] : ["'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'."];
    case 'json_schema':
      if (!isObject(format.json_schema)) return ["Missing required parameter: 'response_format.json_schema'."];
      return jsonSchemaFormatErrors(format.json_schema, 'response_format.json_schema');
    default:
      return [`Invalid value: '${String(format.type)}'. ${FORMAT_TYPES} (param: response_format.type)`];
  }
}

/** Responses API `text.format` (flat: name and schema sit beside `type`). */
export function validateResponsesTextFormat(body: Record<string, Json>): string[] {
  if (body.text == null) return [];
  if (!isObject(body.text)) return ["Invalid type for 'text': expected an object."];
  const format = body.text.format;
  if (format == null) return [];
  if (!isObject(format)) return ["Invalid type for 'text.format': expected an object."];
  switch (format.type) {
    case 'text':
      return [];
    case 'json_object':
      return mentionsJson(body.input, body.instructions) ? [] : ["Response input messages must contain the word 'json' in some form to use 'text.format' of type 'json_object'."];
    case 'json_schema':
      if (format.json_schema !== undefined) return ["Unknown parameter: 'text.format.json_schema'. (The Responses API's format is flat: name and schema sit beside type.)"];
      return jsonSchemaFormatErrors(format, 'text.format');
    default:
      return [`Invalid value: '${String(format.type)}'. ${FORMAT_TYPES} (param: text.format.type)`];
  }
}

/**
 * `param` and `code` of the OpenAI error body for one of the messages above, as the API sends
 * them: a refused schema names `response_format` (Chat Completions) or `text.format.schema` with
 * code `invalid_json_schema` (Responses API).
 */
export function openAIStructuredErrorFields(provider: FakeProvider, message: string): { param: string; code: string | null } | undefined {
  if (!message.startsWith('Invalid schema for response_format')) return undefined;
  return provider === 'openai-responses' ? { param: 'text.format.schema', code: 'invalid_json_schema' } : { param: 'response_format', code: null };
}

// ---------------------------------------------------------------------------------------------
// Anthropic

/** The tool a request forces with `tool_choice: { type: 'tool', name }`, if any. */
export function forcedTool(body: Json): string | undefined {
  return isObject(body?.tool_choice) && body.tool_choice.type === 'tool' && typeof body.tool_choice.name === 'string' ? body.tool_choice.name : undefined;
}

/**
 * `output_config.format`, or the deprecated `output_format` (beta header
 * `structured-outputs-2025-11-13`), which the doc says still works during the migration.
 */
function anthropicFormat(body: Record<string, Json>): { format: unknown; at: string } | undefined {
  if (isObject(body.output_config) && body.output_config.format != null) return { format: body.output_config.format, at: 'output_config.format' };
  if (body.output_format != null) return { format: body.output_format, at: 'output_format' };
  return undefined;
}

/**
 * JSON-output schema limits from the structured-outputs doc: every object closed with
 * `additionalProperties: false`; no numeric, string-length or array-count constraints (the SDKs'
 * `parse` helpers strip them and validate client-side); no recursive `$ref`. The doc lists the
 * rules but not the API's wording. The API's own messages, as reported from its 400s
 * (`invalid_request_error`), name the format's schema and the subschema's type, not where in the
 * schema: `output_config.format.schema: For 'integer' type, property 'minimum' is not supported`,
 * `… For 'array' type, 'minItems' values other than 0 or 1 are not supported`, `… For 'object'
 * type, 'additionalProperties' must be explicitly set to false`. The fake's own message for a
 * recursive schema (no report found) names the place.
 */
const ANTHROPIC_UNSUPPORTED = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'minLength', 'maxLength', 'maxItems', 'minProperties', 'maxProperties'];

function anthropicSchemaErrors(schema: unknown, at: string): string[] {
  if (!isObject(schema)) return [`${at}.schema: Field required`];
  const errors: string[] = [];
  const visit = (node: unknown, where: string) => {
    if (!isObject(node)) return;
    const types = Array.isArray(node.type) ? node.type : [node.type];
    const type = String(types.find((one: unknown) => one !== 'null') ?? types[0]);
    for (const keyword of ANTHROPIC_UNSUPPORTED) if (keyword in node) errors.push(`${at}.schema: For '${type}' type, property '${keyword}' is not supported`);
    if (typeof node.minItems === 'number' && node.minItems > 1) errors.push(`${at}.schema: For 'array' type, 'minItems' values other than 0 or 1 are not supported`);
    if (node.$ref === '#') errors.push(`${where}: recursive schemas are not supported in structured output schemas`);
    if (types.includes('object') && node.additionalProperties !== false) errors.push(`${at}.schema: For 'object' type, 'additionalProperties' must be explicitly set to false`);
    if (isObject(node.properties)) for (const [key, value] of Object.entries(node.properties)) visit(value, `${where}.properties.${key}`);
    if (node.items !== undefined) visit(node.items, `${where}.items`);
    for (const list of ['anyOf', 'allOf']) if (Array.isArray(node[list])) node[list].forEach((branch: unknown, index: number) => visit(branch, `${where}.${list}.${index}`));
    if (isObject(node.$defs)) for (const [key, value] of Object.entries(node.$defs)) visit(value, `${where}.$defs.${key}`);
  };
  visit(schema, `${at}.schema`);
  return errors;
}

/**
 * `tool_choice` and JSON outputs on a Messages request. A forced tool must be one of `tools`
 * ("Tool 'x' not found in provided tools"), and forcing (`any` or `tool`) is refused with
 * thinking on (extended-thinking doc, "Feature compatibility"; the API's message is "Thinking may
 * not be enabled when tool_choice forces tool use.").
 */
export function validateAnthropicStructuredOutput(body: Record<string, Json>, thinkingOn: boolean): string[] {
  const errors: string[] = [];
  const choice = body.tool_choice;
  if (choice != null) {
    if (!isObject(choice) || !['auto', 'any', 'tool', 'none'].includes(choice.type)) {
      errors.push("tool_choice: Input tag found using 'type' does not match any of the expected tags: 'auto', 'any', 'tool', 'none'");
    } else if (choice.type === 'tool') {
      const names = Array.isArray(body.tools) ? body.tools.map((tool: Json) => tool?.name) : [];
      if (typeof choice.name !== 'string') errors.push('tool_choice.tool.name: Field required');
      else if (!names.includes(choice.name)) errors.push(`Tool '${choice.name}' not found in provided tools`);
    }
    if (isObject(choice) && (choice.type === 'any' || choice.type === 'tool') && thinkingOn) errors.push('Thinking may not be enabled when tool_choice forces tool use.');
  }
  const found = anthropicFormat(body);
  if (found) {
    const { format, at } = found;
    if (!isObject(format) || format.type !== 'json_schema') errors.push(`${at}.type: Input should be 'json_schema'`);
    else errors.push(...anthropicSchemaErrors(format.schema, at));
  }
  return errors;
}

// ---------------------------------------------------------------------------------------------
// Replies

/** Whether the request asked for a structured final answer the fake can answer with `json`. */
function asksForStructure(provider: FakeProvider, body: Json): boolean {
  if (provider === 'openai') return ['json_object', 'json_schema'].includes(body?.response_format?.type);
  if (provider === 'openai-responses') return ['json_object', 'json_schema'].includes(body?.text?.format?.type);
  return isObject(body) && (forcedTool(body) !== undefined || anthropicFormat(body) !== undefined);
}

/** Why a scripted reply cannot answer this request's structured-output settings, or undefined. */
export function impossibleStructuredReply(provider: FakeProvider, body: Json, scripted: ScriptedResponse): string | undefined {
  const reply = scripted as ScriptedReply;
  const forced = provider === 'anthropic' ? forcedTool(body) : undefined;
  if (reply.json !== undefined) {
    if (reply.text !== undefined || reply.toolCalls !== undefined || reply.noContent || reply.refusal !== undefined) return 'json excludes text, toolCalls, noContent and refusal';
    if (!asksForStructure(provider, body)) return 'json scripted for a request that asked for no structured output';
    return undefined;
  }
  if (forced !== undefined && !('status' in scripted || 'reset' in scripted || 'malformed' in scripted)) {
    // A forced tool is prefilled: the model answers with that tool's tool_use and no text first.
    if (reply.text !== undefined || !(reply.toolCalls ?? []).some((call) => call.name === forced)) return `the request forces tool '${forced}', so the reply is a tool_use of it`;
  }
  return undefined;
}

/** The reply as sent: `json` becomes the message text, or the forced tool's input on Anthropic. */
export function resolveStructuredReply(provider: FakeProvider, body: Json, scripted: ScriptedReply): ScriptedReply {
  if (scripted.json === undefined) return scripted;
  const { json, ...rest } = scripted;
  const forced = provider === 'anthropic' ? forcedTool(body) : undefined;
  return forced !== undefined ? { ...rest, toolCalls: [{ name: forced, input: json }] } : { ...rest, text: JSON.stringify(json) };
}
