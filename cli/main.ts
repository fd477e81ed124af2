/**
 * `turnpike`: the command line for people and scripts. Start and watch turns, list and resolve
 * parked tool calls, talk to conversations. Tables and colours on a terminal; `--json` for
 * scripts; exit codes that say what went wrong (see EXIT_CODES).
 *
 *   npx turnpike pending
 *   npx turnpike approve turn-42 apr_... --as alice
 *
 * `bin/turnpike.js` runs `main()`; tests call `runCli()` with their own client and streams.
 */
import { WorkflowNotFoundError } from '@temporalio/client';
import { Command, CommanderError } from 'commander';
import { TurnpikeNotFoundError, TurnpikeRejectedError, TurnpikeUnavailableError } from '../client/turnpike-client.js';
import { ContentUnavailableError } from '../content/content-store.js';
import { registerCodecServerCommand } from './commands/codec-server.js';
import { registerContentCommands } from './commands/content.js';
import { registerConversationCommands } from './commands/conversations.js';
import { registerDecisionsCommand } from './commands/decisions.js';
import { registerEvalCommands } from './commands/eval.js';
import { registerParkedCommands } from './commands/parked.js';
import { QueueBacklogError, registerQueueCommands } from './commands/queue.js';
import { registerReplayCommand } from './commands/replay.js';
import { registerTurnCommands } from './commands/turns.js';
import { registerTurnForkCommand } from './commands/turn-fork.js';
import { CliContext, type CliIo, type GlobalOptions } from './context.js';
import { REJECTION_TYPES } from '../workflows/messages/rejection-types.js';
import { TURN_STATUSES } from '../workflows/types/turn-statuses.js';

export type { CliIo, OutputStream } from './context.js';

/** What the process's exit code means; printed by `turnpike --help`. */
export const EXIT_CODES = {
  ok: 0,
  /** Anything unexpected: no connection, a failed turn, a bug. */
  error: 1,
  /** Commander's: unknown command or option, missing or invalid argument. */
  usage: 2,
  /** The workflow rejected the request (TurnpikeRejectedError); its type (one of REJECTION_TYPES) and message are printed. */
  rejected: 3,
  /** No turn or conversation with that id, no stored object with that reference. */
  notFound: 4,
  /** `queue backlog`: tasks wait on a queue it read (QueueBacklogError). */
  backlog: 5,
} as const;

/** The rejection types a CLI command can exit 3 with: the turns' and the client's, not the HTTP API's. */
const CLI_REJECTION_TYPES = Object.entries(REJECTION_TYPES).filter(([, info]) => info.raisedBy.some((by) => by !== 'api'));

const HELP_AFTER = `
Exit codes:
  0  ok
  1  unexpected error (no connection, a failed turn, ...)
  2  usage error (unknown command or option, missing or invalid argument)
  3  rejected by the workflow; its type (below) and message are printed on stderr
  4  not found: no turn or conversation with that id, no stored object with that reference
  5  queue backlog: tasks wait on a task queue it read

Rejection types (exit code 3):
${CLI_REJECTION_TYPES.map(([type, info]) => `  ${type.padEnd(24)}${info.description.replaceAll('`', '')}`).join('\n')}

Turn statuses (watch, show, AgentTurnStatus):
${Object.entries(TURN_STATUSES).map(([status, info]) => `  ${status.padEnd(16)}${info.description.replaceAll('`', '')}`).join('\n')}

Environment:
  TEMPORAL_ADDRESS     the Temporal frontend, host:port (default localhost:7233)
  TEMPORAL_NAMESPACE   the namespace (default "default")
                       (TEMPORAL_API_KEY, TLS variables and TEMPORAL_PROFILE as the temporal CLI reads them)
  TURNPIKE_TASK_QUEUE  the turnpike workers' task queue (default "turnpike"; --task-queue overrides it)
  TURNPIKE_MODEL_TASK_QUEUE
                       the workers' model queue, if any (queue backlog reads it too)
  TURNPIKE_CONTENT_STORE
                       the content store (content get, content sweep): a folder, file:,
                       postgresql:// or s3:// URL (default .turnpike/content); the workers' store
  NO_COLOR             no colours (colours are only used when stdout is a terminal)

With --json, stdout holds JSON only (watch and --wait: one JSON object per line) and errors are
{"error": {...}} on stderr.

Examples:
  turnpike start --wait 'refund $250 on order 1001'
  turnpike pending
  turnpike approve <turnId> <approvalId> --as alice
  turnpike deny <turnId> <approvalId> --reason 'not during the freeze'
  turnpike show <turnId>
  turnpike send support-7 'look up order 1002' && turnpike history support-7
  turnpike queue backlog    # before turning fairness on: exits 5 while tasks wait
  turnpike replay --query 'WorkflowType="agentTurn" AND ExecutionStatus="Running"' --workflows dist/workflows.js`;

