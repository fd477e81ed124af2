/**
 * Typed final answers on the client's side (docs/typed-output.md): a turn's `output` given as a
 * zod schema (converted to the JSON Schema the turn checks), the result's `output` read back as
 * the schema's type (parsed by zod here too), and the answer read as partial objects while the
 * model writes it.
 *
 * Partial objects come from the turn's `text-delta` events, parsed with `parsePartialJson` from
 * the `ai` package (an optional peer dependency, loaded on first use): only the step that
 * answers matters, so a step that calls tools, or an answer the turn sent back for correction,
 * starts the partial object over.
 */
import { z } from 'zod';
import { importOptional } from '../peers/optional-packages.js';
import { toJsonSchema } from '../activities/tools.js';
import type { EndedTurnStatus } from '../workflows/types/turn-statuses.js';
import type { TurnEventRecord } from '../workflows/types/turn-events.js';
import type { AgentTurnResult, JsonSchema, TurnOutputSpec } from '../workflows/types/index.js';

/** A typed answer as a client gives it: the schema as zod (typed) or as JSON Schema. */
export interface OutputOption<Schema extends z.ZodType = z.ZodType> {
  schema: Schema | JsonSchema;
  name?: string;
  maxRetries?: number;
}

/** The type a typed answer parses to: the zod schema's output type, `unknown` for JSON Schema. */
export type OutputOf<Option> = Option extends { schema: infer Schema } ? (Schema extends z.ZodType ? z.output<Schema> : unknown) : unknown;

/** A turn's answer is not the typed output it asked for (`typedOutput`). */
export class TurnpikeOutputError extends Error {
  constructor(
    message: string,
    readonly status: EndedTurnStatus,
    /** The turn's `outputErrors`, or zod's issues when the client's schema refused the output. */
    readonly errors: string[],
  ) {
    super(message);
    this.name = 'TurnpikeOutputError';
  }
}

const isZod = (schema: unknown): schema is z.ZodType => schema instanceof z.ZodType;

/** The `TurnOutputSpec` a turn is sent: a zod schema as its JSON Schema (`toJsonSchema`). */
export function toOutputSpec(option: OutputOption): TurnOutputSpec {
  const { schema, ...rest } = option;
  return { ...rest, schema: isZod(schema) ? toJsonSchema(schema) : schema };
}

/**
 * A turn's validated answer as the schema's type, parsed by zod (so transforms and defaults
 * apply). Throws {@link TurnpikeOutputError} when the turn did not complete with an output.
 */
export function typedOutput<Schema extends z.ZodType>(result: AgentTurnResult, schema: Schema): z.output<Schema> {
  if (result.status !== 'completed' || result.output === undefined) {
    const errors = result.outputErrors ?? [];
    throw new TurnpikeOutputError(`The turn ended ${result.status} without a typed answer${errors.length > 0 ? `: ${errors.join('; ')}` : ''}`, result.status, errors);
  }
  const parsed = schema.safeParse(result.output);
  if (!parsed.success) {
    const errors = parsed.error.issues.map((issue) => `${issue.path.map(String).join('.') || '(root)'}: ${issue.message}`);
    throw new TurnpikeOutputError(`The turn's answer does not match the client's schema: ${errors.join('; ')}`, result.status, errors);
  }
  return parsed.data;
}

/** Recursively partial: what a typed answer looks like while the model is still writing it. */
export type DeepPartial<T> = T extends Array<infer Item> ? Array<DeepPartial<Item>> : T extends object ? { [Key in keyof T]?: DeepPartial<T[Key]> } : T;

/** One item of `outputStream`: the answer so far, then how the turn ended (with the validated answer). */
export type OutputStreamItem<T> =
  | { type: 'partial'; step: number; partial: DeepPartial<T> }
  | { type: 'finished'; status: EndedTurnStatus; output?: T; outputErrors?: string[] };

/**
 * The partial objects of a turn's answer, from its events: each time the answer's text grows
 * into a different object, then `finished` with the turn's validated `output` (parsed by `parse`).
 */
export async function* readOutputStream<T>(events: AsyncIterable<TurnEventRecord>, parse: (output: unknown) => T): AsyncGenerator<OutputStreamItem<T>, void, undefined> {
  const { parsePartialJson } = await importOptional('Reading a typed answer as partial objects (outputStream)', ['ai'], () => import('ai'));
  let step = 0;
  let attempt = 0;
  let text = '';
  let last = '';
  for await (const { event } of events) {
    switch (event.type) {
      case 'text-delta': {
        // A later step, or a retried attempt of this one, writes its answer from the start.
        if (event.step !== step || event.attempt !== attempt) [step, attempt, text, last] = [event.step, event.attempt, '', ''];
        text += event.text;
        const { value } = await parsePartialJson(text);
        const shown = JSON.stringify(value);
        if (typeof value === 'object' && value !== null && !Array.isArray(value) && shown !== last) {
          last = shown;
          yield { type: 'partial', step, partial: value as DeepPartial<T> };
        }
        break;
      }
      case 'step-retry':
        if (event.step === step) text = '';
        break;
      case 'turn-finished':
        yield {
          type: 'finished',
          status: event.status,
          ...(event.output !== undefined ? { output: parse(event.output) } : {}),
          ...(event.outputErrors ? { outputErrors: event.outputErrors } : {}),
        };
        return;
      default:
        break;
    }
  }
}
