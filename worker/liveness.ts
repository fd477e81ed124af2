/**
 * Whether a worker process is alive, for `GET /healthz` (worker/run-worker.ts): a process whose
 * Worker has left `RUNNING` and has not stopped within its shutdown grace time (plus a margin) is
 * stuck, and a liveness probe should replace it.
 *
 * A Worker leaves `RUNNING` for two reasons: a shutdown was asked for (a signal, `shutdown()`),
 * or Core shut it down after a fatal error. Either way `run()` settles once its in-flight tasks
 * finish, within `shutdownGraceTimeMs`, and the process exits. A Worker can instead stay in
 * `DRAINING` with `run()` never settling (docs/sdk-reports/legacy-query-update-no-validator/);
 * such a process polls nothing and would otherwise answer "alive" for ever.
 */
import type { State } from '@temporalio/worker';

/** Past the shutdown grace time, how long a Worker may take to stop before it counts as stuck. */
export const STOP_MARGIN_MS = 30_000;

/** The states in which a Worker works or is about to: the process is alive. */
const WORKING: ReadonlySet<State> = new Set(['INITIALIZED', 'RUNNING']);

export interface Liveness {
  alive: boolean;
  state: State;
  /** Since when (ms since the epoch) the Worker has been out of `RUNNING`, once it has left it. */
  stoppingSince?: number;
}

/**
 * Follows a Worker's state, reading it only when asked: `check()` is the liveness at that moment.
 * `FAILED` is never alive; a Worker out of `RUNNING` for longer than `graceMs + STOP_MARGIN_MS`
 * is not alive either.
 */
export function livenessOf(readState: () => State, graceMs: number, now: () => number = Date.now): { check(): Liveness } {
  let stoppingSince: number | undefined;
  return {
    check() {
      const state = readState();
      if (WORKING.has(state)) {
        stoppingSince = undefined;
        return { alive: true, state };
      }
      stoppingSince ??= now();
      const alive = state !== 'FAILED' && now() - stoppingSince <= graceMs + STOP_MARGIN_MS;
      return { alive, state, stoppingSince };
    },
  };
}
