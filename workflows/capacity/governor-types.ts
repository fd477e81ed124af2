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
  requestsPerSecond: number | null;
  reason: string | null;
}

export interface ModelGovernorInput {
  modelQueue: string;
  /** Carried across continue-as-new. */
  pausedUntilMs?: number;
  reason?: string;
  paused?: boolean;
  previous?: ModelQueueRate | null;
}

/** What the governor is doing (its `turnpikeModelGovernorState` query). */
export interface ModelGovernorState {
  /** Until when the queue is paused; null when it is not. */
  pausedUntilMs: number | null;
  /** The server's setting before the pause, put back after it. */
  previous: ModelQueueRate | null;
  reason: string | null;
  /** Slow-down signals this run received. */
  signals: number;
}

export interface ModelQueueRef {
  modelQueue: string;
}

export interface PauseModelQueueInput {
  modelQueue: string;
  reason: string;
}

export interface RestoreModelQueueRateInput {
  modelQueue: string;
  previous: ModelQueueRate | null;
}

export interface ModelGovernorActivities {
  readModelQueueRate(input: ModelQueueRef): Promise<ModelQueueRate>;
  pauseModelQueue(input: PauseModelQueueInput): Promise<void>;
  restoreModelQueueRate(input: RestoreModelQueueRateInput): Promise<void>;
}

/** Every reason the governor sets starts so: a setting without it is an operator's, and left alone. */
export const GOVERNOR_REASON_PREFIX = 'turnpike: provider rate limit';