/** Builds the program for one run; commander keeps parse state on it, so it is not reused. */
function buildProgram(context: CliContext, io: CliIo): Command {
  const program = new Command('turnpike')
    .description('Run LLM-agent turns on Temporal and resolve the tool calls that wait for people.')
    .option('--json', 'machine-readable JSON on stdout, nothing else')
    .option('--task-queue <name>', 'task queue of the turnpike workers (default: TURNPIKE_TASK_QUEUE or "turnpike")')
    .configureHelp({ showGlobalOptions: true })
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      outputError: (text, write) => write(context.errorColors.red(text)),
    })
    // Throw instead of process.exit, so runCli returns the exit code (and tests run in-process).
    .exitOverride()
    .showHelpAfterError('(turnpike --help lists the commands and exit codes)')
    .addHelpText('after', HELP_AFTER)
    .hook('preAction', (_program, command) => {
      context.options = command.optsWithGlobals<GlobalOptions>();
    });
  registerTurnCommands(program, context);
  registerTurnForkCommand(program, context);
  registerParkedCommands(program, context);
  registerConversationCommands(program, context);
  registerDecisionsCommand(program, context);
  registerCodecServerCommand(program, context);
  registerContentCommands(program, context);
  registerReplayCommand(program, context);
  registerEvalCommands(program, context);
  registerQueueCommands(program, context);
  return program;
}

/** Prints what went wrong (commander already printed usage errors) and returns the exit code. */
function report(context: CliContext, error: unknown): number {
  if (error instanceof CommanderError) {
    // --help and --version exit 0; bare `turnpike` shows the help as an error, like any usage error.
    return error.exitCode === 0 ? EXIT_CODES.ok : EXIT_CODES.usage;
  }
  if (error instanceof TurnpikeRejectedError) {
    context.error({ exitCode: EXIT_CODES.rejected, kind: 'rejected', type: error.type, message: error.message });
    return EXIT_CODES.rejected;
  }
  if (error instanceof QueueBacklogError) {
    context.error({ exitCode: EXIT_CODES.backlog, kind: 'backlog', message: error.message });
    return EXIT_CODES.backlog;
  }
  if (error instanceof TurnpikeUnavailableError) {
    // Temporal could not take it in time (client/transient-wait.ts): the same command may be run again.
    context.error({ exitCode: EXIT_CODES.rejected, kind: 'rejected', type: 'Unavailable', message: error.message });
    return EXIT_CODES.rejected;
  }
  if (error instanceof ContentUnavailableError) {
    // Missing is "not found"; corrupt is an error: the object is there but cannot be trusted.
    const exitCode = error.reason === 'missing' ? EXIT_CODES.notFound : EXIT_CODES.error;
    context.error({ exitCode, kind: error.reason === 'missing' ? 'not found' : 'corrupt', message: error.message });
    return exitCode;
  }
  if (error instanceof TurnpikeNotFoundError || error instanceof WorkflowNotFoundError) {
    context.error({ exitCode: EXIT_CODES.notFound, kind: 'not found', message: error.message });
    return EXIT_CODES.notFound;
  }
  // Temporal's errors often say what happened only in their cause ("Workflow execution failed").
  const { message, cause } = error instanceof Error ? error : { message: String(error), cause: undefined };
  const detail = cause instanceof Error && cause.message && cause.message !== message ? `: ${cause.message}` : '';
  context.error({ exitCode: EXIT_CODES.error, kind: 'error', message: `${message}${detail}` });
  return EXIT_CODES.error;
}

/**
 * Runs the CLI on `argv` (the arguments after `turnpike`) and returns the exit code; never calls
 * `process.exit`. Connects from the environment unless `io.client` is given.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const context = new CliContext(io);
  try {
    await buildProgram(context, io).parseAsync([...argv], { from: 'user' });
    return EXIT_CODES.ok;
  } catch (error) {
    return report(context, error);
  } finally {
    await context.close();
  }
}

/** The `turnpike` executable: process arguments and streams in, exit code out. */
export async function main(argv: readonly string[] = process.argv.slice(2)): Promise<void> {
  // `turnpike pending | head` closes the pipe early: that is the reader's choice, not an error.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(process.exitCode ?? EXIT_CODES.ok);
  });
  // exitCode, not exit(): stdout is flushed before the process ends, also when piped.
  process.exitCode = await runCli(argv, { stdout: process.stdout, stderr: process.stderr });
}
