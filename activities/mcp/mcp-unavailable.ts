/**
 * An MCP server that a model step (or a tool call) needs and that cannot list its tools: how long
 * the step waits for it, the failure its activity throws meanwhile and at the end, and the report
 * that lets the turn show the wait.
 *
 * The activity decides. Each attempt that finds a server unavailable measures from when the step
 * first found it so: the later of the activity's first scheduling (`info.scheduledTimestampMs`,
 * the same for every attempt and worker) and the moment this worker last saw the server go down
 * (a server that went down after the step began gets its whole bound). Until the server's
 * `unavailableTimeout` has passed since then, the attempt fails retryably (the step's retry
 * policy applies, its last wait shortened to end at the bound); after it, non-retryably, and the
 * turn fails with `McpServerUnavailable` naming the server. Temporal keeps retried attempts out of
 * the turn's history, so a model step's activity also tells its turn, by the internal
 * `toolServersUnavailable` signal, before it fails each attempt: the turn's `turnState`
 * (`waitingForServers`) and stream (`servers-unavailable`) then name the servers and the errors.
 *
 * No import of the MCP SDK: the model step reports through here whether or not a worker loaded it.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure, type RetryPolicy } from '@temporalio/common';
import { toolServersUnavailableSignal } from '../../workflows/messages/definitions.js';
import type { ToolServerUnavailable, ToolServersWait } from '../../workflows/types/index.js';
import { policyBackoffMs } from '../providers/errors.js';

export const MCP_SERVER_UNAVAILABLE = 'McpServerUnavailable';

/** What the failure carries as its details: the servers, so the step's activity can report them. */
export interface McpUnavailableDetails {
  servers: ToolServerUnavailable[];
}

/** What an activity knows of its attempts (`Context.current().info`). */
export interface AttemptInfo {
  scheduledTimestampMs: number;
  attempt: number;
  retryPolicy?: RetryPolicy;
}

/** The running activity's attempt, or undefined outside an activity. */
export function currentAttempt(): AttemptInfo | undefined {
  try {
    return Context.current().info;
  } catch {
    return undefined;
  }
}

/** A reported error is cut to this many characters (the turn keeps it in its state and stream). */
const MAX_ERROR_CHARS = 1_000;
/** The shortest retry delay this module asks for when the bound is near. */
const MIN_DELAY_MS = 100;
/** How long a report to the turn may take before the attempt fails without it. */
const REPORT_TIMEOUT_MS = 2_000;

/** One server the step needs and could not list, with when the step gives up on it. */
export function unavailableServer(
  server: string,
  error: string,
  timing: { unavailableTimeoutMs: number; downSinceMs: number | undefined },
  info: Pick<AttemptInfo, 'scheduledTimestampMs'>,
  now = Date.now(),
): ToolServerUnavailable {
  const since = Math.min(now, Math.max(info.scheduledTimestampMs, timing.downSinceMs ?? now));
  return {
    server,
    error: error.length > MAX_ERROR_CHARS ? `${error.slice(0, MAX_ERROR_CHARS)}…` : error,
    since: new Date(since).toISOString(),
    giveUpAt: new Date(since + timing.unavailableTimeoutMs).toISOString(),
  };
}

/**
 * The failure for an attempt that found `servers` unavailable, `message` naming them: not
 * retryable once the first of them is past its `giveUpAt`; before that retryable, with a
 * `nextRetryDelay` that lands the next attempt at the bound when the policy's own backoff would
 * wait past it.
 */
export function unavailableFailure(message: string, servers: ToolServerUnavailable[], info: AttemptInfo | undefined, now = Date.now()): ApplicationFailure {
  const details: McpUnavailableDetails = { servers };
  const giveUpAt = Math.min(...servers.map((server) => Date.parse(server.giveUpAt)));
  if (now >= giveUpAt) {
    const over = servers.filter((server) => Date.parse(server.giveUpAt) <= now);
    const waited = over.map((server) => `"${server.server}" since ${server.since}`).join(', ');
    return ApplicationFailure.create({
      message: `${message} (unavailable: ${waited}; the step gave up at its unavailableTimeout)`,
      type: MCP_SERVER_UNAVAILABLE,
      nonRetryable: true,
      details: [details],
    });
  }
  const remainingMs = giveUpAt - now;
  const backoffMs = info?.retryPolicy ? policyBackoffMs(info.retryPolicy, info.attempt) : undefined;
  // The server lets an application's delay stand for one retry only (see nextRetryDelayFor), so a
  // delay shorter than the policy's is safe here.
  const nextRetryDelay = backoffMs !== undefined && remainingMs < backoffMs ? Math.max(remainingMs, MIN_DELAY_MS) : undefined;
  return ApplicationFailure.create({
    message,
    type: MCP_SERVER_UNAVAILABLE,
    nonRetryable: false,
    details: [details],
    ...(nextRetryDelay !== undefined ? { nextRetryDelay } : {}),
  });
}

/** The servers an `McpServerUnavailable` failure of {@link unavailableFailure} names, if it is one. */
export function unavailableServersOf(error: unknown): ToolServerUnavailable[] | undefined {
  if (!(error instanceof ApplicationFailure) || error.type !== MCP_SERVER_UNAVAILABLE) return undefined;
  const details = error.details?.[0] as Partial<McpUnavailableDetails> | undefined;
  return Array.isArray(details?.servers) && details.servers.length > 0 ? details.servers : undefined;
}

/**
 * Tells the step's turn which servers this attempt failed for (the `toolServersUnavailable`
 * signal), before the attempt fails. Best effort: a report that fails or takes over 2 s is
 * logged and the attempt fails all the same.
 */
export async function reportUnavailable(context: Context, step: number | undefined, error: unknown): Promise<void> {
  const servers = unavailableServersOf(error);
  const workflowId = context.info.workflowExecution?.workflowId;
  if (!servers || !workflowId || step === undefined) return;
  const report: ToolServersWait = { step, attempt: context.info.attempt, servers };
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      context.client.workflow.getHandle(workflowId).signal(toolServersUnavailableSignal, report),
      new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${REPORT_TIMEOUT_MS} ms`)), REPORT_TIMEOUT_MS))),
    ]);
  } catch (reportError) {
    context.log.warn('Could not tell the turn which MCP servers its model step waits for', { error: String(reportError), servers: servers.map((server) => server.server) });
  } finally {
    clearTimeout(timer);
  }
}
