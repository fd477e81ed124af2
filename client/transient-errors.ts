/** Which failures of a read or a message a later attempt may not meet (event-subscription.ts, closed-runs.ts, transient-wait.ts). */
import { WorkflowNotFoundError } from '@temporalio/client';

/**
 * The server's `FAILED_PRECONDITION` refusals that pass: the turn's workflow task failed or timed
 * out three times or more (a loaded worker; temporalio/temporal v1.29, history's queryworkflow
 * and updateworkflow APIs, `WorkflowNotReady`), an update waited for a task that failed, or no
 * worker polled the task queue lately (matching: a worker restarting, or starved of CPU).
 */
const PASSING_PRECONDITIONS = /workflow task in failed state|unexpected workflow task failure|no poller seen/i;

/**
 * A failure that a later attempt may not meet: the buffer for queries of a busy workflow was
 * full, no worker answered in time (a loaded worker replaying an evicted turn), the server was
 * briefly unavailable or aborted an update it held (`UNAVAILABLE`, "workflow update was
 * aborted"), the server cancelled the query (`CANCELLED`, "context canceled": the worker it was
 * given to shut down; the reader's own abort is checked before this is asked), or one of
 * {@link PASSING_PRECONDITIONS}. The client wraps the gRPC error (`ServiceError`,
 * `WorkflowUpdateRPCTimeoutOrCancelledError`, its `cause`).
 */
export function isTransient(error: unknown): boolean {
  for (let current = error, depth = 0; current && depth < 5; current = (current as { cause?: unknown }).cause, depth++) {
    if (current instanceof WorkflowNotFoundError) return false;
    const code = (current as { code?: number }).code;
    const message = current instanceof Error ? current.message : String(current);
    // gRPC CANCELLED (1), RESOURCE_EXHAUSTED (8), DEADLINE_EXCEEDED (4), UNAVAILABLE (14).
    if (code === 1 || code === 8 || code === 4 || code === 14) return true;
    // gRPC FAILED_PRECONDITION (9), for the reasons that pass only.
    if (code === 9 && PASSING_PRECONDITIONS.test(`${message} ${(current as { details?: string }).details ?? ''}`)) return true;
    if (/query buffer is full|deadline|timed? ?out|unavailable|context canceled/i.test(message) || PASSING_PRECONDITIONS.test(message)) return true;
  }
  return false;
}
