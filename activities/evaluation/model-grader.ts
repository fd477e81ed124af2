/**
 * A model grader (docs/evaluations.md, "Graders"): the rubric as the system prompt, the original
 * turn and the evaluated one as a user message, and a typed answer asked for natively (as a turn's
 * `output` is: OpenAI `response_format`, Anthropic `output_config.format`), `{ score, reason }`.
 * The verdict is checked here: not JSON, a score outside 0..1 or no reason is an error grade.
 */
import type { GraderInput } from '../../workflows/evaluation/evaluation-types.js';
import type { EvaluationGrade, ModelGraderSpec } from '../../workflows/evaluation/grader-types.js';
import { DEFAULT_PASS_SCORE, GRADE_COMMENT_CHARS } from '../../workflows/evaluation/grader-types.js';
import type { ModelStepRequest, ModelStepResult, TextPart, ToolCallRecord, TurnOutputSpec } from '../../workflows/types/index.js';

/** The typed answer a model grader is asked for. No `minimum`/`maximum`: Anthropic's JSON outputs refuse them; the range is checked here. */
export const VERDICT_OUTPUT: Required<TurnOutputSpec> = {
  name: 'grade',
  maxRetries: 0,
  schema: {
    type: 'object',
    properties: {
      score: { type: 'number', description: 'From 0 (fails the rubric) to 1 (meets it fully).' },
      reason: { type: 'string', description: 'Why, in one or two sentences.' },
    },
    required: ['score', 'reason'],
    additionalProperties: false,
  },
};

/** Each part of the prompt is cut to this many characters. */
const PART_CHARS = 8_000;

const clip = (text: string, chars = PART_CHARS) => (text.length > chars ? `${text.slice(0, chars)}… (cut)` : text);

function callsOf(calls: readonly ToolCallRecord[]): string {
  if (calls.length === 0) return '(none)';
  return calls.map((call) => `- ${call.toolName} ${JSON.stringify(call.input)} → ${call.outcome}${call.isError ? ' (error)' : ''}`).join('\n');
}

function answerOf(result: GraderInput['original']): string {
  const output = result.output !== undefined ? `\nTyped output: ${JSON.stringify(result.output)}` : '';
  return `Status: ${result.status}\nFinal text: ${clip(result.text)}${output}\nTool calls:\n${clip(callsOf(result.toolCalls))}`;
}

/** The model step that asks the grader's model for a verdict: no tools, the whole transcript inline. */
export function gradingRequest(spec: ModelGraderSpec, input: GraderInput): ModelStepRequest {
  const system = [
    'You grade one turn of an AI agent that was run again with a change, against the rubric below.',
    'Compare the evaluated turn with the original. Answer with only a JSON object {"score": <number from 0 to 1>, "reason": <one or two sentences>}.',
    '',
    'Rubric:',
    spec.rubric,
  ].join('\n');
  const text = [
    ...(input.request !== undefined ? ['## The request', clip(input.request), ''] : []),
    '## The original turn',
    answerOf(input.original),
    '',
    '## The evaluated turn',
    answerOf(input.evaluated),
  ].join('\n');
  return { model: spec.model, system, messages: [{ role: 'user', content: text }], tools: [], output: VERDICT_OUTPUT };
}

/** The grade a model step's answer gives: its verdict, or why it is none. */
export function modelGrade(spec: ModelGraderSpec, result: ModelStepResult): EvaluationGrade {
  const tokens = result.usage.inputTokens + result.usage.outputTokens;
  const text = result.message.content
    .filter((part): part is TextPart => part.type === 'text')
    .map((part) => part.text)
    .join('');
  const refuse = (why: string): EvaluationGrade => ({ grader: spec.name, error: `the model answered no verdict: ${why}`.slice(0, GRADE_COMMENT_CHARS), tokens });
  let verdict: unknown;
  try {
    verdict = JSON.parse(text);
  } catch {
    return refuse(`not JSON: ${JSON.stringify(text.slice(0, 60))}`);
  }
  const { score, reason } = (verdict ?? {}) as { score?: unknown; reason?: unknown };
  if (typeof score !== 'number' || !(score >= 0 && score <= 1)) return refuse(`score ${JSON.stringify(score)} is not a number from 0 to 1`);
  if (typeof reason !== 'string') return refuse('no reason');
  return { grader: spec.name, score, pass: score >= (spec.passScore ?? DEFAULT_PASS_SCORE), comment: reason.slice(0, GRADE_COMMENT_CHARS), tokens };
}
