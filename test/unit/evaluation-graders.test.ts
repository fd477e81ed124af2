/**
 * Graders' pure parts (docs/evaluations.md, "Graders"): the totals per grader, the specs' checks,
 * a model grader's request and the verdict read from its answer.
 */
import { describe, expect, it } from 'vitest';
import { gradingRequest, modelGrade, VERDICT_OUTPUT } from '../../activities/evaluation/model-grader.js';
import { totalsOf } from '../../workflows/evaluation/compare-turns.js';
import type { EvaluationRow, GraderInput } from '../../workflows/evaluation/evaluation-types.js';
import { graderTotalsOf, gradersProblem, type ModelGraderSpec } from '../../workflows/evaluation/grader-types.js';
import type { AgentTurnResult, ModelStepResult } from '../../workflows/types/index.js';
import { checkedEvaluation } from '../../worker/evaluation-worker.js';

const row = (grades?: EvaluationRow['grades']): EvaluationRow => ({ turnId: 't', evaluationTurnId: 'e/0', ...(grades ? { grades } : {}) });
const spec: ModelGraderSpec = { name: 'judge', rubric: 'Same refund?', model: { provider: 'scripted', model: 'demo' }, passScore: 0.7 };
const answer = (text: string): ModelStepResult => ({ message: { role: 'assistant', content: [{ type: 'text', text }] }, finishReason: 'stop', usage: { inputTokens: 30, outputTokens: 12 } });
const turn = (text: string, extra: Partial<AgentTurnResult> = {}): AgentTurnResult => ({ status: 'completed', text, messages: [], steps: 1, usage: { inputTokens: 1, outputTokens: 1 }, toolCalls: [], ...extra });

describe('grader totals', () => {
  it('counts each grader: mean over scored turns, passes, fails, errors, tokens; none without grades', () => {
    const rows = [
      row([{ grader: 'a', score: 1, pass: true }, { grader: 'm', score: 0.25, pass: false, tokens: 10 }]),
      row([{ grader: 'a', error: 'the grader threw: x' }, { grader: 'm', error: 'the model answered no verdict: no reason', tokens: 7 }]),
      row([{ grader: 'a', score: 0, pass: true }, { grader: 'm', score: 0.5, pass: false, tokens: 9 }]),
      row(),
    ];
    expect(graderTotalsOf(rows)).toEqual({
      a: { graded: 2, meanScore: 0.5, passes: 2, fails: 0, errors: 1, tokens: 0 },
      m: { graded: 2, meanScore: 0.375, passes: 0, fails: 2, errors: 1, tokens: 26 },
    });
    expect(totalsOf(rows).graders).toEqual(graderTotalsOf(rows));
    expect(totalsOf([row(), row()])).not.toHaveProperty('graders');
    expect(graderTotalsOf([row([{ grader: 'x', error: 'no grader named "x"' }])])).toEqual({ x: { graded: 0, passes: 0, fails: 0, errors: 1, tokens: 0 } });
  });
});

describe('grader specs', () => {
  it('takes names and model graders, and names the field of a bad one', () => {
    expect(gradersProblem([])).toBeUndefined();
    expect(gradersProblem(['a.b-c_1', spec])).toBeUndefined();
    expect(gradersProblem([spec, { ...spec }])).toBe('graders[1]: the grader name "judge" is used twice');
    expect(gradersProblem([{ ...spec, rubric: '' }])).toBe('graders[0].rubric must be a non-empty string of at most 16,000 characters');
    expect(gradersProblem([{ ...spec, model: { provider: 'scripted', model: '' } }])).toBe('graders[0].model must be { provider, model }');
    expect(gradersProblem([null])).toBe("graders[0] must be a grader's name or { name, rubric, model, passScore? }");
    expect(gradersProblem(['x'.repeat(65)])).toMatch(/^graders\[0\]: a grader's name must match/);
  });
});

describe('model grader', () => {
  const input: GraderInput = {
    turnId: 't',
    evaluationTurnId: 'e/0',
    request: 'refund $250 on order 1001',
    original: turn('Refunded 250.', { toolCalls: [{ toolCallId: 'c1', toolName: 'issue_refund', input: { amount: 250 }, outcome: 'approved', output: {}, isError: false }] }),
    evaluated: turn('Refunded 200.', { output: { refund: 200 } }),
    row: row(),
  };

  it('asks with the rubric as system prompt, the request and both turns, for a typed verdict, with no tools', () => {
    const request = gradingRequest(spec, input);
    expect(request).toMatchObject({ model: spec.model, tools: [], output: VERDICT_OUTPUT });
    expect(request.system).toMatch(/\nRubric:\nSame refund\?$/);
    expect(request.messages).toEqual([
      {
        role: 'user',
        content: [
          '## The request',
          'refund $250 on order 1001',
          '',
          '## The original turn',
          'Status: completed\nFinal text: Refunded 250.\nTool calls:\n- issue_refund {"amount":250} → approved',
          '',
          '## The evaluated turn',
          'Status: completed\nFinal text: Refunded 200.\nTyped output: {"refund":200}\nTool calls:\n(none)',
        ].join('\n'),
      },
    ]);
  });

  it('reads the verdict: pass at or above passScore; not JSON, a score out of range or no reason is an error', () => {
    expect(modelGrade(spec, answer('{"score":0.7,"reason":"Close."}'))).toEqual({ grader: 'judge', score: 0.7, pass: true, comment: 'Close.', tokens: 42 });
    expect(modelGrade(spec, answer('{"score":0.69,"reason":"Lower."}'))).toMatchObject({ score: 0.69, pass: false });
    expect(modelGrade(spec, answer('maybe'))).toEqual({ grader: 'judge', error: 'the model answered no verdict: not JSON: "maybe"', tokens: 42 });
    expect(modelGrade(spec, answer('{"score":-1,"reason":"x"}')).error).toBe('the model answered no verdict: score -1 is not a number from 0 to 1');
    expect(modelGrade(spec, answer('{"score":1}')).error).toBe('the model answered no verdict: no reason');
    expect(modelGrade(spec, answer(`{"score":1,"reason":"${'x'.repeat(500)}"}`)).comment).toHaveLength(160);
  });
});

describe("the evaluation worker's graders", () => {
  it('takes functions by name and refuses a bad name or a value that is not a function before anything polls', () => {
    const sameText = () => ({ score: 1 });
    expect(checkedEvaluation({ graders: { sameText } }, 'q', []).graders).toEqual({ sameText });
    expect(checkedEvaluation({}, 'q', []).graders).toEqual({});
    expect(() => checkedEvaluation({ graders: { 'same text': sameText } }, 'q', [])).toThrow(/Invalid evaluation\.graders: a grader's name must match/);
    expect(() => checkedEvaluation({ graders: { judge: 'rubric' as never } }, 'q', [])).toThrow('Invalid evaluation.graders.judge: expected a function, got string');
    expect(() => checkedEvaluation({ graders: [sameText] as never }, 'q', [])).toThrow(/expected an object/);
  });
});
