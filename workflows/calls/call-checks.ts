/**
 * The checks a decision or a client result must pass before a turn applies it: pure functions of
 * the turn's ledger and the raw message, returning the checked request or throwing the typed
 * rejection the caller sees. The update validators and the signal handlers run them; the update
 * handlers do not (see `acceptedDecision`).
 *
 * Field sizes first (`field-limits.ts`), then the shape, then the ledger. A rejection never
 * quotes the message: it names a field (and its size), or the turn's own ids and tools.
 */
import { z } from 'zod';
import type { CallEntry, CallLedger, CheckedDecision, CheckedResult, SettledReason } from './call-ledger.js';
import { messageProblem } from '../messages/field-limits.js';
import { approveToolCallInputSchema, delegateApprovalInputSchema, describeShapeError, submitToolResultInputSchema } from '../messages/message-schemas.js';
import type { RejectionType } from '../messages/rejection-types.js';
import { rejection } from '../messages/rejection.js';
import type { DelegateApprovalInput, JsonSchema } from '../types/index.js';
import { checkVote, decisionRights } from './approval-votes.js';

function reject(type: RejectionType, message: string): never {
  throw rejection(type, message);
}

/** Tools' JSON Schemas as zod schemas, built once per schema: validators run on every message. */
export class SchemaCache {
  private readonly schemas = new Map<string, z.ZodType>();

  schemaFor(key: string, jsonSchema: JsonSchema): z.ZodType {
    let schema = this.schemas.get(key);
    if (!schema) {
      schema = z.fromJSONSchema(jsonSchema as Parameters<typeof z.fromJSONSchema>[0]);
      this.schemas.set(key, schema);
    }
    return schema;
  }
}

const APPROVAL_SETTLED: Partial<Record<SettledReason, [RejectionType, (approvalId: string) => string]>> = {
  decided: ['ApprovalAlreadyDecided', (id) => `Approval ${id} was already decided`],
  expired: ['ApprovalExpired', (id) => `Approval ${id} expired before this decision arrived`],
  cancelled: ['ApprovalCancelled', (id) => `Approval ${id} belongs to a cancelled turn`],
  superseded: ['ApprovalSuperseded', (id) => `Approval ${id} was superseded by a newer user message`],
};

/**
 * Whether an approver may decide a tool's calls: anyone when the tool names neither approvers nor
 * groups; otherwise a named approver, or a member of a named group.
 */
export function mayDecide(
  rights: { approvers?: readonly string[]; approverGroups?: readonly string[] },
  approver: { approver?: string; approverGroups?: readonly string[] },
): boolean {
  if (!rights.approvers && !rights.approverGroups) return true;
  if (approver.approver !== undefined && rights.approvers?.includes(approver.approver)) return true;
  return (approver.approverGroups ?? []).some((group) => rights.approverGroups?.includes(group));
}

/** Checks an `approveToolCall` message against the ledger; returns the decision to apply. */
export function checkDecision(ledger: CallLedger, raw: unknown, schemas: SchemaCache): CheckedDecision {
  const tooLarge = messageProblem('approveToolCall', raw);
  if (tooLarge) reject('PayloadTooLarge', tooLarge);
  const shape = approveToolCallInputSchema().safeParse(raw);
  if (!shape.success) reject('InvalidRequest', `Invalid approveToolCall: ${describeShapeError(shape.error)}`);
  const request = shape.data;
  const { entry, parked } = awaitingDecision(ledger, request);
  if (request.inputHash !== undefined && request.inputHash !== parked.view.inputHash) {
    reject('InputHashMismatch', `inputHash does not match the input awaiting approval ${request.approvalId}; reload and decide again`);
  }
  if (request.input !== undefined) {
    if (!request.approved) reject('InvalidRequest', 'An edited input only makes sense with approved: true');
    const checked = schemas.schemaFor(`input:${parked.spec.name}`, parked.spec.inputSchema).safeParse(request.input);
    if (!checked.success) {
      reject('InvalidEditedInput', `Edited input for "${parked.view.toolName}" fails its schema: ${describeShapeError(checked.error)}`);
    }
  }
  if (parked.view.progress) checkVote(parked.view.progress, request);
  return { entry, request };
}

/** Checks a `delegateApproval` message against the ledger: the delegator must be one who may decide the call. */
export function checkDelegation(ledger: CallLedger, raw: unknown): { entry: CallEntry; request: DelegateApprovalInput } {
  const tooLarge = messageProblem('delegateApproval', raw);
  if (tooLarge) reject('PayloadTooLarge', tooLarge);
  const shape = delegateApprovalInputSchema().safeParse(raw);
  if (!shape.success) reject('InvalidRequest', `Invalid delegateApproval: ${describeShapeError(shape.error)}`);
  const request = shape.data;
  if (request.approver === undefined) reject('ApproverNotAllowed', 'A delegation must name the approver who delegates');
  const { entry } = awaitingDecision(ledger, request);
  return { entry, request };
}

