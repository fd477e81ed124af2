/**
 * `deliverA2aPush`, the activity of an A2A push notifier (workflows/a2a/a2a-push-notifier.ts):
 * it follows one task (a turn) and POSTs each change to one config's URL, in order.
 *
 * Each attempt of the activity does one bounded piece of work and ends; no worker waits between
 * two (the way the remote A2A tool polls, activities/a2a-remote/a2a-remote-call.ts):
 *
 * 1. It delivers what an earlier attempt queued, in order (below).
 * 2. It reads the turn once, as the A2A server does (`turnState`, and the result once it ended;
 *    both queries, which add nothing to the turn's history). A status whose state or waiting
 *    message differs from the last one queued is queued as a `statusUpdate`; when the task is
 *    final, its answer (`artifactUpdate`s) and its final `statusUpdate`. The first read queues
 *    the status the task has then. What it queued is delivered at once.
 * 3. Once the final status is delivered (or given up on), the activity returns and the notifier
 *    ends. Otherwise the attempt ends with a retryable failure, `A2aPushIdle`, whose
 *    `nextRetryDelay` is when to read again: 1 s after a change, doubling while nothing changes,
 *    up to {@link MAX_IDLE_MS}. Temporal's server schedules the next attempt itself; the
 *    notifier's retry policy has no attempt limit, and failed attempts enter no history.
 *
 * - **Delivering**: each body is the A2A 1.0 `StreamResponse` as JSON (`application/a2a+json`, the
 *   SDK's own serialization), with `Authorization: <scheme> <credentials>` when the config has
 *   `authentication`, `X-A2A-Notification-Token: <token>`, `X-Turnpike-Delivery` (the same on every
 *   retry of one notification), and `X-Turnpike-Timestamp` and `X-Turnpike-Signature` (HMAC-SHA256
 *   keyed with the token, push-signature.ts). When the worker has a signing key, also
 *   `X-Turnpike-Jwt: <JWT>` (push-jwt.ts), and `Authorization: Bearer <JWT>` when the config has no
 *   `authentication` of its own. Each request is bounded by 10 s.
 * - **Retries**: the progress (the queue, the failures of its first notification, the quiet
 *   reads) is kept in the heartbeat details before anything is sent; Temporal hands the last
 *   attempt's to the next, on any worker. A 2xx takes the notification off the queue; a 408, 429,
 *   5xx or a network failure ends the attempt with a retryable failure, `A2aPushReceiverFailed`,
 *   whose next attempt tries the same notification again after 1 s, doubling, up to a minute. After
 *   {@link MAX_FAILURES} failures of one notification (about a quarter of an hour, as for the
 *   approval webhooks) it is given up on, and the next goes. Any other answer (a 4xx, a redirect)
 *   refuses it for good: it is given up on at once; so is a receiver the worker refuses to reach,
 *   an address (the URL's, or one its name resolves to now) private and not allowed
 *   (push-request.ts). An attempt heartbeats every 5 s while it works, so a worker that dies
 *   mid-attempt is found by the heartbeat timeout.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import { A2A_CONTENT_TYPE, StreamResponse, type Task } from '@a2a-js/sdk';
import { createHash } from 'node:crypto';
import { turnStateQuery } from '../../workflows/messages/definitions.js';
import { isTurnEnded } from '../../workflows/types/turn-statuses.js';
import type { AgentTurnResult } from '../../workflows/types/index.js';
import type { A2aPushConfig, A2aPushDeliveryResult, A2aPushNotifierInput, A2aPushProgress } from '../../workflows/a2a/a2a-push-types.js';
import { isTerminal, shownOf, taskFrom } from './a2a-task-view.js';
import { NOTHING_ALLOWED } from './receiver-addresses.js';
import { postPush, type PushAnswer, type PushPolicy } from './push-request.js';
import { PUSH_DELIVERY_HEADER, PUSH_SIGNATURE_HEADER, PUSH_TIMESTAMP_HEADER, PUSH_TOKEN_HEADER, signPushNotification } from './push-signature.js';
import { PUSH_JWT_HEADER, type CheckedPushKey } from './push-jwt-key.js';
import { signPushJwt } from './push-jwt.js';

/** The worker's checked signing key (push-jwt-key.ts), when it has one. */
export type PushSigningKey = CheckedPushKey & { privateKey: NonNullable<CheckedPushKey['privateKey']> };

