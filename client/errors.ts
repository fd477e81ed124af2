/**
 * The errors turnpike's client raises. Dependency-free, so `turnpike` (the root entry) can
 * export them to code that never loads the Temporal client.
 */
import type { RejectionType } from '../workflows/messages/rejection-types.js';

/**
 * A turn or conversation rejected a message; `type` says why (e.g. `ApprovalAlreadyDecided`),
 * one of `REJECTION_TYPES` (workflows/messages/rejection-types.ts).
 */
export class TurnpikeRejectedError extends Error {
  override name = 'TurnpikeRejectedError';
  constructor(
    message: string,
    readonly type: RejectionType,
  ) {
    super(message);
  }
}

/** No turn or conversation with that id. */
export class TurnpikeNotFoundError extends Error {
  override name = 'TurnpikeNotFoundError';
}

/**
 * Temporal could not take or answer the request in time, for a reason that passes: no worker
 * answered the turn's query or update (a loaded, restarting or stalled worker), the turn's workflow
 * task is failing or timing out, the server refused for load (`RESOURCE_EXHAUSTED`) or was
 * unavailable. turnpike waited it out for `TurnpikeClientOptions.transientPatienceMs` first. The
 * request may be sent again: a decision, vote, delegation or result is idempotent (one that did
 * reach the turn meanwhile is answered as decided, `ApprovalAlreadyDecided`, on the retry). The
 * HTTP API answers it 503 with `Retry-After`.
 */
export class TurnpikeUnavailableError extends Error {
  override name = 'TurnpikeUnavailableError';
  /** Always true: the same request, sent again later, may succeed. */
  readonly retryable = true;
  constructor(
    message: string,
    /** A suggested wait before retrying, in milliseconds. */
    readonly retryAfterMs: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
