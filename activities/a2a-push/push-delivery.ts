/**
 * `deliverA2aPush`, the activity of an A2A push notifier (workflows/a2a/a2a-push-notifier.ts):
 * it follows one task (a turn) and POSTs each change to one config's URL, in order.
 *
 * - **Following**: it reads the turn as the A2A server does (`turnState`, and the result once it
 *   ended; both queries, which add nothing to the turn's history), every second. A status whose
 *   state or waiting message differs from the last one queued is queued as a `statusUpdate`; when
 *   the task is final, its answer (`artifactUpdate`s) and its final `statusUpdate`, and then it is
 *   done. The first read queues the status the task has then.
 * - **Delivering**: each body is the A2A 1.0 `StreamResponse` as JSON (`application/a2a+json`, the
 *   SDK's own serialization), with `Authorization: <scheme> <credentials>` when the config has
 *   `authentication`, `X-A2A-Notification-Token: <token>`, `X-Turnpike-Delivery` (the same on every
 *   retry of one notification), and `X-Turnpike-Timestamp` and `X-Turnpike-Signature` (HMAC-SHA256
 *   keyed with the token, push-signature.ts). Each request is bounded by 10 s.
 * - **Retries**: the queue is kept in the heartbeat details before anything is sent. A 2xx takes
 *   the notification off it; a 408, 429, 5xx or a network failure is tried again after 1 s,
 *   doubling, up to a minute apart (the run heartbeats meanwhile). After {@link MAX_FAILURES}
 *   failures of one notification (about a quarter of an hour, as for the approval webhooks) it is
 *   given up on, and the next goes. Any other answer (a 4xx, a redirect) refuses it for good: it
 *   is given up on at once. A worker that dies hands the queue, as last heartbeated, to the next
 *   attempt of the activity on any worker, which sends the same notification first.
 */
import { Context } from '@temporalio/activity';
import { A2A_CONTENT_TYPE, StreamResponse, type Task } from '@a2a-js/sdk';
import { createHash } from 'node:crypto';
import { turnStateQuery } from '../../workflows/messages/definitions.js';
import { isTurnEnded } from '../../workflows/types/turn-statuses.js';
import type { AgentTurnResult } from '../../workflows/types/index.js';
import type { A2aPushConfig, A2aPushDeliveryResult, A2aPushNotifierInput, A2aPushProgress } from '../../workflows/a2a/a2a-push-types.js';
import { isTerminal, shownOf, taskFrom } from './a2a-task-view.js';
import { PUSH_DELIVERY_HEADER, PUSH_SIGNATURE_HEADER, PUSH_TIMESTAMP_HEADER, PUSH_TOKEN_HEADER, signPushNotification } from './push-signature.js';

/** Failures of one notification before it is given up on: 1 + 2 + 4 + … + 60 s ≈ 15 minutes. */
export const MAX_FAILURES = 20;
/** How often the task is read while nothing is queued. */
const POLL_MS = 1_000;
/** An activity run ends after this long, and the workflow starts the next where it stood. */
const RUN_MS = 60 * 60_000;
const REQUEST_TIMEOUT_MS = 10_000;
/** The longest wait between two tries of one notification. */
const MAX_BACKOFF_MS = 60_000;

const fresh = (): A2aPushProgress => ({ shown: null, queue: [], failures: 0, delivered: 0, dropped: 0, finished: false });

export async function deliverA2aPush({ config, progress: carried }: A2aPushNotifierInput): Promise<A2aPushDeliveryResult> {
  const context = Context.current();
  let progress: A2aPushProgress = (context.info.heartbeatDetails as A2aPushProgress | undefined) ?? carried ?? fresh();
  const beat = () => context.heartbeat(progress);
  // A parked task changes nothing for hours: the heartbeat says the run is alive meanwhile.
  const alive = setInterval(beat, 5_000);
  const handle = context.client.workflow.getHandle(config.taskId);
  const ends = Date.now() + RUN_MS;
  try {
    for (;;) {
      while (progress.queue.length > 0) {
        const [next, ...rest] = progress.queue;
        const outcome = await post(config, next!.delivery, next!.body, context.cancellationSignal);
        if (outcome.ok || outcome.refused || progress.failures + 1 >= MAX_FAILURES) {
          if (!outcome.ok) context.log.warn('An A2A push notification was given up on', { taskId: config.taskId, configId: config.id, delivery: next!.delivery, reason: outcome.reason });
          progress = { ...progress, queue: rest, failures: 0, ...(outcome.ok ? { delivered: progress.delivered + 1 } : { dropped: progress.dropped + 1 }) };
          beat();
          continue;
        }
        // Waited out here, heartbeating: each notification's backoff starts at 1 s, whatever came before it.
        progress = { ...progress, failures: progress.failures + 1 };
        beat();
        context.log.info('An A2A push notification receiver did not take a notification; trying again', { taskId: config.taskId, configId: config.id, delivery: next!.delivery, reason: outcome.reason, failures: progress.failures });
        await sleep(Math.min(MAX_BACKOFF_MS, 1_000 * 2 ** (progress.failures - 1)), context.cancellationSignal);
        if (context.cancellationSignal.aborted) throw context.cancellationSignal.reason;
      }
      if (progress.finished) return { done: true, progress };
      if (Date.now() > ends) return { done: false, progress };
      const task = await readTask(handle, config.taskId);
      const queued = changes(task, progress.shown, config.id);
      if (queued.length > 0) {
        progress = { ...progress, shown: shownOf(task), queue: [...progress.queue, ...queued], finished: isTerminal(task) };
        beat();
        continue;
      }
      await sleep(POLL_MS, context.cancellationSignal);
      if (context.cancellationSignal.aborted) throw context.cancellationSignal.reason;
    }
  } finally {
    clearInterval(alive);
  }
}

async function readTask(handle: ReturnType<Context['client']['workflow']['getHandle']>, taskId: string): Promise<Task> {
  const state = await handle.query(turnStateQuery);
  return taskFrom(taskId, state, isTurnEnded(state.status) ? ((await handle.result()) as AgentTurnResult) : undefined);
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

async function post(config: A2aPushConfig, delivery: string, body: string, cancelled: AbortSignal): Promise<Outcome> {
  const timestamp = String(Math.floor(Date.now() / 1000));
  let response: Response;
  try {
    response = await fetch(config.url, {
      method: 'POST',
      headers: {
        'content-type': A2A_CONTENT_TYPE,
        ...(config.authentication ? { authorization: `${config.authentication.scheme} ${config.authentication.credentials}` } : {}),
        [PUSH_TOKEN_HEADER]: config.token,
        [PUSH_DELIVERY_HEADER]: delivery,
        [PUSH_TIMESTAMP_HEADER]: timestamp,
        [PUSH_SIGNATURE_HEADER]: signPushNotification(config.token, timestamp, body),
      },
      body,
      redirect: 'manual',
      signal: AbortSignal.any([cancelled, AbortSignal.timeout(REQUEST_TIMEOUT_MS)]),
    });
    await response.arrayBuffer().catch(() => undefined);
  } catch (error) {
    if (cancelled.aborted) throw cancelled.reason;
    return { ok: false, refused: false, reason: String(error) };
  }
  if (response.status >= 200 && response.status < 300) return { ok: true };
  // 408, 429 and 5xx may pass; any other answer (a 4xx, a redirect) will not, however often it is retried.
  const passing = response.status === 408 || response.status === 429 || response.status >= 500;
  return { ok: false, refused: !passing, reason: `answered ${response.status}` };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
