/**
 * Typed final answers (docs/typed-output.md). A turn given `output` asks every model step for
 * JSON matching `output.schema` (natively: OpenAI `response_format` / `text.format`, Anthropic
 * `output_config.format`), with its tools still offered. The model's answer without a tool call
 * is then parsed and validated here, deterministically, with the zod schema built from the JSON
 * Schema (the same `SchemaCache` as the tools' inputs):
 *
 * - valid: the turn completes, and the parsed object is the result's `output`;
 * - invalid (not JSON, or not matching): while corrections remain (`maxRetries`, default 2), the
 *   answer stays in the history, a user message tells the model exactly what was wrong, and the
 *   turn takes another step (it counts against `maxSteps`); after the last, the turn ends
 *   `invalid-output` with the answer's text and `outputErrors`.
 *
 * Either way the history stays valid input for the next turn: the answer is an assistant message,
 * each correction a user message after it. Corrections used are carried across a hand-over.
 *
 * Behind `patched(TYPED_OUTPUT_PATCH)`, asked once as the turn starts, and only by a turn given
 * `output`: a turn without one sends exactly the commands it sent before.
 */
import * as wf from '@temporalio/workflow';
import { anthropicRefusedConstraint, anthropicSchemaProblem } from './output-schema.js';
import { INVALID_TURN_INPUT } from '../messages/rejection-types.js';
import type { TurnContext } from '../context/turn-context.js';
import type { AgentTurnResult, TurnOutputSpec } from '../types/index.js';
import { speaksAnthropic } from '../types/provider-families.js';

export const TYPED_OUTPUT_PATCH = '0.2.0-typed-output';
/**
 * A turn on `anthropic` whose schema has constraints Anthropic's JSON outputs refuse (`minimum`,
 * `maxLength`, …) runs, asking with them moved into descriptions; before, it failed at start.
 * Asked only by such a turn, once, as it starts.
 */
export const ANTHROPIC_CONSTRAINTS_PATCH = '0.3.0-anthropic-output-constraints';
export const DEFAULT_OUTPUT_NAME = 'final_answer';
export const DEFAULT_OUTPUT_RETRIES = 2;
const MAX_OUTPUT_RETRIES = 10;
const OUTPUT_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
/** Errors told to the model and kept in the result, at most. */
const MAX_ERRORS = 20;
const MAX_ERROR_CHARS = 500;

/** What the turn does with an answer that called no tool. */
export type AnswerVerdict =
  | { kind: 'completed'; output: unknown }
  | { kind: 'corrected' }
  | { kind: 'invalid-output'; errors: string[] };

/** Why `output` is not a valid `TurnOutputSpec` for a turn on `provider`, naming the field; undefined when it is. */
export function outputSpecProblem(output: unknown, provider: string): string | undefined {
  if (typeof output !== 'object' || output === null || Array.isArray(output)) return 'output must be { schema, name?, maxRetries? }';
  const { schema, name, maxRetries } = output as Partial<TurnOutputSpec>;
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema) || schema.type !== 'object') {
    return "output.schema must be a JSON Schema of an object (type: 'object')";
  }
  if (name !== undefined && (typeof name !== 'string' || !OUTPUT_NAME.test(name))) return 'output.name must match ^[a-zA-Z0-9_-]{1,64}$';
  if (maxRetries !== undefined && (!Number.isInteger(maxRetries) || maxRetries < 0 || maxRetries > MAX_OUTPUT_RETRIES)) {
    return `output.maxRetries must be an integer from 0 to ${MAX_OUTPUT_RETRIES}`;
  }
  if (speaksAnthropic(provider)) {
    const problem = anthropicSchemaProblem(schema);
    if (problem) return `output.${problem}`;
  }
  return undefined;
}

/**
 * The turn's typed output, or undefined when it asked for none (or was recorded before typed
 * outputs existed, and runs on as it did). Fails the turn (`InvalidTurnInput`) on an invalid spec.
 */
export function typedOutputOf(turn: TurnContext): TypedOutput | undefined {
  const { output } = turn.input;
  if (output === undefined || !wf.patched(TYPED_OUTPUT_PATCH)) return undefined;
  const problem = outputSpecProblem(output, turn.input.model.provider) ?? refusedBeforeConstraintsPatch(output, turn.input.model.provider);
  if (problem) throw wf.ApplicationFailure.nonRetryable(`agentTurn input.${problem}`, INVALID_TURN_INPUT);
  return new TypedOutput(turn, { schema: output.schema, name: output.name ?? DEFAULT_OUTPUT_NAME, maxRetries: output.maxRetries ?? DEFAULT_OUTPUT_RETRIES });
}

/** What a turn from before {@link ANTHROPIC_CONSTRAINTS_PATCH} refused of a valid spec (and still refuses as it replays). */
function refusedBeforeConstraintsPatch(output: TurnOutputSpec, provider: string): string | undefined {
  if (!speaksAnthropic(provider)) return undefined;
  const refused = anthropicRefusedConstraint(output.schema);
  return refused !== undefined && !wf.patched(ANTHROPIC_CONSTRAINTS_PATCH) ? `output.${refused}` : undefined;
}

export class TypedOutput {
  constructor(
    private readonly turn: TurnContext,
    /** The spec with its defaults, as every model step is sent it. */
    readonly spec: Required<TurnOutputSpec>,
  ) {}

  /**
   * Judges the answer `text` of the step just appended: valid, corrected (a user message naming
   * the errors is appended, and the loop takes another step), or invalid for good (no correction
   * left, or `mayCorrect` false: a superseded turn takes no further step).
   */
  judge(text: string, mayCorrect = true): AnswerVerdict {
    const checked = this.check(text);
    if (checked.valid) return { kind: 'completed', output: checked.value };
    if (!mayCorrect || this.turn.outputRetries >= this.spec.maxRetries) return { kind: 'invalid-output', errors: checked.errors };
    this.turn.outputRetries++;
    this.turn.appended.push({ role: 'user', content: correction(this.spec.name, checked.errors) });
    return { kind: 'corrected' };
  }

  /** Parses `text` as JSON and validates it against the schema. */
  check(text: string): { valid: true; value: unknown } | { valid: false; errors: string[] } {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      return { valid: false, errors: [clip(`the answer is not JSON: ${error instanceof Error ? error.message : String(error)}`)] };
    }
    const checked = this.turn.schemas.schemaFor(`output:${this.spec.name}`, this.spec.schema).safeParse(value);
    if (checked.success) return { valid: true, value };
    const errors = checked.error.issues.slice(0, MAX_ERRORS).map((issue) => {
      const path = issue.path.map(String).join('.') || '(root)';
      const keys = issue.code === 'unrecognized_keys' ? ` (${issue.keys.join(', ')})` : '';
      return clip(`${path}: ${issue.message}${keys}`);
    });
    return { valid: false, errors };
  }
}

/** The result's (and `turn-finished`'s) typed fields for a verdict that ends the turn. */
export function outputFields(verdict: AnswerVerdict): Pick<AgentTurnResult, 'output' | 'outputErrors'> {
  if (verdict.kind === 'completed') return { output: verdict.output };
  if (verdict.kind === 'invalid-output') return { outputErrors: verdict.errors };
  return {};
}

/** The user message that sends an invalid answer back. */
function correction(name: string, errors: string[]): string {
  return [
    `Your final answer is not valid "${name}" output:`,
    ...errors.map((error) => `- ${error}`),
    `Answer again with only a JSON object that matches the "${name}" JSON Schema.`,
  ].join('\n');
}

function clip(text: string): string {
  return text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS)}…` : text;
}
