/**
 * How a workflow refuses a message: thrown by an update validator it rejects the update with
 * `type` for the caller; thrown while handling a signal it is logged and the signal ignored.
 * Never retryable: the same message would be refused again.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { RejectionType } from './rejection-types.js';

/** The failure that refuses a message as `type` (one of `REJECTION_TYPES`). */
export function rejection(type: RejectionType, message: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(message, type);
}
