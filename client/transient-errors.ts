/** Which failures of a read a later read may not meet (event-subscription.ts, closed-runs.ts). */
import { WorkflowNotFoundError } from '@temporalio/client';

/**
 * A query failure that a later query may not meet: the buffer for queries of a busy workflow was
 * full, no worker answered in time (a loaded worker replaying an evicted turn), the server was
 * briefly unavailable, or the server cancelled the query (`CANCELLED`, "context canceled": the
 * worker it was given to shut down; the reader's own abort is checked before this is asked).
 * The client wraps the gRPC error (`ServiceError`, its `cause`).
 */
export function isTransient(error: unknown): boolean {
  for (let current = error, depth = 0; current && depth < 5; current = (current as { cause?: unknown }).cause, depth++) {
    if (current instanceof WorkflowNotFoundError) return false;
    const code = (current as { code?: number }).code;
    // gRPC CANCELLED (1), RESOURCE_EXHAUSTED (8), DEADLINE_EXCEEDED (4), UNAVAILABLE (14).
    if (code === 1 || code === 8 || code === 4 || code === 14) return true;
    if (/query buffer is full|deadline|timed? ?out|unavailable|context canceled/i.test(current instanceof Error ? current.message : String(current))) return true;
  }
  return false;
}
