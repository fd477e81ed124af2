/**
 * The turn's call ledger and the checks every decision and client result must pass, without a
 * Temporal server: a parked call is put in the ledger by hand, then messages are checked against it.
 */
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { acceptedDecision, acceptedDelegation, acceptedResult, checkDecision, checkResult, SchemaCache } from '../../workflows/calls/call-checks.js';
import { CallLedger, type CallEntry, type SettledReason } from '../../workflows/calls/call-ledger.js';
import { inputHash } from '../../workflows/messages/input-hash.js';
import { MAX_PAYLOAD_BYTES } from '../../workflows/messages/message-schemas.js';
import type { RejectionType } from '../../workflows/messages/rejection-types.js';
import type { PendingToolCall, ToolSpec } from '../../workflows/types/index.js';

const guarded: ToolSpec = {
  name: 'guarded_action',
  description: 'x',
  kind: 'server',
  approval: 'always',
  approvers: ['alice', 'bob'],
  inputSchema: { type: 'object', properties: { target: { type: 'string' }, count: { type: 'integer', minimum: 1 } }, required: ['target', 'count'] },
};
const pickColour: ToolSpec = {
  name: 'pick_colour',
  description: 'x',
  kind: 'client',
  approval: 'never',
  inputSchema: { type: 'object', properties: {} },
  outputSchema: { type: 'object', properties: { colour: { enum: ['red', 'blue'] } }, required: ['colour'] },
};

function view(kind: PendingToolCall['kind'], toolCallId: string, toolName: string, input: unknown, approvalId?: string): PendingToolCall {
  return { kind, ...(approvalId ? { approvalId } : {}), toolCallId, toolName, input, inputHash: inputHash(input), requestedAt: '2026-11-23T00:00:00.000Z', expiresAt: '2026-11-24T00:00:00.000Z' };
}

/** A ledger with a parked approval (apr_1 for call_1), a parked client call (call_2) and a server call that ran (call_3). */
function parkedTurn() {
  const ledger = new CallLedger();
  const approval = ledger.add({ type: 'tool-call', toolCallId: 'call_1', toolName: 'guarded_action', input: { target: 'prod', count: 2 } }, 'server', { target: 'prod', count: 2 });
  ledger.park(approval, view('approval', 'call_1', 'guarded_action', { target: 'prod', count: 2 }, 'apr_1'), guarded);
  const client = ledger.add({ type: 'tool-call', toolCallId: 'call_2', toolName: 'pick_colour', input: {} }, 'client', {});
  ledger.park(client, view('client-tool', 'call_2', 'pick_colour', {}), pickColour);
  const server = ledger.add({ type: 'tool-call', toolCallId: 'call_3', toolName: 'record_action', input: { action: 'x' } }, 'server', { action: 'x' });
  server.settlement = { outcome: 'executed', output: { done: 'x' }, isError: false };
  return { ledger, approval, client, server, schemas: new SchemaCache() };
}

function rejectionOf(check: () => unknown): { type: RejectionType; message: string } {
  try {
    check();
  } catch (error) {
    expect(error).toBeInstanceOf(ApplicationFailure);
    const failure = error as ApplicationFailure;
    expect(failure.nonRetryable).toBe(true);
    return { type: failure.type as RejectionType, message: failure.message };
  }
  throw new Error('the check passed');
}