/** Failures of one notification before it is given up on: 1 + 2 + 4 + … + 60 s ≈ 15 minutes. */
export const MAX_FAILURES = 20;
/** The first wait before reading the task again; it doubles with each read that finds nothing new. */
const FIRST_IDLE_MS = 1_000;
/** The longest wait between two reads of a task that does not change. */
export const MAX_IDLE_MS = 30_000;
/** The failure type of an attempt that found nothing to do, and of one whose receiver failed. */
export const PUSH_IDLE_FAILURE = 'A2aPushIdle';
export const PUSH_RECEIVER_FAILURE = 'A2aPushReceiverFailed';
const REQUEST_TIMEOUT_MS = 10_000;
/** A read of the turn (which may replay its history on a worker) is given this long. */
const READ_TIMEOUT_MS = 20_000;
/** The longest wait between two tries of one notification. */
const MAX_BACKOFF_MS = 60_000;
const HEARTBEAT_MS = 5_000;

const fresh = (): A2aPushProgress => ({ shown: null, queue: [], failures: 0, delivered: 0, dropped: 0, finished: false });

/**
 * What the worker allows of private receivers (none unless its operator said so; `resolve` is for
 * tests), and its signing key, if any: without one, notifications carry the HMAC signature only.
 */
export async function deliverA2aPush({ config }: A2aPushNotifierInput, policy: PushPolicy = { allow: NOTHING_ALLOWED }, signingKey?: PushSigningKey): Promise<A2aPushDeliveryResult> {
  const context = Context.current();
  let progress: A2aPushProgress = (context.info.heartbeatDetails as A2aPushProgress | undefined) ?? fresh();
  const beat = () => context.heartbeat(progress);
  // A slow receiver or read: the heartbeat says the attempt is alive meanwhile.
  const alive = setInterval(beat, HEARTBEAT_MS);
  try {
    await deliverQueue();
    if (!progress.finished) {
      const task = await readTask(context, config.taskId);
      const queued = changes(task, progress.shown, config.id);
      progress = queued.length > 0 ? { ...progress, shown: shownOf(task), queue: [...progress.queue, ...queued], finished: isTerminal(task), quiet: 0 } : { ...progress, quiet: (progress.quiet ?? 0) + 1 };
      beat();
      await deliverQueue();
    }
    if (progress.finished) return { progress };
    if (context.cancellationSignal.aborted) throw context.cancellationSignal.reason;
    const wait = Math.min(MAX_IDLE_MS, FIRST_IDLE_MS * 2 ** (progress.quiet ?? 0));
    throw ApplicationFailure.create({
      message: `Task ${config.taskId} is open; read it again in ${wait} ms`,
      type: PUSH_IDLE_FAILURE,
      nextRetryDelay: wait,
      category: ApplicationFailureCategory.BENIGN,
    });
  } finally {
    clearInterval(alive);
  }

  /** Sends the queue in order; a notification the receiver did not take ends the attempt, to be tried again. */
  async function deliverQueue(): Promise<void> {
    while (progress.queue.length > 0) {
      const [next, ...rest] = progress.queue;
      const outcome = await post(config, next!.delivery, next!.body, policy, context.cancellationSignal, signingKey);
      if (outcome.ok || outcome.refused || progress.failures + 1 >= MAX_FAILURES) {
        if (!outcome.ok) context.log.warn('An A2A push notification was given up on', { taskId: config.taskId, configId: config.id, delivery: next!.delivery, reason: outcome.reason });
        progress = { ...progress, queue: rest, failures: 0, ...(outcome.ok ? { delivered: progress.delivered + 1 } : { dropped: progress.dropped + 1 }) };
        beat();
        continue;
      }
      // Each notification's backoff starts at 1 s, whatever came before it.
      progress = { ...progress, failures: progress.failures + 1 };
      beat();
      const wait = Math.min(MAX_BACKOFF_MS, 1_000 * 2 ** (progress.failures - 1));
      context.log.info('An A2A push notification receiver did not take a notification; trying again', { taskId: config.taskId, configId: config.id, delivery: next!.delivery, reason: outcome.reason, failures: progress.failures });
      throw ApplicationFailure.create({
        message: `The receiver did not take notification ${next!.delivery} (${outcome.reason}); trying again in ${wait} ms`,
        type: PUSH_RECEIVER_FAILURE,
        nextRetryDelay: wait,
        category: ApplicationFailureCategory.BENIGN,
      });
    }
  }
}