/** The parked approval `approvalId` names, while it still waits for a decision. */
function parkedApproval(ledger: CallLedger, approvalId: string): { entry: CallEntry; parked: NonNullable<CallEntry['parked']> } {
  const entry = ledger.byApprovalId(approvalId);
  // From here on the approval id is one the turn issued (found in its ledger), so quoting it quotes the turn.
  const parked = entry?.parked;
  if (!entry || !parked) {
    const settled = entry?.settledReason && APPROVAL_SETTLED[entry.settledReason];
    if (settled) reject(settled[0], settled[1](approvalId));
    reject('UnknownApprovalId', `Unknown approvalId (${approvalId.length} characters): this turn has no approval with this id`);
  }
  if (entry.resolution?.kind === 'superseded') reject('ApprovalSuperseded', `Approval ${approvalId} was superseded by a newer user message`);
  if (entry.resolution) reject('ApprovalAlreadyDecided', `Approval ${approvalId} was already decided`);
  return { entry, parked };
}

/** The parked approval a decision or delegation names, still waiting, and the sender allowed to decide it. */
function awaitingDecision(ledger: CallLedger, request: { approvalId: string; approver?: string; approverGroups?: string[] }) {
  const { entry, parked } = parkedApproval(ledger, request.approvalId);
  const rights = decisionRights(parked);
  if (!mayDecide(rights, request)) {
    const { approvers = [], approverGroups = [] } = rights;
    const allowed = [...approvers, ...approverGroups.map((group) => `group ${group}`)].join(', ');
    const who = request.approver !== undefined ? `The approver (${request.approver.length} characters)` : 'A decision without an approver';
    reject('ApproverNotAllowed', `${who} may not decide "${parked.view.toolName}"; allowed: ${allowed}`);
  }
  return { entry, parked };
}

/** The delegation an *accepted* `delegateApproval` update carries (see `acceptedDecision`). */
export function acceptedDelegation(ledger: CallLedger, raw: unknown): { entry: CallEntry; request: DelegateApprovalInput } {
  const request = delegateApprovalInputSchema().parse(raw);
  return { entry: parkedApproval(ledger, request.approvalId).entry, request };
}

/** The parked client tool call `toolCallId` names, while it still waits for its result. */
function parkedClientCall(ledger: CallLedger, toolCallId: string): { entry: CallEntry; parked: NonNullable<CallEntry['parked']> } {
  const entry = ledger.get(toolCallId);
  // A tool call id found in the ledger is the turn's own (one its model made), so quoting it quotes the turn.
  if (entry && entry.kind !== 'client') {
    reject('NotAClientTool', `Tool call ${toolCallId} is not a client tool call; it cannot take a submitted result`);
  }
  const parked = entry?.parked;
  if (!entry || !parked || entry.resolution) {
    const settled = entry?.settledReason ?? (entry?.resolution ? (entry.resolution.kind === 'superseded' ? 'superseded' : 'submitted') : undefined);
    if (settled) reject('ToolCallAlreadySettled', `Tool call ${toolCallId} is already settled (${settled})`);
    reject('UnknownToolCallId', `Unknown toolCallId (${toolCallId.length} characters): this turn has no tool call with this id`);
  }
  return { entry, parked };
}

/** Checks a `submitToolResult` message against the ledger; returns the result to apply. */
export function checkResult(ledger: CallLedger, raw: unknown, schemas: SchemaCache): CheckedResult {
  const tooLarge = messageProblem('submitToolResult', raw);
  if (tooLarge) reject('PayloadTooLarge', tooLarge);
  const shape = submitToolResultInputSchema().safeParse(raw);
  if (!shape.success) reject('InvalidRequest', `Invalid submitToolResult: ${describeShapeError(shape.error)}`);
  const request = shape.data;
  const { entry, parked } = parkedClientCall(ledger, request.toolCallId);
  const { outputSchema } = parked.spec;
  if (outputSchema && request.isError !== true) {
    const checked = schemas.schemaFor(`output:${parked.spec.name}`, outputSchema).safeParse(request.output);
    if (!checked.success) {
      reject('InvalidToolOutput', `Output for "${parked.view.toolName}" fails its output schema: ${describeShapeError(checked.error)}`);
    }
  }
  return { entry, request };
}

/**
 * The decision an *accepted* `approveToolCall` update carries, checked only for what every
 * version of its validator required: that its call is in the ledger and still waits.
 *
 * Temporal does not run validators on replay, so a handler that re-checked everything would,
 * after a stricter check shipped (a rule on rights, a schema), refuse on replay an update its
 * validator once accepted: a non-deterministic turn. That the call still waits is not such a
 * rule: the handler runs in the same activation as the validator, so in any history it held.
 * It is checked because Core can deliver a new update as if replaying, without its validator
 * (docs/versioning.md, "Update handlers check only that their call still waits"): such an update is then refused here, as a failed
 * update the caller reads like a rejected one, and the workflow task does not fail.
 */
export function acceptedDecision(ledger: CallLedger, raw: unknown): CheckedDecision {
  const request = approveToolCallInputSchema().parse(raw);
  return { entry: parkedApproval(ledger, request.approvalId).entry, request };
}

/** The result an *accepted* `submitToolResult` update carries, checked only for its call still waiting (see `acceptedDecision`). */
export function acceptedResult(ledger: CallLedger, raw: unknown): CheckedResult {
  const request = submitToolResultInputSchema().parse(raw);
  return { entry: parkedClientCall(ledger, request.toolCallId).entry, request };
}