describe('checkDecision', () => {
  it('returns the checked decision and the call it decides', () => {
    const { ledger, approval, schemas } = parkedTurn();
    const checked = checkDecision(ledger, { approvalId: 'apr_1', approved: true, approver: 'alice', inputHash: inputHash({ count: 2, target: 'prod' }) }, schemas);
    expect(checked.entry).toBe(approval);
    expect(checked.request).toEqual({ approvalId: 'apr_1', approved: true, approver: 'alice', inputHash: inputHash({ target: 'prod', count: 2 }) });
  });

  it.each([
    ['a malformed message', { approvalId: 'apr_1', approved: 'yes' }, 'InvalidRequest', /approved: .*boolean/],
    ['an unknown approval', { approvalId: 'apr_nope', approved: true, approver: 'alice' }, 'UnknownApprovalId', /^Unknown approvalId \(8 characters\): this turn has no approval with this id$/],
    ['a tool call id given as an approval id', { approvalId: 'call_1', approved: true, approver: 'alice' }, 'UnknownApprovalId', /^Unknown approvalId \(6 characters\)/],
    ['an approver outside the allow-list', { approvalId: 'apr_1', approved: true, approver: 'mallory' }, 'ApproverNotAllowed', /^The approver \(7 characters\) may not decide "guarded_action"; allowed: alice, bob$/],
    ['no approver for a tool with an allow-list', { approvalId: 'apr_1', approved: true }, 'ApproverNotAllowed', /^A decision without an approver may not decide/],
    ['another input than the one shown', { approvalId: 'apr_1', approved: true, approver: 'bob', inputHash: 'sha256:00' }, 'InputHashMismatch', /does not match/],
    ['an edited input with a denial', { approvalId: 'apr_1', approved: false, approver: 'bob', input: { target: 'x', count: 1 } }, 'InvalidRequest', /only makes sense with approved: true/],
    ['an edited input failing the schema', { approvalId: 'apr_1', approved: true, approver: 'bob', input: { target: 'x', count: 0 } }, 'InvalidEditedInput', /fails its schema/],
    ['an oversized edited input', { approvalId: 'apr_1', approved: true, approver: 'bob', input: { target: 'x'.repeat(MAX_PAYLOAD_BYTES), count: 1 } }, 'PayloadTooLarge', /^approveToolCall\.input is larger than 262144 bytes as JSON$/],
  ])('rejects %s', (_name, request, type, message) => {
    const { ledger, schemas } = parkedTurn();
    const rejected = rejectionOf(() => checkDecision(ledger, request, schemas));
    expect(rejected.type).toBe(type);
    expect(rejected.message).toMatch(message);
  });

  it('rejects a second decision, whether the first was applied or is still on its way', () => {
    const { ledger, schemas } = parkedTurn();
    ledger.applyDecision(checkDecision(ledger, { approvalId: 'apr_1', approved: true, approver: 'alice' }, schemas), '2026-11-23T01:00:00.000Z');
    // Still parked: the turn has not woken up yet.
    expect(rejectionOf(() => checkDecision(ledger, { approvalId: 'apr_1', approved: false, approver: 'bob' }, schemas)).type).toBe('ApprovalAlreadyDecided');
    ledger.unpark(ledger.byApprovalId('apr_1')!);
    expect(rejectionOf(() => checkDecision(ledger, { approvalId: 'apr_1', approved: false, approver: 'bob' }, schemas)).type).toBe('ApprovalAlreadyDecided');
  });

  it.each([
    ['expired', 'ApprovalExpired', /expired before this decision arrived/],
    ['cancelled', 'ApprovalCancelled', /belongs to a cancelled turn/],
    ['superseded', 'ApprovalSuperseded', /superseded by a newer user message/],
  ] as const)('says why an approval that was %s cannot be decided', (reason: SettledReason, type, message) => {
    const { ledger, approval, schemas } = parkedTurn();
    ledger.unpark(approval);
    ledger.settle(approval, reason);
    const rejected = rejectionOf(() => checkDecision(ledger, { approvalId: 'apr_1', approved: true, approver: 'alice' }, schemas));
    expect(rejected.type).toBe(type);
    expect(rejected.message).toMatch(message);
  });

  it('says an approval was superseded when the supersede arrived before the turn woke up', () => {
    const { ledger, schemas } = parkedTurn();
    ledger.supersedeParked();
    expect(rejectionOf(() => checkDecision(ledger, { approvalId: 'apr_1', approved: true, approver: 'alice' }, schemas)).type).toBe('ApprovalSuperseded');
  });
});

