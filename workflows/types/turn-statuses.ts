/**
 * Every status of a turn: what `turnState` reports, what the `AgentTurnStatus` search attribute
 * holds, and (for a turn that has ended) the result's `status`. The README's list is checked
 * against this one by `test/unit/rejection-types.test.ts`.
 *
 * No imports and no side effects, like `rejection-types.ts`.
 */

/** One status: whether the turn has ended, and what it means. */
export interface TurnStatusInfo {
  readonly ended: boolean;
  readonly description: string;
}

/** Every turn status, in the order the README lists them. */
export const TURN_STATUSES = {
  running: { ended: false, description: 'The model is being called or tools are running.' },
  'awaiting-input': { ended: false, description: 'At least one tool call is parked, waiting for a decision or a client result.' },
  completed: { ended: true, description: 'The model answered without calling tools.' },
  'max-steps': { ended: true, description: 'The model was called `maxSteps` times; every call it made has its result.' },
  'max-tokens': {
    ended: true,
    description:
      "The model's last reply was cut off by its output token limit or the context window (OpenAI `finish_reason: \"length\"`; Anthropic `stop_reason: \"max_tokens\"` or `\"model_context_window_exceeded\"`): its text is partial and none of its tool calls ran.",
  },
  refused: {
    ended: true,
    description:
      "The model refused, or the provider's content filter stopped its last reply (OpenAI `finish_reason: \"content_filter\"`; Anthropic `stop_reason: \"refusal\"`): none of its tool calls ran.",
  },
  'invalid-output': {
    ended: true,
    description:
      'The turn asked for a typed answer (`output`) and the model\'s last answer was still not JSON matching the schema after `maxRetries` corrections: the result has its text and `outputErrors`.',
  },
  'budget-exceeded': {
    ended: true,
    description: "A limit of the turn's `budget` was reached and a person stopped it (or nobody extended it before `approvalTimeout`); every call it made has its result.",
  },
  cancelled: { ended: true, description: 'The turn was cancelled or superseded by a newer message; every open call got a cancelled result.' },
} as const satisfies Record<string, TurnStatusInfo>;

/** A turn's status, e.g. `'awaiting-input'`. */
export type TurnStatus = keyof typeof TURN_STATUSES;

/** The statuses a turn ends with: its result's `status`. */
export type EndedTurnStatus = { [Status in TurnStatus]: (typeof TURN_STATUSES)[Status]['ended'] extends true ? Status : never }[TurnStatus];

/** True once the turn has ended: its result can be read and nothing in it waits any more. */
export function isTurnEnded(status: TurnStatus): status is EndedTurnStatus {
  return Object.hasOwn(TURN_STATUSES, status) && TURN_STATUSES[status].ended;
}
