/**
 * What the providers' native structured outputs accept of a typed answer's JSON Schema
 * (docs/typed-output.md). Pure functions, no imports: the turn checks a schema when it starts,
 * and the providers decide how to ask for it.
 *
 * - OpenAI's strict mode (`strict: true`, both endpoints) takes a subset of JSON Schema: every
 *   object closed with `additionalProperties: false` and every property listed in `required`, no
 *   `allOf`/`oneOf`/`not`/conditionals and a few more keywords. A schema outside it is sent with
 *   `strict: false`: the model is told the schema but not held to it while decoding, and the
 *   turn's own validation (and corrections) still hold the answer to it.
 * - Anthropic's JSON outputs (`output_config.format`) require every object closed with
 *   `additionalProperties: false` and take no numeric, string-length or array-count constraints.
 *   Those constraints are moved into the subschema's `description` (`anthropicSchema`, as
 *   Anthropic's SDK does in its `transformJSONSchema`) and the turn's own validation still holds
 *   the answer to them. Only a schema that cannot be expressed at all (an open object, a
 *   recursive `$ref`) is refused when a turn on `anthropic` starts.
 */

type Schema = Record<string, unknown>;

const isObject = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Keywords OpenAI's strict mode refuses. */
const NOT_STRICT = [
  'allOf', 'oneOf', 'not', 'if', 'then', 'else', 'dependentRequired', 'dependentSchemas', 'patternProperties',
  'unevaluatedProperties', 'unevaluatedItems', 'propertyNames', 'minProperties', 'maxProperties', 'uniqueItems', 'contains', 'minContains', 'maxContains',
];

