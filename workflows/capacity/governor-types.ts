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

export interface ModelGovernorActivities {
  readModelQueueRate(input: { modelQueue: string }): Promise<ModelQueueRate>;
  pauseModelQueue(input: { modelQueue: string; reason: string }): Promise<void>;
  restoreModelQueueRate(input: { modelQueue: string; previous: ModelQueueRate | null }): Promise<void>;
}

/** Every reason the governor sets starts so: a setting without it is an operator's, and left alone. */
export const GOVERNOR_REASON_PREFIX = 'turnpike: provider rate limit';
