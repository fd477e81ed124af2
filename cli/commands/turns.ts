/**
 * `start`, `watch` and `show`: run a turn and follow it until it ends; `show` also says when its
 * model step waits for model capacity (from the description it reads anyway).
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { WorkflowFailedError } from '@temporalio/client';
import type { Command } from 'commander';
import { TurnpikeNotFoundError, type TurnpikeClient } from '../../client/turnpike-client.js';
import { AGENT_TURN_WORKFLOW } from '../../workflows/messages/definitions.js';
import type { AgentTurnInput, AgentTurnResult, JsonSchema, ModelSettings, PendingToolCall, TurnState } from '../../workflows/types/index.js';
import type { TurnPriority } from '../../client/tenants.js';
import { waitInWindows } from '../../connection/windowed-wait.js';
import { capacityWaitOf, type WaitingForCapacity } from '../../client/capacity-wait.js';
import { defaultModel, parseJson, parseList, parseModel, parsePositive, parsePriority, parseTenant, PRIORITY_HELP } from '../arguments.js';
import type { CliContext } from '../context.js';
import { compactJson, decisionId, expiresIn, parkedCallsTable, resolveHint, status, turnResultText, type Colors } from '../format.js';

interface StartOptions {
  model?: ModelSettings;
  id?: string;
  system?: string;
  tools?: string[];
  maxSteps?: number;
  approvalTimeout?: string;
  clientToolTimeout?: string;
  outputSchema?: JsonSchema;
  tenant?: string;
  priority?: TurnPriority;
  wait?: boolean;
  interval: number;
}

/** `--interval` of the commands that watch a turn. */
export const INTERVAL_OPTION = ['--interval <ms>', 'how often to poll the turn while watching it, in milliseconds', parsePositive, 1000] as const;

export function registerTurnCommands(program: Command, context: CliContext): void {
  program
    .command('start')
    .description('start a turn: a user message, answered by a model with the workers\' tools')
    .argument('<text...>', 'the user message (the words are joined with spaces)')
    .option('--model <provider[:model]>', 'openai[:gpt-4.1-mini], anthropic[:claude-sonnet-4-6] or scripted[:demo] (default: as npm start picks)', parseModel)
    .option('--id <turnId>', 'the turn\'s workflow id (default turn-<uuid>); an id that is still running returns that turn')
    .option('--system <prompt>', 'system prompt')
    .option('--tools <names>', 'comma-separated tool names offered this turn (default: all)', parseList)
    .option('--max-steps <n>', 'model calls at most (default 10)', parsePositive)
    .option('--approval-timeout <duration>', 'how long an approval may wait, e.g. 30m, 24h (default 24h); expiry is a denial')
    .option('--client-tool-timeout <duration>', 'how long a client tool may wait for its result (default 24h)')
    .option('--output-schema <json>', 'a typed final answer: the JSON Schema (of an object) the answer must match, e.g. "$(cat schema.json)"', parseJson)
    .option('--tenant <tenant>', 'the tenant it runs for: the TurnpikeTenant search attribute and the fairness key of its tasks', parseTenant)
    .option('--priority <priority>', PRIORITY_HELP, parsePriority)
    .option('--wait', 'then watch the turn until it ends, as `turnpike watch` does')
    .option(...INTERVAL_OPTION)
    .action(async (words: string[], options: StartOptions) => {
      const turnpike = await context.client();
      const turnId = options.id ?? `turn-${randomUUID()}`;
      const input: AgentTurnInput = {
        model: options.model ?? defaultModel(),
        messages: [{ role: 'user', content: words.join(' ') }],
        ...(options.system !== undefined ? { system: options.system } : {}),
        ...(options.tools ? { tools: options.tools } : {}),
        ...(options.maxSteps !== undefined ? { maxSteps: options.maxSteps } : {}),
        ...(options.approvalTimeout ? { approvalTimeout: options.approvalTimeout } : {}),
        ...(options.clientToolTimeout ? { clientToolTimeout: options.clientToolTimeout } : {}),
        // The turn checks the schema when it starts, and fails naming the field.
        ...(options.outputSchema !== undefined ? { output: { schema: options.outputSchema } } : {}),
      };
      const placement = { ...(options.tenant !== undefined ? { tenant: options.tenant } : {}), ...(options.priority !== undefined ? { priority: options.priority } : {}) };
      await turnpike.startTurn(input, { turnId, ...placement });
      const started = { turnId, taskQueue: turnpike.taskQueue, model: input.model, ...placement };
      const { colors } = context;
      const forTenant = options.tenant !== undefined ? ` for tenant ${options.tenant}` : '';
      const line = () => `Started ${colors.bold(turnId)} (${input.model.provider}:${input.model.model}) on task queue ${turnpike.taskQueue}${forTenant}`;
      if (!options.wait) {
        context.print(started, () => `${line()}\n${colors.dim(`  turnpike watch ${turnId}`)}`);
        return;
      }
      context.event({ type: 'started', ...started }, line);
      await watchTurn(context, turnpike, turnId, { intervalMs: options.interval });
    });

  program
    .command('watch')
    .description('follow a turn: status changes and parked calls as they happen, then its result')
    .argument('<turnId>')
    .option(...INTERVAL_OPTION)
    .addHelpText('after', '\nWith --json, one JSON object per line: {"type":"status"|"parked"|"result", "turnId", ...}.')
    .action(async (turnId: string, options: { interval: number }) => {
      await watchTurn(context, await context.client(), turnId, { intervalMs: options.interval });
    });

  program
    .command('show')
    .description('show a turn: status, steps, usage, tool calls with outcomes and who decided them')
    .argument('<turnId>')
    .action(async (turnId: string) => {
      await showTurn(context, await context.client(), turnId);
    });
}