describe('checkResult', () => {
  it('returns the checked result and the call it answers; an error result skips the output schema', () => {
    const { ledger, client, schemas } = parkedTurn();
    expect(checkResult(ledger, { toolCallId: 'call_2', output: { colour: 'red' } }, schemas)).toEqual({ entry: client, request: { toolCallId: 'call_2', output: { colour: 'red' } } });
    expect(checkResult(ledger, { toolCallId: 'call_2', output: 'the browser closed', isError: true }, schemas).request.isError).toBe(true);
  });

  it.each([
    ['a malformed message', { output: {} }, 'InvalidRequest', /toolCallId/],
    ['an unknown call', { toolCallId: 'call_nope', output: {} }, 'UnknownToolCallId', /^Unknown toolCallId \(9 characters\): this turn has no tool call with this id$/],
    ['a server call that ran', { toolCallId: 'call_3', output: { done: 'forged' } }, 'NotAClientTool', /not a client tool call/],
    ['a call awaiting approval', { toolCallId: 'call_1', output: {} }, 'NotAClientTool', /not a client tool call/],
    ['output failing the output schema', { toolCallId: 'call_2', output: { colour: 'purple' } }, 'InvalidToolOutput', /fails its output schema/],
    ['oversized output', { toolCallId: 'call_2', output: { colour: 'x'.repeat(MAX_PAYLOAD_BYTES) } }, 'PayloadTooLarge', /^submitToolResult\.output is larger than 262144 bytes as JSON$/],
  ])('rejects %s', (_name, request, type, message) => {
    const { ledger, schemas } = parkedTurn();
    const rejected = rejectionOf(() => checkResult(ledger, request, schemas));
    expect(rejected.type).toBe(type);
    expect(rejected.message).toMatch(message);
  });

  it('rejects a second result, and says how the call was settled', () => {
    const { ledger, client, schemas } = parkedTurn();
    ledger.applyResult(checkResult(ledger, { toolCallId: 'call_2', output: { colour: 'red' } }, schemas), '2026-11-23T01:00:00.000Z');
    expect(rejectionOf(() => checkResult(ledger, { toolCallId: 'call_2', output: { colour: 'blue' } }, schemas))).toMatchObject({ type: 'ToolCallAlreadySettled', message: expect.stringContaining('(submitted)') });
    ledger.unpark(client);
    expect(rejectionOf(() => checkResult(ledger, { toolCallId: 'call_2', output: { colour: 'blue' } }, schemas)).type).toBe('ToolCallAlreadySettled');
  });

  it('names a call the token limit cut off as settled, not unknown', () => {
    const ledger = new CallLedger();
    ledger.settle(ledger.add({ type: 'tool-call', toolCallId: 'call_9', toolName: 'pick_colour', input: '{"opt' }, 'client'), 'cut-off');
    expect(rejectionOf(() => checkResult(ledger, { toolCallId: 'call_9', output: { colour: 'red' } }, new SchemaCache()))).toMatchObject({ type: 'ToolCallAlreadySettled', message: expect.stringContaining('(cut-off)') });
  });
});

