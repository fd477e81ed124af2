/**
 * The types of an A2A task's push notifications (workflows/a2a/a2a-push-notifier.ts): the
 * config a client set, what has been delivered of it, and the activity that delivers.
 */

/** A push notification config as A2A 1.0 has it (`TaskPushNotificationConfig`), checked by the API. */
export interface A2aPushConfig {
  /** The config's id: the client's, or one the API chose. */
  id: string;
  /** The task (and turn) it follows. */
  taskId: string;
  /** Where each notification is POSTed: http or https. */
  url: string;
  /** The client's token (or one the API chose and answered): sent back in `X-A2A-Notification-Token` and the key of `X-Turnpike-Signature`. */
  token: string;
  /** Sent as `Authorization: <scheme> <credentials>`, as A2A asks, when the client gave it. */
  authentication?: { scheme: string; credentials: string };
}

/** Where a config's notifications stand, kept in the activity's heartbeat details from one attempt to the next. */
export interface A2aPushProgress {
  /** What the last status queued showed (its state and waiting message), or null before the first. */
  shown: string | null;
  /** Notifications computed and not yet delivered, in order: each body as sent, with its delivery id. */
  queue: Array<{ delivery: string; body: string }>;
  /** Failed attempts at the first notification of `queue`. */
  failures: number;
  /** Notifications delivered, and given up on (refused by the receiver, or failing past the limit). */
  delivered: number;
  dropped: number;
  /** The task reached a final state and its last notifications are queued: nothing more will come. */
  finished: boolean;
  /** Reads in a row that found nothing new: the next read waits 1 s, doubled this many times, up to 30 s. */
  quiet?: number;
}

export interface A2aPushNotifierInput {
  config: A2aPushConfig;
}

/** What the activity answers once the task's final status was delivered (or given up on). */
export interface A2aPushDeliveryResult {
  progress: A2aPushProgress;
}

/** What the notifier answers when it ends. */
export interface A2aPushNotifierResult {
  delivered: number;
  dropped: number;
}

/** The one activity of the notifier. */
export interface A2aPushActivities {
  deliverA2aPush(input: A2aPushNotifierInput): Promise<A2aPushDeliveryResult>;
}