/** Keywords Anthropic's JSON outputs refuse (`minItems` above 1 too), moved into `description` by {@link anthropicSchema}. */
const NOT_ANTHROPIC = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'minLength', 'maxLength', 'maxItems', 'minProperties', 'maxProperties'];
/** The string formats Anthropic's JSON outputs take (the SDK's `SUPPORTED_STRING_FORMATS`); others go into `description`. */
const ANTHROPIC_FORMATS = ['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'uri', 'ipv4', 'ipv6', 'uuid'];

/** Calls `visit` on every subschema with its path (`properties.a.items`), the root as `schema`. */
function walk(schema: unknown, visit: (node: Schema, path: string) => void, path = 'schema'): void {
  if (!isObject(schema)) return;
  visit(schema, path);
  if (isObject(schema.properties)) for (const [key, value] of Object.entries(schema.properties)) walk(value, visit, `${path}.properties.${key}`);
  if (schema.items !== undefined) walk(schema.items, visit, `${path}.items`);
  for (const list of ['anyOf', 'allOf', 'oneOf', 'prefixItems']) {
    if (Array.isArray(schema[list])) (schema[list] as unknown[]).forEach((branch, index) => walk(branch, visit, `${path}.${list}.${index}`));
  }
  for (const defs of ['$defs', 'definitions']) {
    if (isObject(schema[defs])) for (const [key, value] of Object.entries(schema[defs])) walk(value, visit, `${path}.${defs}.${key}`);
  }
}

const isObjectType = (node: Schema) => (Array.isArray(node.type) ? node.type.includes('object') : node.type === 'object');

/** Why OpenAI's strict mode would refuse `schema` (the first reason), or undefined when it fits. */
export function strictSchemaProblem(schema: unknown): string | undefined {
  const problems: string[] = [];
  walk(schema, (node, path) => {
    const refused = NOT_STRICT.find((keyword) => keyword in node);
    if (refused) problems.push(`${path}: '${refused}' is not permitted in strict mode`);
    if (!isObjectType(node)) return;
    if (node.additionalProperties !== false) problems.push(`${path}: additionalProperties must be false`);
    const keys = isObject(node.properties) ? Object.keys(node.properties) : [];
    const required = Array.isArray(node.required) ? node.required : [];
    const optional = keys.find((key) => !required.includes(key));
    if (optional !== undefined) problems.push(`${path}: property '${optional}' must be in required`);
  });
  return problems[0];
}

/**
 * Why Anthropic's JSON outputs cannot express `schema` (the first reason), or undefined when
 * {@link anthropicSchema} makes it a schema they take.
 */
export function anthropicSchemaProblem(schema: unknown): string | undefined {
  const problems: string[] = [];
  walk(schema, (node, path) => {
    if (node.$ref === '#') problems.push(`${path}: recursive schemas are not supported by Anthropic structured outputs`);
    if (isObjectType(node) && node.additionalProperties !== false) problems.push(`${path}: additionalProperties must be false for Anthropic structured outputs`);
  });
  return problems[0];
}

/** What Anthropic's JSON outputs refuse of one subschema and {@link anthropicSchema} moves into its description. */
function refusedByAnthropic(node: Schema): string[] {
  return Object.keys(node).filter((key) =>
    NOT_ANTHROPIC.includes(key)
    || (key === 'minItems' && node.minItems !== 0 && node.minItems !== 1)
    || (key === 'format' && !ANTHROPIC_FORMATS.includes(node.format as string)));
}

/**
 * The first constraint of `schema` that Anthropic's JSON outputs refuse, as a turn from before
 * `ANTHROPIC_CONSTRAINTS_PATCH` refused it; undefined when there is none.
 */
export function anthropicRefusedConstraint(schema: unknown): string | undefined {
  const problems: string[] = [];
  walk(schema, (node, path) => {
    const refused = NOT_ANTHROPIC.find((keyword) => keyword in node);
    if (refused) problems.push(`${path}: '${refused}' is not supported by Anthropic structured outputs`);
    if (typeof node.minItems === 'number' && node.minItems > 1) problems.push(`${path}: minItems above 1 is not supported by Anthropic structured outputs`);
  });
  return problems[0];
}

/** zod's `.int()` bounds: they tell the model nothing `type: 'integer'` does not. */
const SAFE_INTEGER_BOUND = (node: Schema, key: string) =>
  node.type === 'integer' && ((key === 'minimum' && node.minimum === Number.MIN_SAFE_INTEGER) || (key === 'maximum' && node.maximum === Number.MAX_SAFE_INTEGER));

/**
 * `schema` as Anthropic's JSON outputs take it: each keyword they refuse (numeric, length and
 * count constraints, unsupported string formats) moved into the subschema's `description` as
 * `{minimum: 1, maxLength: 20}`, and `oneOf` sent as `anyOf`, as Anthropic's SDK does. The
 * schema itself is not changed; the turn validates answers against it, whole.
 */
export function anthropicSchema(schema: unknown): unknown {
  if (!isObject(schema)) return schema;
  const sent: Schema = {};
  const moved: string[] = [];
  const refused = refusedByAnthropic(schema);
  for (const [key, value] of Object.entries(schema)) {
    if (refused.includes(key)) {
      if (!SAFE_INTEGER_BOUND(schema, key)) moved.push(`${key}: ${JSON.stringify(value)}`);
    } else if (key === 'properties' || key === '$defs' || key === 'definitions') {
      sent[key] = isObject(value) ? Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, anthropicSchema(sub)])) : value;
    } else if (key === 'items') {
      sent[key] = anthropicSchema(value);
    } else if (['anyOf', 'allOf', 'oneOf', 'prefixItems'].includes(key) && Array.isArray(value)) {
      sent[key === 'oneOf' && !('anyOf' in schema) ? 'anyOf' : key] = value.map(anthropicSchema);
    } else {
      sent[key] = value;
    }
  }
  if (moved.length > 0) {
    const described = `{${moved.join(', ')}}`;
    sent.description = typeof schema.description === 'string' && schema.description !== '' ? `${schema.description}\n\n${described}` : described;
  }
  return sent;
}
