/** The shapes the model governor (model-governor.ts) and its activities (activities/model-governor.ts) share. */

/** "Slow down until T", from a model call whose provider said so. */
export interface ModelSlowDown {
  /** Until when the queue should dispatch nothing, in ms since the epoch. */
  untilMs: number;
  /** Which header said so (`x-ratelimit-remaining-tokens: 0 (x-ratelimit-reset-tokens: 6m0s)`). */
  reason: string;
}

/** A queue's rate as the server holds it: an operator's `updateTaskQueueConfig`, or none (the workers' own then applies). */
export interface ModelQueueRate {
  /** The queue's rate on the server; null: none set. */
  requestsPerSecond: number | null;
  /** The reason given with it. */
  reason: string | null;
}

/** The governor's input: its model queue, and what a run carries to the next across continue-as-new. */
export interface ModelGovernorInput {
  /** The model task queue it pauses. */
  modelQueue: string;
  /** Until when the queue is paused (ms since the epoch). */
  pausedUntilMs?: number;
  /** The header that asked for the pause. */
  reason?: string;
  /** Whether the rate is 0 on the server now. */
  paused?: boolean;
  /** The server's setting before the pause, to restore. */
  previous?: ModelQueueRate | null;
}

/** What the governor is doing (its `turnpikeModelGovernorState` query). */
export interface ModelGovernorState {
  /** Until when the queue is paused; null when it is not. */
  pausedUntilMs: number | null;
  /** The server's setting before the pause, put back after it. */
  previous: ModelQueueRate | null;
  /** The header that asked for the pause; null when not paused. */
  reason: string | null;
  /** Slow-down signals this run received. */
  signals: number;
}

/** The model queue a governor activity acts on. */
export interface ModelQueueRef {
  modelQueue: string;
}

/** Rate 0 for the queue, with the reason the server keeps. */
export interface PauseModelQueueInput {
  modelQueue: string;
  reason: string;
}

/** The setting to put back (null: clear the server's). */
export interface RestoreModelQueueRateInput {
  modelQueue: string;
  previous: ModelQueueRate | null;
}

/** The governor's activities (activities/model-governor.ts). */
export interface ModelGovernorActivities {
  readModelQueueRate(input: ModelQueueRef): Promise<ModelQueueRate>;
  pauseModelQueue(input: PauseModelQueueInput): Promise<void>;
  restoreModelQueueRate(input: RestoreModelQueueRateInput): Promise<void>;
}

/** Every reason the governor sets starts so: a setting without it is an operator's, and left alone. */
export const GOVERNOR_REASON_PREFIX = 'turnpike: provider rate limit';
