/**
 * A turn cancelled while calls of `cancellable` tools run (a remote A2A agent's call follows a
 * task that runs on the remote agent, not in the activity): each such call is cancelled where its
 * work runs too, by the activity `cancelToolCall` (activities/cancel-tool-call.ts), before the turn
 * settles its calls as cancelled.
 *
 * Why an activity of its own: cancelling the turn cancels the call's `executeTool` activity, but
 * between two of its attempts (a remote call's attempts are short reads of the remote task, a poll
 * interval apart) no attempt runs, and Temporal then cancels the activity at once, without one;
 * an attempt that is running is not told either (it sends no heartbeat after it started). So the
 * turn asks for the cancellation itself, once, in the task it was cancelled in.
 *
 * Best effort and bounded: a minute in all (three attempts, each at most 30 s); a failure is
 * logged and the turn ends cancelled as it would have. Behind `0.5.0-a2a-remote-cancel`, asked
 * only when a cancelled turn has such a call running, so every other turn sends the commands it
 * sent before (docs/versioning.md).
 */
import * as wf from '@temporalio/workflow';
import type { TurnpikeActivities } from '../../activities/index.js';
import type { TurnContext } from '../context/turn-context.js';
import { activityPlacement } from '../context/tenant-placement.js';

export const REMOTE_CANCEL_PATCH = '0.5.0-a2a-remote-cancel';

/** Cancels, where it runs, every running call of a `cancellable` tool; resolves when each has been tried. */
export async function cancelRunningCalls(turn: TurnContext): Promise<void> {
  const running = [...turn.cancellableCalls.values()];
  if (running.length === 0 || !wf.patched(REMOTE_CANCEL_PATCH)) return;
  turn.cancellableCalls.clear();
  const { cancelToolCall } = wf.proxyActivities<TurnpikeActivities>({
    scheduleToCloseTimeout: '1m',
    startToCloseTimeout: '30s',
    retry: { maximumAttempts: 3, initialInterval: '1s', backoffCoefficient: 2 },
    ...activityPlacement(),
  });
  await Promise.all(
    running.map(async (call) => {
      try {
        const note = await cancelToolCall(call);
        wf.log.info('A cancelled call was cancelled where it ran', { toolCallId: call.toolCallId, toolName: call.toolName, note });
      } catch (error) {
        wf.log.warn('A cancelled call could not be cancelled where it ran', { toolCallId: call.toolCallId, toolName: call.toolName, error: String(error) });
      }
    }),
  );
}