describe('the call ledger', () => {
  it('lists parked calls still waiting, and the tools of every parked call for the search attribute', () => {
    const { ledger, schemas } = parkedTurn();
    expect(ledger.pending().map((call) => call.toolCallId)).toEqual(['call_1', 'call_2']);
    ledger.applyDecision(checkDecision(ledger, { approvalId: 'apr_1', approved: true, approver: 'alice' }, schemas), '2026-11-23T01:00:00.000Z');
    // Decided but not yet woken up: no longer pending, still parked.
    expect(ledger.pending().map((call) => call.toolCallId)).toEqual(['call_2']);
    expect(ledger.parkedToolNames()).toEqual(['guarded_action', 'pick_colour']);
    ledger.unparkAll();
    expect(ledger.hasParked()).toBe(false);
    expect(ledger.parkedToolNames()).toEqual([]);
  });

  it('applies a decision as the resolution of the parked call, which stays decided if later cancelled', () => {
    const { ledger, approval, schemas } = parkedTurn();
    const applied = ledger.applyDecision(checkDecision(ledger, { approvalId: 'apr_1', approved: false, approver: 'bob', reason: 'no' }, schemas), '2026-11-23T01:00:00.000Z');
    expect(applied).toEqual({ approvalId: 'apr_1', toolCallId: 'call_1', approved: false, decidedAt: '2026-11-23T01:00:00.000Z' });
    expect(approval.resolution).toMatchObject({ kind: 'decision', request: { approved: false, reason: 'no' } });
    ledger.settle(approval, 'cancelled');
    expect(approval.settledReason).toBe('decided');
  });

  it('gives an accepted update its call without checking it again (validators do not run on replay)', () => {
    const { ledger, approval } = parkedTurn();
    const accepted = acceptedDecision(ledger, { approvalId: 'apr_1', approved: true, approver: 'mallory' });
    expect(accepted.entry).toBe(approval);
  });

  it('refuses an accepted update whose call no longer waits, as its validator would have (Core can skip a validator)', () => {
    const { ledger, approval, client, schemas } = parkedTurn();
    // An update delivered without its validator: refused as a failed update, never a TypeError that fails the task.
    expect(rejectionOf(() => acceptedDecision(ledger, { approvalId: 'apr_unknown', approved: true })).type).toBe('UnknownApprovalId');
    expect(rejectionOf(() => acceptedDelegation(ledger, { approvalId: 'apr_unknown', approver: 'alice', to: { approvers: ['carol'] }, reason: 'away' })).type).toBe('UnknownApprovalId');
    expect(rejectionOf(() => acceptedResult(ledger, { toolCallId: 'call_unknown', output: {} })).type).toBe('UnknownToolCallId');
    expect(rejectionOf(() => acceptedResult(ledger, { toolCallId: 'call_1', output: {} })).type).toBe('NotAClientTool');
    ledger.applyDecision(checkDecision(ledger, { approvalId: 'apr_1', approved: true, approver: 'alice' }, schemas), '2026-11-23T01:00:00.000Z');
    expect(rejectionOf(() => acceptedDecision(ledger, { approvalId: 'apr_1', approved: true })).type).toBe('ApprovalAlreadyDecided');
    ledger.applyResult(checkResult(ledger, { toolCallId: 'call_2', output: { colour: 'red' } }, schemas), '2026-11-23T01:00:00.000Z');
    expect(rejectionOf(() => acceptedResult(ledger, { toolCallId: 'call_2', output: { colour: 'blue' } })).type).toBe('ToolCallAlreadySettled');
    // What still waits is given as before, whoever sent it: rights are the validator's alone.
    expect(approval.resolution).toBeDefined();
    expect(client.resolution).toBeDefined();
  });

  it('reports each call as a result part and a record, once it has a result', () => {
    const { ledger, server } = parkedTurn();
    expect(ledger.resultPart('call_3')).toEqual({ type: 'tool-result', toolCallId: 'call_3', toolName: 'record_action', output: { done: 'x' } });
    expect(ledger.record('call_3')).toEqual({ toolCallId: 'call_3', toolName: 'record_action', input: { action: 'x' }, outcome: 'executed', output: { done: 'x' }, isError: false });
    expect(() => ledger.record('call_1')).toThrow(/no result yet/);
    expect(server.settlement?.outcome).toBe('executed');
  });

  it('keeps supersede from overriding a decision that already arrived', () => {
    const { ledger, approval, client, schemas } = parkedTurn();
    ledger.applyDecision(checkDecision(ledger, { approvalId: 'apr_1', approved: true, approver: 'alice' }, schemas), '2026-11-23T01:00:00.000Z');
    ledger.supersedeParked();
    expect(approval.resolution?.kind).toBe('decision');
    expect((client as CallEntry).resolution?.kind).toBe('superseded');
  });
});