/** How long `watch` waits, once the turn has ended, for its event stream to print the text streamed before the end. */
const STREAM_CATCH_UP_MS = 10_000;

/**
 * Prints a turn's status changes and newly parked calls until it ends, then its result.
 * The result is awaited (a long poll) alongside the polling of `turnState`, so the end is seen at
 * once rather than at the next poll. With `waitForStart`, a turn that does not exist yet (a
 * conversation's queued turn) is waited for instead of being an error.
 */
export async function watchTurn(
  context: CliContext,
  turnpike: TurnpikeClient,
  turnId: string,
  options: { intervalMs: number; waitForStart?: boolean },
): Promise<void> {
  // Stops the result's long poll when watching ends early, so it cannot hold the process open; the
  // wait is made in windows, so a turn watched while parked for hours gathers no abort listeners.
  const stop = new AbortController();
  let outcome: { result: AgentTurnResult } | { error: unknown } | undefined;
  const ended = waitInWindows(turnpike.client, stop.signal, () => turnpike.turnResult(turnId, { waitForStart: options.waitForStart })).then(
    (result) => {
      if (result) outcome = { result };
    },
    (error: unknown) => (outcome = { error }),
  );
  const { colors } = context;
  const parked = new Set<string>();
  let lastStatus = '';
  // The text as the model writes it, from the turn's event stream.
  const streaming = streamText(context, turnpike, turnId, stop.signal).catch(() => undefined);
  try {
    while (!outcome) {
      const state = await turnpike.turnState(turnId).catch((error: unknown) => {
        // It may have ended (or, queued, not started) between two polls: the result says which.
        if (outcome || (options.waitForStart && error instanceof TurnpikeNotFoundError)) return undefined;
        throw error;
      });
      if (state && `${state.status}/${state.step}` !== lastStatus) {
        lastStatus = `${state.status}/${state.step}`;
        context.event({ type: 'status', turnId, status: state.status, step: state.step }, () => statusLine(turnId, state, colors));
      }
      for (const call of state?.pending ?? []) {
        if (parked.has(call.toolCallId)) continue;
        parked.add(call.toolCallId);
        context.event({ type: 'parked', turnId, ...call }, () => parkedLines(turnId, call, colors));
      }
      await Promise.race([ended, sleep(options.intervalMs, undefined, { ref: false })]);
    }
    // Text streamed before the end is printed before the result: the stream ends at the turn's
    // `turn-finished`, a poll or two after the result (seconds on a loaded server); the limit only
    // keeps a stream that cannot be read from holding the result back.
    await Promise.race([streaming, sleep(STREAM_CATCH_UP_MS, undefined, { ref: false })]);
  } finally {
    stop.abort();
  }
  context.endText();
  if ('error' in outcome) throw outcome.error;
  const { result } = outcome;
  context.event({ type: 'result', turnId, result }, () => turnResultText(turnId, result, colors));
}