async function readTask(context: Context, taskId: string): Promise<Task> {
  const { client } = context;
  const handle = client.workflow.getHandle(taskId);
  return client.withDeadline(Date.now() + READ_TIMEOUT_MS, async () => {
    const state = await handle.query(turnStateQuery);
    return taskFrom(taskId, state, isTurnEnded(state.status) ? ((await handle.result()) as AgentTurnResult) : undefined);
  });
}

/** The notifications a read of the task adds: its status when it changed; at the end, its answer and final status. */
function changes(task: Task, shown: string | null, configId: string): Array<{ delivery: string; body: string }> {
  const responses: StreamResponse[] = [];
  const { id: taskId, contextId } = task;
  if (isTerminal(task)) {
    for (const artifact of task.artifacts) responses.push({ payload: { $case: 'artifactUpdate', value: { taskId, contextId, artifact, append: false, lastChunk: true, metadata: undefined } } });
  } else if (shownOf(task) === shown) {
    return [];
  }
  responses.push({ payload: { $case: 'statusUpdate', value: { taskId, contextId, status: task.status, metadata: undefined } } });
  return responses.map((response) => {
    const what = response.payload?.$case === 'artifactUpdate' ? `artifact/${response.payload.value.artifact?.artifactId}` : `status/${shownOf(task)}`;
    return { delivery: `${taskId}/${configId}/${createHash('sha256').update(what).digest('hex').slice(0, 16)}`, body: JSON.stringify(StreamResponse.toJSON(response)) };
  });
}

type Outcome = { ok: true } | { ok: false; refused: boolean; reason: string };

async function post(config: A2aPushConfig, delivery: string, body: string, policy: PushPolicy, cancelled: AbortSignal, signingKey: PushSigningKey | undefined): Promise<Outcome> {
  const now = Math.floor(Date.now() / 1000);
  const timestamp = String(now);
  const jwt = signingKey ? await signPushJwt(signingKey, { taskId: config.taskId, url: config.url, body, issuedAt: now }) : undefined;
  // The config's own authentication is what A2A says to send; the JWT goes in Authorization only when there is none.
  const authorization = config.authentication ? `${config.authentication.scheme} ${config.authentication.credentials}` : jwt ? `Bearer ${jwt}` : undefined;
  const headers = {
    'content-type': A2A_CONTENT_TYPE,
    ...(authorization ? { authorization } : {}),
    ...(jwt ? { [PUSH_JWT_HEADER]: jwt } : {}),
    [PUSH_TOKEN_HEADER]: config.token,
    [PUSH_DELIVERY_HEADER]: delivery,
    [PUSH_TIMESTAMP_HEADER]: timestamp,
    [PUSH_SIGNATURE_HEADER]: signPushNotification(config.token, timestamp, body),
  };
  let answer: PushAnswer;
  try {
    answer = await postPush(config.url, headers, body, policy, cancelled, REQUEST_TIMEOUT_MS);
  } catch (error) {
    if (cancelled.aborted) throw cancelled.reason;
    return { ok: false, refused: false, reason: String(error) };
  }
  // A private receiver that is not allowed stays so: no retry would reach it.
  if ('refused' in answer) return { ok: false, refused: true, reason: `refused to connect: ${answer.refused} (allow it with TURNPIKE_A2A_PUSH_ALLOW or the worker's a2aPushAllow)` };
  if (answer.status >= 200 && answer.status < 300) return { ok: true };
  // 408, 429 and 5xx may pass; any other answer (a 4xx, a redirect) will not, however often it is retried.
  const passing = answer.status === 408 || answer.status === 429 || answer.status >= 500;
  return { ok: false, refused: !passing, reason: `answered ${answer.status}` };
}
