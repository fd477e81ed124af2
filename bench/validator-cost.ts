/**
 * What turnpike's update validators cost per message: the checks `approveToolCall` and
 * `submitToolResult` run before a decision or a client result is accepted (workflows/calls/call-checks.ts),
 * timed on a turn's real call ledger in this process (the same V8 as the workflow thread). A
 * validator runs once per update, in the workflow task that takes it, and never on replay.
 *
 * The cases:
 * - `approve`: a decision with approver and input hash, checked against the parked call;
 * - `editedInputFirst`: a decision that edits the input, on a turn that has not built the tool's
 *   input schema yet (the first edited decision after the turn was loaded into the cache);
 * - `editedInput`: the same once that schema is built;
 * - `rejected`: a decision with a stale input hash, refused (`InputHashMismatch`);
 * - `submitResult`: a client tool's result checked against its output schema.
 */
import { performance } from 'node:perf_hooks';
import { checkDecision, checkResult, SchemaCache } from '../workflows/calls/call-checks.js';
import { CallLedger } from '../workflows/calls/call-ledger.js';
import { inputHash } from '../workflows/messages/input-hash.js';
import type { PendingToolCall, ToolSpec } from '../workflows/types/index.js';
import { summarize, type Summary } from './stats.js';

export interface ValidatorCost {
  /** Microseconds per check; each sample is the mean over one round of calls. */
  approve: Summary;
  editedInputFirst: Summary;
  editedInput: Summary;
  rejected: Summary;
  submitResult: Summary;
}

const ROUNDS = 30;
const CALLS_PER_ROUND = 500;

const refundInput = { orderId: 'ord_1234', amount: 120, currency: 'EUR', reason: 'damaged on arrival' };
const refund: ToolSpec = {
  name: 'issue_refund',
  description: 'Refund an order',
  kind: 'server',
  approval: 'always',
  approvers: ['alice', 'bob'],
  approverGroups: ['support-leads'],
  inputSchema: {
    type: 'object',
    properties: {
      orderId: { type: 'string', pattern: '^ord_[0-9]+$' },
      amount: { type: 'number', minimum: 0, maximum: 10_000 },
      currency: { type: 'string', enum: ['EUR', 'USD', 'GBP'] },
      reason: { type: 'string', maxLength: 500 },
    },
    required: ['orderId', 'amount', 'currency'],
    additionalProperties: false,
  },
};
const pickAddress: ToolSpec = {
  name: 'pick_address',
  description: 'The user picks a delivery address',
  kind: 'client',
  approval: 'never',
  inputSchema: { type: 'object', properties: {} },
  outputSchema: {
    type: 'object',
    properties: { street: { type: 'string' }, city: { type: 'string' }, postcode: { type: 'string' }, country: { type: 'string', minLength: 2, maxLength: 2 } },
    required: ['street', 'city', 'country'],
  },
};

function pending(kind: PendingToolCall['kind'], toolCallId: string, toolName: string, input: unknown, approvalId?: string): PendingToolCall {
  return { kind, ...(approvalId ? { approvalId } : {}), toolCallId, toolName, input, inputHash: inputHash(input), requestedAt: '2026-11-23T00:00:00.000Z', expiresAt: '2026-11-24T00:00:00.000Z' };
}

/** A turn's ledger with a parked approval (`apr_1`) and a parked client call (`call_2`), as a turn builds it. */
function parkedLedger(): CallLedger {
  const ledger = new CallLedger();
  const approval = ledger.add({ type: 'tool-call', toolCallId: 'call_1', toolName: refund.name, input: refundInput }, 'server', refundInput);
  ledger.park(approval, pending('approval', 'call_1', refund.name, refundInput, 'apr_1'), refund);
  const client = ledger.add({ type: 'tool-call', toolCallId: 'call_2', toolName: pickAddress.name, input: {} }, 'client', {});
  ledger.park(client, pending('client-tool', 'call_2', pickAddress.name, {}), pickAddress);
  return ledger;
}

/** Mean microseconds per call over `ROUNDS` rounds of `calls` calls (after one warm-up round). */
function time(calls: number, check: () => void): Summary {
  const samples: number[] = [];
  for (let round = 0; round <= ROUNDS; round++) {
    const started = performance.now();
    for (let i = 0; i < calls; i++) check();
    if (round > 0) samples.push(((performance.now() - started) * 1000) / calls);
  }
  return summarize(samples);
}

export function measureValidatorCost(): ValidatorCost {
  const ledger = parkedLedger();
  const schemas = new SchemaCache();
  const approve = { approvalId: 'apr_1', approved: true, approver: 'alice', inputHash: inputHash(refundInput) };
  const edited = { approvalId: 'apr_1', approved: true, approver: 'bob', input: { ...refundInput, amount: 80 } };
  const stale = { ...approve, inputHash: inputHash({ ...refundInput, amount: 1 }) };
  const result = { toolCallId: 'call_2', output: { street: '1 Main St', city: 'Lyon', postcode: '69001', country: 'FR' } };
  const expectRejected = () => {
    try {
      checkDecision(ledger, stale, schemas);
    } catch {
      return;
    }
    throw new Error('a decision with a stale input hash was accepted');
  };
  return {
    approve: time(CALLS_PER_ROUND, () => void checkDecision(ledger, approve, schemas)),
    // A fresh schema cache per call: the turn's first edited decision builds the tool's schema.
    editedInputFirst: time(CALLS_PER_ROUND / 10, () => void checkDecision(ledger, edited, new SchemaCache())),
    editedInput: time(CALLS_PER_ROUND, () => void checkDecision(ledger, edited, schemas)),
    rejected: time(CALLS_PER_ROUND, expectRejected),
    submitResult: time(CALLS_PER_ROUND, () => void checkResult(ledger, result, schemas)),
  };
}