/** Prints a turn's text deltas as they arrive; a retried step's text starts again on a new line. */
async function streamText(context: CliContext, turnpike: TurnpikeClient, turnId: string, signal: AbortSignal): Promise<void> {
  const { colors } = context;
  for await (const { event } of turnpike.turnEvents(turnId, { signal })) {
    if (signal.aborted) return;
    if (event.type === 'text-delta') {
      context.text({ turnId, step: event.step, attempt: event.attempt, text: event.text }, () => colors.dim(`  step ${event.step}: `));
    } else if (event.type === 'step-retry') {
      context.event({ type: 'step-retry', turnId, step: event.step, attempt: event.attempt }, () => colors.yellow(`  step ${event.step} is being retried (attempt ${event.attempt}); its text starts again`));
    } else if (event.type === 'step-finished') {
      context.endText();
    }
  }
}

function statusLine(turnId: string, state: TurnState, colors: Colors): string {
  return `${colors.bold(turnId)}  ${status(state.status, colors)}  step ${state.step}`;
}

function capacityLine({ since, taskQueue, attempt }: WaitingForCapacity, colors: Colors): string {
  return `  ${colors.yellow('waiting for model capacity')} since ${since} on task queue ${taskQueue}${attempt > 1 ? ` (attempt ${attempt})` : ''}`;
}

function parkedLines(turnId: string, call: PendingToolCall, colors: Colors): string {
  return [
    `  ${colors.yellow('parked')} ${call.kind} ${colors.bold(decisionId(call))}: ${call.toolName} ${compactJson(call.input, 80)}` +
      `${call.reason ? ` (${call.reason})` : ''}, expires in ${expiresIn(call.expiresAt, Date.now(), colors)}`,
    colors.dim(`    ${resolveHint(turnId, call)}`),
  ].join('\n');
}

/**
 * A running turn shows its state and parked calls; a closed one its result (the tool calls with
 * outcomes exist only there). Which is which comes from `describe`, which needs no worker, so a
 * finished turn shows even while no worker runs.
 */
async function showTurn(context: CliContext, turnpike: TurnpikeClient, turnId: string): Promise<void> {
  const description = await turnpike.turn(turnId).describe();
  if (description.type !== AGENT_TURN_WORKFLOW) {
    throw new TurnpikeNotFoundError(`${turnId} is an ${description.type} workflow, not a turn${description.type === 'agentConversation' ? ` (try: turnpike history ${turnId})` : ''}`);
  }
  const execution = description.status.name;
  const { colors } = context;
  if (execution === 'RUNNING') {
    const state = await turnpike.turnState(turnId);
    // From the description already read: a model step queued behind the model queue's rate.
    const waitingForCapacity = capacityWaitOf(description);
    context.print({ turnId, execution, state, ...(waitingForCapacity ? { waitingForCapacity } : {}) }, () =>
      [
        statusLine(turnId, state, colors),
        ...(waitingForCapacity ? [capacityLine(waitingForCapacity, colors)] : []),
        ...(state.conversationId ? [colors.dim(`conversation ${state.conversationId}`)] : []),
        // A sub-agent's turn names its parent; a parent names the child turns it waits on.
        ...(state.parentTurn ? [colors.dim(`sub-agent of ${state.parentTurn.turnId} (call ${state.parentTurn.toolCallId}, ${state.parentTurn.path.join(' > ')})`)] : []),
        ...(state.children ?? []).map((child) => `  ${colors.yellow('waits on')} ${child.toolName} (call ${child.toolCallId}): turn ${colors.bold(child.turnId)}, ${child.status}`),
        ...(state.pending.length > 0 ? [parkedCallsTable(state.pending, colors, Date.now()), ...state.pending.map((call) => colors.dim(resolveHint(turnId, call)))] : []),
        colors.dim('Its tool calls and their outcomes are listed once the turn ends.'),
      ].join('\n'),
    );
    return;
  }
  try {
    const result = await turnpike.turnResult(turnId);
    context.print({ turnId, execution, result }, () => turnResultText(turnId, result, colors));
  } catch (error) {
    // Failed, terminated or timed out: that is what there is to show, not an error of `show`.
    if (!(error instanceof WorkflowFailedError)) throw error;
    const failure = error.cause?.message ?? error.message;
    context.print({ turnId, execution, failure }, () => `${colors.bold(turnId)}  ${colors.red(execution.toLowerCase())}: ${failure}`);
  }
}
