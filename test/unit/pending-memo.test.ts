import { describe, expect, it } from 'vitest';
import { PENDING_MEMO_DECISIONS_CAP, PENDING_MEMO_INPUT_CAP, pendingMemo, readPendingMemo } from '../../workflows/context/pending-memo.js';
import type { DecisionRecord, PendingToolCall } from '../../workflows/types/index.js';

const call = (input: unknown, toolCallId = 'call_1'): PendingToolCall => ({
  kind: 'approval',
  approvalId: `apr_${toolCallId}`,
  toolCallId,
  toolName: 'issue_refund',
  input,
  inputHash: 'sha256:abc',
  requestedAt: '2026-11-23T10:00:00.000Z',
  expiresAt: '2026-11-24T10:00:00.000Z',
  reason: 'over the automatic limit',
  approvers: ['alice'],
  approverGroups: ['finance'],
});

describe('pendingMemo', () => {
  it('carries every field of a parked call, its input too while it is small', () => {
    const small = call({ amount: 250 });
    expect(pendingMemo([small])).toEqual({ v: 1, calls: [small], decisions: [] });
  });

  it('leaves out an input over the cap and says so, keeping the rest', () => {
    const exactlyCap = { text: 'x'.repeat(PENDING_MEMO_INPUT_CAP - '{"text":""}'.length) };
    expect(JSON.stringify(exactlyCap)).toHaveLength(PENDING_MEMO_INPUT_CAP);
    const large = { text: `${exactlyCap.text}y` };
    const memo = pendingMemo([call(exactlyCap, 'call_1'), call(large, 'call_2')]);
    expect(memo.calls[0]).toEqual(call(exactlyCap, 'call_1'));
    const { input: _input, ...rest } = call(large, 'call_2');
    expect(memo.calls[1]).toEqual({ ...rest, inputOmitted: true });
    expect('input' in memo.calls[1]).toBe(false);
  });
});

describe('pendingMemo decisions', () => {
  const decision = (reason: string): DecisionRecord => ({
    approvalId: 'apr_1',
    toolCallId: 'call_1',
    toolName: 'issue_refund',
    outcome: 'denied',
    approved: false,
    automatic: false,
    approver: 'bob',
    reason,
    decidedAt: '2026-11-23T10:00:00.000Z',
    inputHash: 'sha256:abc',
  });

  it('carries the decisions so far while they fit, and says when they do not', () => {
    expect(pendingMemo([], [decision('no')]).decisions).toEqual([decision('no')]);
    const large = pendingMemo([], [decision('x'.repeat(PENDING_MEMO_DECISIONS_CAP))]);
    expect(large.decisions).toBeUndefined();
    expect(large.decisionsOmitted).toBe(true);
    expect(readPendingMemo({ v: 1, calls: [], decisions: 'all' })).toBeUndefined();
  });
});

describe('readPendingMemo', () => {
  it('reads back what pendingMemo wrote, through JSON', () => {
    const memo = pendingMemo([call({ amount: 1 }), call('x'.repeat(PENDING_MEMO_INPUT_CAP + 1), 'call_2')]);
    expect(readPendingMemo(JSON.parse(JSON.stringify(memo)))).toEqual(memo);
  });

  it('reads a parked question from an MCP server, with its message and requested schema', () => {
    const question: PendingToolCall = {
      kind: 'elicitation',
      elicitationId: 'eli_1',
      toolCallId: 'call_3',
      toolName: 'everything__trigger-elicitation-request',
      input: {},
      inputHash: 'sha256:def',
      requestedAt: '2026-11-23T10:00:00.000Z',
      expiresAt: '2026-11-24T10:00:00.000Z',
      message: 'Your name?',
      requestedSchema: { type: 'object', properties: { name: { type: 'string' } } },
    };
    const memo = pendingMemo([call({ amount: 1 }), question]);
    expect(readPendingMemo(JSON.parse(JSON.stringify(memo)))).toEqual(memo);
  });

  it('refuses what it does not know, so the listing falls back to turnState', () => {
    expect(readPendingMemo(undefined)).toBeUndefined();
    expect(readPendingMemo('calls')).toBeUndefined();
    expect(readPendingMemo({ v: 2, calls: [] })).toBeUndefined();
    expect(readPendingMemo({ v: 1 })).toBeUndefined();
    expect(readPendingMemo({ v: 1, calls: [{ ...call(1), kind: 'other' }] })).toBeUndefined();
    expect(readPendingMemo({ v: 1, calls: [{ ...call(1), expiresAt: 5 }] })).toBeUndefined();
    expect(readPendingMemo({ v: 1, calls: [null] })).toBeUndefined();
    expect(readPendingMemo({ v: 1, calls: [] })).toEqual({ v: 1, calls: [] });
  });
});
