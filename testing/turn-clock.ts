/**
 * How the test kit waits on the time-skipping server, where one clock serves every workflow.
 *
 * The SDK's time-skipping client unlocks the clock for as long as it awaits a result: the server
 * then jumps to the next timer of any workflow whenever nothing runs, so awaiting one turn expired
 * every call parked in the other turns of the environment, and went on to timers years ahead.
 * `awaitTurnResult` instead waits on an ordinary client (the clock stays still) and moves the
 * clock only to the earliest expiry among the calls the awaited turn, or one of its child turns,
 * has parked: as far as that turn needs to end, no further.
 *
 * `waitForParked` waits for a turn that may not exist yet (the child turn of the application's
 * own workflow, started moments later), for a parked call, until the turn ends or the wall-clock
 * timeout passes.
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { TurnpikeNotFoundError } from '../client/errors.js';
import type { TurnpikeClient } from '../client/turnpike-client.js';
import { isTurnEnded } from '../workflows/types/turn-statuses.js';
import type { AgentTurnResult, PendingToolCall, TurnState } from '../workflows/types/index.js';

export const POLL_MS = 20;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The turn's state, or undefined while no turn of that id exists. */
async function stateIfStarted(turnpike: TurnpikeClient, turnId: string): Promise<TurnState | undefined> {
  try {
    return await turnpike.turnState(turnId);
  } catch (error) {
    if (error instanceof TurnpikeNotFoundError) return undefined;
    throw error;
  }
}

/** The earliest `expiresAt` (ms) of the calls parked in the turn and its running child turns. */
async function earliestExpiry(turnpike: TurnpikeClient, turnId: string, depth = 0): Promise<number | undefined> {
  const state = await stateIfStarted(turnpike, turnId).catch(() => undefined);
  if (!state || isTurnEnded(state.status)) return undefined;
  const times = state.pending.map((call) => Date.parse(call.expiresAt)).filter((time) => Number.isFinite(time));
  if (depth < 8) for (const child of state.children ?? []) {
    const time = await earliestExpiry(turnpike, child.turnId, depth + 1);
    if (time !== undefined) times.push(time);
  }
  return times.length > 0 ? Math.min(...times) : undefined;
}

/**
 * The turn's result, awaited on `turnpike` (an ordinary client: the clock does not run while it
 * waits); while the turn has calls parked, the server's clock is moved to the first one's expiry.
 */
export async function awaitTurnResult(server: TestWorkflowEnvironment, turnpike: TurnpikeClient, turnId: string): Promise<AgentTurnResult> {
  const result = turnpike.turn(turnId).result();
  let settled = false;
  const done = result.then(
    () => (settled = true),
    () => (settled = true),
  );
  while (!settled) {
    const expiry = await earliestExpiry(turnpike, turnId);
    if (expiry !== undefined) {
      const now = await server.currentTimeMs();
      // A second past the expiry: the turn's timer fires, and nothing later than it.
      if (expiry + 1_000 > now) {
        await server.sleep(expiry + 1_000 - now);
        continue;
      }
    }
    await Promise.race([done, pause(POLL_MS)]);
  }
  return result;
}

/**
 * The first call parked in the turn that `accept` takes, polling its state until it has one:
 * while the turn does not exist yet too. Fails when the turn ends first, or after `timeoutMs`.
 */
export async function waitForParked(turnpike: TurnpikeClient, turnId: string, accept: (call: PendingToolCall) => boolean, timeoutMs: number): Promise<PendingToolCall> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const state = await stateIfStarted(turnpike, turnId);
    const call = state?.pending.find(accept);
    if (call) return call;
    if (state && isTurnEnded(state.status)) throw new Error(`nextParked: turn ${turnId} ended (${state.status}) with no call parked`);
    if (Date.now() > deadline) {
      throw new Error(
        state
          ? `nextParked: turn ${turnId} parked no call in ${timeoutMs} ms (status ${state.status}, step ${state.step})`
          : `nextParked: no turn ${turnId} started in ${timeoutMs} ms (is the id right? a child turn's is '<parent workflow id>/<tool call id or name>')`,
      );
    }
    await pause(POLL_MS);
  }
}
