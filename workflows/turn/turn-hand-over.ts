/**
 * A long turn hands over to a new run of itself (continue-as-new) before its history reaches
 * Temporal's limits (51,200 events and 50 MB a run; warnings at 10,240 and 10 MB): at a step
 * boundary, once the run's history has reached the turn's `historyLimit` (8,000 events or 8 MB
 * by default). No call is parked at a step boundary, so no decision waits across a hand-over.
 *
 * The next run carries on with everything (`TurnCarryOver`): the step count, the messages the
 * turn appended, its tool calls (so a late decision is refused as before), its records,
 * decisions and usage, its tools, and its event stream, whose offsets go on where they were
 * (the last {@link CARRIED_EVENTS} events are kept for readers a little behind). The turn's id,
 * its queries, its updates and its result (`handle.result()` follows the runs) are unchanged.
 *
 * Behind `patched(TURN_HAND_OVER_PATCH)`: a turn recorded before it never handed over.
 */
import * as wf from '@temporalio/workflow';
import type { TurnContext } from '../context/turn-context.js';
import type { AgentTurnInput, TurnCarryOver } from '../types/index.js';

export const TURN_HAND_OVER_PATCH = '0.2.0-turn-hand-over';
export const DEFAULT_HISTORY_LIMIT = { events: 8_000, bytes: 8 * 1024 * 1024 } as const;
/** Stream events the next run keeps; older offsets are read from a reader's own memory (the client's shared feed). */
export const CARRIED_EVENTS = 2_000;
/**
 * Carried state, as JSON, at most this big: the next run's input is one payload (Temporal: 2 MB).
 * A turn whose state is bigger does not hand over, and goes on in the same run.
 */
const MAX_CARRIED_CHARS = 1_500_000;
/**
 * The smallest `historyLimit.bytes` a turn takes. Each run's history starts with its input, which
 * carries the turn's state (up to {@link MAX_CARRIED_CHARS} characters and the turn's messages):
 * under a smaller limit that input alone could reach it, and every new run would hand over again
 * before its first step, forever. 2 MiB leaves a run room for its steps whatever it carries.
 */
export const MIN_HISTORY_LIMIT_BYTES = 2 * 1024 * 1024;
/** The smallest `historyLimit.events`: a run starts with a few events, and a step adds a handful. */
export const MIN_HISTORY_LIMIT_EVENTS = 100;

/** Whether the run's history has reached the turn's limit. */
export function handOverDue(turn: TurnContext): boolean {
  const { historyLength, historySize } = wf.workflowInfo();
  const limit = { ...DEFAULT_HISTORY_LIMIT, ...turn.input.historyLimit };
  return historyLength >= limit.events || historySize >= limit.bytes;
}

/** The turn's state for its next run, or undefined (with a warning) when it is too big to carry. */
function carryOver(turn: TurnContext, lastText: string): TurnCarryOver | undefined {
  const carried: TurnCarryOver = {
    handOvers: (turn.input.carried?.handOvers ?? 0) + 1,
    step: turn.step,
    lastText,
    usage: turn.usage,
    appended: turn.appended,
    records: turn.records,
    decisions: turn.decisions,
    tools: { specs: [...turn.specs.values()], modelTools: turn.modelTools, toolsHash: turn.toolsHash!, ...(turn.toolsLeftOut.length > 0 ? { leftOut: turn.toolsLeftOut } : {}) },
    calls: turn.ledger.snapshot(),
    stream: turn.publisher.stream.state(CARRIED_EVENTS),
    ...(turn.outputRetries > 0 ? { outputRetries: turn.outputRetries } : {}),
    ...(turn.budgetLimits ? { budget: turn.budgetLimits } : {}),
    ...(turn.childToolCalls > 0 ? { childToolCalls: turn.childToolCalls } : {}),
  };
  const size = JSON.stringify(carried).length + JSON.stringify(turn.input.messages).length;
  if (size <= MAX_CARRIED_CHARS) return carried;
  wf.log.warn('The turn is too big to hand over to a new run; it goes on in this one', { size });
  return undefined;
}

/**
 * Hands over when due: closes the stream's long polls, waits for running handlers, and continues
 * as new. Undefined when not due, decided without awaiting anything: the step loop then goes on
 * in the same microtask, so its commands keep their order (a turn recorded before the patch
 * replays as it ran). Resolves, and the turn goes on in this run, when its state is too big.
 */
export function handOverIfDue(turn: TurnContext, lastText: string): Promise<void> | undefined {
  if (!turn.toolsHash || !handOverDue(turn) || !wf.patched(TURN_HAND_OVER_PATCH)) return undefined;
  return handOver(turn, lastText);
}

async function handOver(turn: TurnContext, lastText: string): Promise<void> {
  turn.publisher.stream.close();
  await wf.condition(wf.allHandlersFinished);
  const carried = carryOver(turn, lastText);
  if (!carried) {
    turn.publisher.stream.reopen();
    return;
  }
  const next: AgentTurnInput = { ...turn.input, carried };
  await wf.continueAsNew<(input: AgentTurnInput) => Promise<unknown>>(next);
}
