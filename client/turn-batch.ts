/**
 * Starting many turns at once (`TurnpikeClient.startTurns`): a tenant's batch, a few starts in
 * flight at a time. The server starts workflows at the rate its CPU and database allow; starts
 * beyond that rate only wait inside it, and every other caller's requests (another tenant's
 * interactive turn, a decision) wait behind them. In the fleet bench (a 2-core machine, the dev
 * server), 500 starts took 4–6 s with 50 in flight, 5–8 s with 10 and 6–8 s with 4, and the
 * slowest interactive turn started meanwhile took 2.6–4.5 s, 1.1–1.5 s and 0.8–1.1 s
 * (docs/tenants-and-capacity.md, "Starting a batch of turns"). A batch's turns then wait for model
 * capacity anyway; a server with room for more starts at once can be given a higher `concurrency`.
 */
import type { WorkflowHandle } from '@temporalio/client';
import type { agentTurn } from '../workflows/registered-workflows.js';
import { TurnpikeRejectedError } from './errors.js';
import { startTurn, type StartTurnInput, type StartTurnOptions, type WorkflowStarter } from './turns.js';

/** Starts in flight at once unless `startTurns` is told otherwise. */
export const DEFAULT_START_CONCURRENCY = 4;
const MAX_START_CONCURRENCY = 100;

/** One turn of a batch: what `startTurn` takes. */
export interface BatchTurn {
  input: StartTurnInput;
  options: StartTurnOptions;
}

export interface StartTurnsOptions {
  /** Starts in flight at once, 1 to 100 (default 4). */
  concurrency?: number;
}

/** What became of one turn of a batch, in the batch's order: its handle, or why it was not started. */
export type BatchTurnStart =
  | { turnId: string; handle: WorkflowHandle<typeof agentTurn>; error?: undefined }
  | { turnId: string; handle?: undefined; error: Error };

function refuse(message: string): never {
  throw new TurnpikeRejectedError(`Invalid startTurns: ${message}; no turn was started`, 'InvalidRequest');
}

/** The batch's shape, checked before any turn starts; each turn's own input is checked by `startTurn`. */
function checkedBatch(turns: readonly BatchTurn[], options: StartTurnsOptions): number {
  if (!Array.isArray(turns)) refuse('expected an array of { input, options }');
  const concurrency = options?.concurrency ?? DEFAULT_START_CONCURRENCY;
  if (!(Number.isInteger(concurrency) && concurrency >= 1 && concurrency <= MAX_START_CONCURRENCY)) {
    refuse(`concurrency must be a whole number from 1 to ${MAX_START_CONCURRENCY}, not ${String(concurrency)}`);
  }
  const seen = new Set<string>();
  turns.forEach((turn, index) => {
    const turnId: unknown = turn?.options?.turnId;
    if (typeof turnId !== 'string' || turnId === '') refuse(`turns[${index}].options.turnId must be a non-empty string`);
    if (seen.has(turnId)) refuse(`turns[${index}] repeats the turnId ${JSON.stringify(turnId)}`);
    seen.add(turnId);
  });
  return concurrency;
}

/**
 * Starts every turn of `turns`, at most `concurrency` at a time, and answers for each in order.
 * A turn refused (bad input, a tenant the namespace cannot record, the server's refusal) is
 * answered with its error and does not stop the others; a batch whose shape is wrong (not an
 * array, a missing or repeated turnId, a concurrency out of range) starts nothing.
 */
export async function startTurns(starter: WorkflowStarter, turns: readonly BatchTurn[], options: StartTurnsOptions = {}): Promise<BatchTurnStart[]> {
  const concurrency = checkedBatch(turns, options);
  const results = new Array<BatchTurnStart>(turns.length);
  let next = 0;
  const lane = async () => {
    while (next < turns.length) {
      const index = next++;
      const { input, options: turnOptions } = turns[index]!;
      try {
        results[index] = { turnId: turnOptions.turnId, handle: await startTurn(starter, input, turnOptions) };
      } catch (error) {
        results[index] = { turnId: turnOptions.turnId, error: error instanceof Error ? error : new Error(String(error)) };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, turns.length) }, lane));
  return results;
}
