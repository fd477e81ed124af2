/**
 * A long turn hands over to a new run of itself (continue-as-new) before its history reaches
 * Temporal's limits (51,200 events and 50 MB a run; warnings at 10,240 and 10 MB): at a step
 * boundary, once the run's history has reached the turn's `historyLimit` (8,000 events or 8 MB
 * by default). No call is parked at a step boundary, so no decision waits across a hand-over.
 *
 * The next run carries on with everything (`TurnCarryOver`): when the turn started (its wall
 * clock runs on; Temporal's start time is the run's), the step count, the messages the
 * turn appended, its tool calls (so a late decision is refused as before), its records,
 * decisions and usage, its tools, and its event stream, whose offsets go on where they were
 * (the last {@link CARRIED_EVENTS} events are kept for readers a little behind). The turn's id,
 * its queries, its updates and its result (`handle.result()` follows the runs) are unchanged.
 *
 * Behind `patched(TURN_HAND_OVER_PATCH)`: a turn recorded before it never handed over.
 */
import * as wf from '@temporalio/workflow';
import { turnStartedAtMs } from '../budgets/turn-budget.js';
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
 * The smallest `historyLimit.bytes` a turn takes. A hand-over must carry the turn's state (its
 * input, with the carried calls, records, decisions and stream tail: up to
 * {@link MAX_CARRIED_CHARS} characters and the turn's messages) into the next run's first event,
 * and the next run checks its limit before its first step: under a limit its first events alone
 * could reach, every new run would hand over again at once, forever. The worker keeps a payload
 * of 128 KiB or more (compressed) in the content store, so a run's first events stay far smaller
 * than 2 MiB; 2 MiB also holds for a carried input of 1.5 million characters kept inline, and leaves
 * each run room for its steps.
 */
export const MIN_HISTORY_LIMIT_BYTES = 2 * 1024 * 1024;
/**
 * The smallest `historyLimit.events`: a new run starts with three events (started, task scheduled,
 * task started) and the signals that reached it first, and a step adds six or more; 100 leaves a
 * run room for steps.
 */
export const MIN_HISTORY_LIMIT_EVENTS = 100;
/** The smallest limits, by field. */
export const MIN_HISTORY_LIMIT = { events: MIN_HISTORY_LIMIT_EVENTS, bytes: MIN_HISTORY_LIMIT_BYTES } as const;
/**
 * The workflow patch that refuses a `historyLimit.bytes` from 100 up to under 2 MiB as a turn
 * starts (docs/versioning.md); a turn recorded before took such a limit, and replays so.
 */
export const HISTORY_LIMIT_FLOOR_PATCH = '0.5.0-history-limit-floor';
/** The smallest `historyLimit.bytes` a turn took before {@link HISTORY_LIMIT_FLOOR_PATCH}. */
export const FORMER_MIN_HISTORY_LIMIT_BYTES = 100;

/**
 * What is wrong with a `historyLimit` (`events` and `bytes`, each an integer of at least its
 * smallest value), naming the smallest value that works; undefined when nothing is.
 */
export function historyLimitProblem(limit: unknown): { key: 'events' | 'bytes'; value: unknown; problem: string } | undefined {
  if (limit === undefined || limit === null || typeof limit !== 'object') return undefined;
  for (const key of ['events', 'bytes'] as const) {
    const value = (limit as Record<string, unknown>)[key];
    if (value === undefined || (Number.isInteger(value) && (value as number) >= MIN_HISTORY_LIMIT[key])) continue;
    const why = key === 'bytes'
      ? ' (2 MiB): a new run starts with the state the turn carries, and under a smaller limit it could hand over again before its first step, forever'
      : ': a new run starts with a few events and each step adds more, and a smaller limit would leave a run little room for its steps';
    return { key, value, problem: `historyLimit.${key} must be an integer of at least ${MIN_HISTORY_LIMIT[key]}${why}` };
  }
  return undefined;
}

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
    startedAtMs: turnStartedAtMs(turn),
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
