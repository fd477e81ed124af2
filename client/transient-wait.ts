/**
 * How turnpike's client sends what a person is waiting on (a decision, a vote, a delegation, a
 * client tool's result) and reads what decides who may send it, while Temporal is slow: a failure
 * that passes (transient-errors.ts) is tried again, waiting longer each time, until it has gone on
 * for the patience (`TurnpikeClientOptions.transientPatienceMs`, default {@link DEFAULT_PATIENCE_MS});
 * then it is raised as `TurnpikeUnavailableError`, never as "not found" or as Temporal's words.
 *
 * Each attempt gets the time left as its gRPC deadline, so an update that waits for a worker which
 * does not come (the SDK asks the server again and again until the update is accepted) ends with
 * the patience too. Any other failure is the caller's at once.
 */
import type { Client } from '@temporalio/client';
import { TurnpikeUnavailableError } from './errors.js';
import { isTransient } from './transient-errors.js';

/**
 * How long a message or a rights check waits out failures that pass. Below the minute after which
 * proxies and browsers commonly give up on a request, above a workflow task's default timeout
 * (10 s) and the server's own retries of a refused query (about 6 s).
 */
export const DEFAULT_PATIENCE_MS = 30_000;
/** The first wait after a failure, doubled each time up to {@link MAX_WAIT_MS}. */
const FIRST_WAIT_MS = 250;
const MAX_WAIT_MS = 2_000;
/** The shortest deadline an attempt is given: an attempt is never started with no time to answer. */
const MIN_ATTEMPT_MS = 1_000;
/** The wait suggested to the caller of a request that ran out of patience (`Retry-After`). */
export const RETRY_AFTER_MS = 5_000;

/**
 * `attempt()` until it settles, waiting out failures that pass for `patienceMs`; with `client`,
 * each attempt's gRPC calls have the time left as their deadline. `what` names the request in the
 * error (e.g. `the decision on approval a-1 of turn t-1`).
 */
export async function waitOutTransient<T>(what: string, patienceMs: number, attempt: () => Promise<T>, client?: Client): Promise<T> {
  const giveUpAt = Date.now() + patienceMs;
  let wait = FIRST_WAIT_MS;
  for (;;) {
    const deadline = Math.max(giveUpAt, Date.now() + MIN_ATTEMPT_MS);
    try {
      return await (client ? client.connection.withDeadline(deadline, attempt) : attempt());
    } catch (error) {
      if (!isTransient(error)) throw error;
      if (Date.now() + wait >= giveUpAt) {
        throw new TurnpikeUnavailableError(
          `Temporal could not take ${what} within ${Math.round(patienceMs / 1000)} s (${reasonOf(error)}); it was not refused, and may still reach the turn: sending it again is safe`,
          RETRY_AFTER_MS,
          { cause: error },
        );
      }
      await new Promise((resolve) => setTimeout(resolve, wait));
      wait = Math.min(MAX_WAIT_MS, wait * 2);
    }
  }
}

/** The innermost message of a failure, for the error's text. */
function reasonOf(error: unknown): string {
  let current = error as { cause?: unknown; message?: string } | undefined;
  for (let depth = 0; current?.cause && depth < 5; depth++) current = current.cause as typeof current;
  return (current?.message ?? String(error)).slice(0, 200);
}
