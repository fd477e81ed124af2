/**
 * Every reason turnpike refuses a request, by the `type` callers see: on the `ApplicationFailure`
 * a turn's update validator throws, on `TurnpikeRejectedError.type` in the client, in the HTTP
 * API's `{ error: { type } }` body (with `httpStatus`), and after `rejected` in the CLI's output
 * (exit code 3). The README's table is checked against this list by `test/unit/rejection-types.test.ts`.
 *
 * No imports and no side effects: workflow code, the client, the API, the CLI and the package's
 * entry points all import it.
 */

/** Who refuses a request with a rejection type. */
export type RejectedBy = 'turn' | 'conversation' | 'client' | 'api';

/** One rejection type: who raises it, the HTTP status the API answers it with, and what it means. */
export interface RejectionTypeInfo {
  readonly raisedBy: readonly RejectedBy[];
  readonly httpStatus: number;
  readonly description: string;
}

/** Every rejection type, in the order the README lists them. */
export const REJECTION_TYPES = {
  // ---- a turn's approveToolCall / submitToolResult (and a conversation's sendMessage) ----
  InvalidRequest: { raisedBy: ['turn', 'conversation', 'api'], httpStatus: 400, description: "The message is malformed (a field is missing or has the wrong type; a conversation's `sendMessage` also when a field is too long), or edits the input of a denial." },
  UndecodablePayload: { raisedBy: ['turn', 'conversation'], httpStatus: 400, description: 'The message could not be decoded (not valid JSON, an encoding the worker does not read, `binary/gzip` data that is not gzip, or no argument at all); nothing in it was read.' },
  PayloadTooLarge: { raisedBy: ['turn'], httpStatus: 409, description: 'A field is over its size limit (see "Message limits"): text over its length, an edited input or client tool output over 256 KiB as JSON or nested over 64 levels, or the whole message over 320 KiB. The refusal names the field and its size.' },
  UnknownApprovalId: { raisedBy: ['turn'], httpStatus: 404, description: 'The turn has no approval with this id.' },
  ApprovalAlreadyDecided: { raisedBy: ['turn', 'client'], httpStatus: 409, description: 'The approval was already approved or denied.' },
  ApprovalExpired: { raisedBy: ['turn', 'client'], httpStatus: 409, description: 'The approval expired (`approvalTimeout`) before this decision arrived.' },
  ApprovalCancelled: { raisedBy: ['turn', 'client'], httpStatus: 409, description: 'The turn was cancelled while the approval waited.' },
  ApprovalSuperseded: { raisedBy: ['turn', 'client'], httpStatus: 409, description: "A newer user message superseded the approval's turn." },
  ApproverNotAllowed: { raisedBy: ['turn'], httpStatus: 409, description: "The approver is not on the tool's `approvers` list (or none was given)." },
  AlreadyVoted: { raisedBy: ['turn'], httpStatus: 409, description: 'The approver already voted on this input of a call that needs several approvers; each person votes once (an edit of the input restarts the votes).' },
  RequesterMayNotDecide: { raisedBy: ['turn'], httpStatus: 409, description: "The approver started the turn, and the tool's approval excludes the requester (`excludeRequester`)." },
  InputHashMismatch: { raisedBy: ['turn'], httpStatus: 409, description: 'The decision names an `inputHash` other than that of the input awaiting approval.' },
  InvalidEditedInput: { raisedBy: ['turn'], httpStatus: 409, description: "An approver's edited `input` fails the tool's input schema." },
  UnknownToolCallId: { raisedBy: ['turn'], httpStatus: 404, description: 'The turn has no tool call with this id.' },
  ToolCallAlreadySettled: { raisedBy: ['turn', 'client'], httpStatus: 409, description: 'The tool call already has its result (submitted, expired, cancelled, superseded or cut off).' },
  NotAClientTool: { raisedBy: ['turn'], httpStatus: 409, description: 'The tool call is not a client tool call, so it cannot take a submitted result.' },
  InvalidToolOutput: { raisedBy: ['turn'], httpStatus: 409, description: "The submitted output fails the client tool's output schema." },
  // ---- the client ----
  TurnAlreadyEnded: { raisedBy: ['client'], httpStatus: 409, description: 'The turn has ended; nothing in it waits for a decision or result.' },
  Rejected: { raisedBy: ['client'], httpStatus: 409, description: 'A workflow rejected the message with a type this version of turnpike does not know; its message says why.' },
  // ---- the HTTP API ----
  Unauthorized: { raisedBy: ['api'], httpStatus: 401, description: 'No bearer token, or one the server does not know.' },
  InvalidDecisionToken: { raisedBy: ['api'], httpStatus: 403, description: 'The server signs decisions and the decision lacks the `decisionToken` and `inputHash` it was listed with, for this approver.' },
  InvalidCsrfToken: { raisedBy: ['api'], httpStatus: 403, description: 'A request authenticated by the sign-in cookie changes something and lacks the session\'s `x-csrf-token` header (a cross-site request, or a page that lost its token).' },
  NotFound: { raisedBy: ['api'], httpStatus: 404, description: 'No turn or conversation with this id.' },
  Unavailable: { raisedBy: ['client', 'api'], httpStatus: 503, description: 'Temporal could not take or answer the request in time for a reason that passes (no worker answered the turn, its workflow task is failing or timing out, the server refused for load); turnpike waited it out first (`transientPatienceMs`, 30 s). Nothing was refused: send it again after `Retry-After` (the client raises `TurnpikeUnavailableError`). A decision that reached the turn meanwhile is answered `ApprovalAlreadyDecided` on the retry.' },
  InternalError: { raisedBy: ['api'], httpStatus: 500, description: 'turnpike could not complete the request; the server logs why.' },
} as const satisfies Record<string, RejectionTypeInfo>;

/** The `type` of a rejection, e.g. `'ApprovalAlreadyDecided'`. */
export type RejectionType = keyof typeof REJECTION_TYPES;

/** True when `value` is one of turnpike's rejection types. */
export function isRejectionType(value: unknown): value is RejectionType {
  return typeof value === 'string' && Object.hasOwn(REJECTION_TYPES, value);
}

/**
 * The failure type of a turn whose *input* is invalid. Not a rejection: nothing can refuse a
 * workflow's start input, so the turn fails at once with this type (non-retryable).
 */
export const INVALID_TURN_INPUT = 'InvalidTurnInput';
