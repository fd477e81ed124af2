/**
 * The comparison of an evaluation turn with its original (workflows/evaluation/compare-turns.ts)
 * and how an evaluation turn's calls are answered (activities/evaluation/recorded-calls.ts).
 */
import { describe, expect, it } from 'vitest';
import { changedFields, compareTurns, pairToolCalls, totalsOf } from '../../workflows/evaluation/compare-turns.js';
import { evaluationDisposition, evaluationToolResult, recordedCallsOf } from '../../activities/evaluation/recorded-calls.js';
import { inputHash } from '../../workflows/messages/input-hash.js';
import type { AgentTurnResult, ToolCallRecord } from '../../workflows/types/index.js';

const call = (toolName: string, input: unknown, extra: Partial<ToolCallRecord> = {}): ToolCallRecord => ({
  toolCallId: `c-${Math.random()}`,
  toolName,
  input,
  outcome: 'executed',
  output: { ok: true },
  isError: false,
  ...extra,
});

const result = (toolCalls: ToolCallRecord[], extra: Partial<AgentTurnResult> = {}): AgentTurnResult => ({
  status: 'completed',
  text: 'done',
  messages: [],
  steps: 1,
  usage: { inputTokens: 10, outputTokens: 5 },
  toolCalls,
  ...extra,
});

describe('pairToolCalls', () => {
  it('pairs same input first, then same tool in order; the rest are new or missing', () => {
    const original = [call('a', { x: 1 }), call('a', { x: 2 }), call('b', {}), call('c', {})];
    const evaluated = [call('a', { x: 2 }), call('a', { x: 9 }), call('a', { x: 10 }), call('d', {})];
    expect(pairToolCalls(original, evaluated)).toEqual({ same: 1, differentInput: 1, new: 2, missing: 2 });
  });

  it('matches inputs whatever the order of their keys', () => {
    expect(pairToolCalls([call('a', { x: 1, y: 2 })], [call('a', { y: 2, x: 1 })])).toEqual({ same: 1, differentInput: 0, new: 0, missing: 0 });
  });
});

describe('changedFields', () => {
  it('lists the top-level fields that differ, added and removed ones included', () => {
    expect(changedFields({ a: 1, b: { c: 2 }, d: 3 }, { a: 1, b: { c: 3 }, e: 4 })).toEqual(['b', 'd', 'e']);
    expect(changedFields({ a: 1 }, { a: 1 })).toEqual([]);
    expect(changedFields({ a: 1 }, undefined)).toEqual(['(whole answer)']);
  });
});

describe('compareTurns', () => {
  it('counts replayed, not run, would-ask, denials and ran-safe calls, and each turn spend', () => {
    const original = result([call('read', { id: 1 }), call('pay', { n: 1 }, { outcome: 'approved', approval: { approvalId: 'x', approved: true, automatic: false, decidedAt: '' } })], {
      decisions: [{ approvalId: 'x', toolCallId: 't', toolName: 'pay', outcome: 'approved', approved: true, automatic: false, decidedAt: '', inputHash: inputHash({ n: 1 }) }],
      usage: { inputTokens: 100, outputTokens: 20, costUsd: 0.5 },
    });
    const evaluated = result(
      [
        call('read', { id: 1 }),
        call('read', { id: 2 }),
        call('pay', { n: 2 }, { outcome: 'denied', isError: true, output: 'denied', approval: { approvalId: 'y', approved: false, automatic: true, reason: 'evaluation: would ask a person', decidedAt: '' } }),
        call('pay', { n: 3 }, { outcome: 'denied', isError: true, output: 'denied', approval: { approvalId: 'z', approved: false, automatic: true, reason: 'no', decidedAt: '' } }),
        call('send', { to: 'x' }, { outcome: 'error', isError: true, output: 'not run in evaluation: "send" has no recorded result' }),
      ],
      { text: 'other', usage: { inputTokens: 50, outputTokens: 10 } },
    );
    const row = compareTurns({ turnId: 'o', result: original, latencyMs: 900 }, { turnId: 'e', result: evaluated, latencyMs: 300 });
    expect(row).toEqual({
      turnId: 'o',
      evaluationTurnId: 'e',
      status: { original: 'completed', evaluated: 'completed' },
      textChanged: true,
      toolCalls: { same: 1, differentInput: 1, new: 3, missing: 0 },
      replayed: 1,
      ranSafe: 1,
      notRun: 1,
      wouldAsk: 1,
      denials: 1,
      original: { approvalsAsked: 1, denials: 0, usage: { tokens: 120, costUsd: 0.5 }, latencyMs: 900 },
      evaluated: { usage: { tokens: 60 }, latencyMs: 300 },
    });
  });

  it('reports typed output as invalid when the evaluated turn ended with invalid output', () => {
    const row = compareTurns({ turnId: 'o', result: result([], { output: { a: 1 } }) }, { turnId: 'e', result: result([], { status: 'invalid-output', outputErrors: ['bad'] }) });
    expect(row.output).toEqual({ valid: false, changedFields: ['(whole answer)'] });
    expect(totalsOf([row, { turnId: 'p', evaluationTurnId: 'q', error: 'gone' }])).toMatchObject({ turns: 2, errors: 1, outputInvalid: 1, evaluated: { usage: { tokens: 15 } } });
  });
});

