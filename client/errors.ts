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