describe('answering an evaluation turn from the records', () => {
  const recorded = recordedCallsOf(
    result([call('read', { id: 1 }, { output: { stock: 3 } }), call('pay', { n: 1 }, { outcome: 'denied', isError: true, output: 'denied' })], {
      decisions: [
        { approvalId: 'x', toolCallId: 't', toolName: 'pay', outcome: 'denied', approved: false, automatic: false, reason: 'too much', decidedAt: '', inputHash: inputHash({ n: 1 }) },
        { approvalId: 'y', toolCallId: 'u', toolName: 'pay', outcome: 'approved', approved: true, automatic: false, decidedAt: '', inputHash: inputHash({ n: 2 }), editedInput: { n: 1.5 } },
      ],
    }),
  );

  it('decides a call that would park from its recorded decision, or denies it as would-ask', () => {
    expect(evaluationDisposition({ kind: 'needs-approval', input: { n: 1 } }, 'pay', recorded)).toEqual({ kind: 'decided', input: { n: 1 }, approved: false, reason: 'too much' });
    expect(evaluationDisposition({ kind: 'needs-approval', input: { n: 2 } }, 'pay', recorded)).toEqual({ kind: 'decided', input: { n: 1.5 }, approved: true });
    expect(evaluationDisposition({ kind: 'needs-approval', input: { n: 3 } }, 'pay', recorded)).toEqual({ kind: 'decided', input: { n: 3 }, approved: false, reason: 'evaluation: would ask a person' });
    expect(evaluationDisposition({ kind: 'client', input: { q: 1 } }, 'ask', recorded)).toEqual({ kind: 'execute', input: { q: 1 } });
    expect(evaluationDisposition({ kind: 'execute', input: {} }, 'read', recorded)).toEqual({ kind: 'execute', input: {} });
  });

  it('answers a recorded call from its record and runs an unmatched one only when safe', async () => {
    let runs = 0;
    const run = async () => {
      runs++;
      return { output: 'ran', isError: false };
    };
    expect(await evaluationToolResult({ toolName: 'read', input: { id: 1 } }, recorded, new Set(['read']), run)).toEqual({ output: { stock: 3 }, isError: false });
    expect(runs).toBe(0);
    expect(await evaluationToolResult({ toolName: 'read', input: { id: 2 } }, recorded, new Set(['read']), run)).toEqual({ output: 'ran', isError: false });
    expect(runs).toBe(1);
    const refused = await evaluationToolResult({ toolName: 'send', input: {} }, recorded, new Set(['read']), run);
    expect(refused.isError).toBe(true);
    expect(refused.output).toMatch(/^not run in evaluation/);
    expect(runs).toBe(1);
  });
});
