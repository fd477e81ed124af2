/**
 * `replay`: replay before deploy. Fetches the histories a visibility query finds on the cluster
 * (address and TLS from the environment, as every command) and replays them against this build's
 * workflow code, your own workflows file included (`--workflows`); prints each history checked
 * and exits 1 naming the first that does not replay, with the event and the reason.
 *
 *   turnpike replay --query 'WorkflowType="agentTurn" AND ExecutionStatus="Running"' --workflows dist/workflows.js
 *   turnpike replay --query '...' --save replay/prod     # keep them as a replay set
 *   turnpike replay --from replay/prod                   # offline, from a saved set
 */
import { inspect } from 'node:util';
import { IllegalStateError } from '@temporalio/common';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import type { Command } from 'commander';
import { parseDuration, parsePositive } from '../arguments.js';
import type { CliContext } from '../context.js';
import { createTurnpikeDataConverter } from '../../content/data-converter.js';
import { replayHistories, type ReplayedHistory } from '../../worker/replay-histories.js';

interface ReplayOptions {
  query?: string;
  since?: number;
  limit?: number;
  save?: string;
  from?: string;
  workflows?: string;
}

const DEFAULT_QUERY = 'WorkflowType="agentTurn" AND ExecutionStatus="Running"';

function describe(result: ReplayedHistory): string {
  return `${result.workflowId}${result.runId ? ` (run ${result.runId})` : ''}`;
}

/**
 * The replay worker's logs on stderr, warnings and errors only, never on stdout: by default the
 * SDK prints Core's warnings (a failing workflow task for each history that does not replay) to
 * stdout, in colour, and its own INFO lines to stderr. The report is what goes to stdout. A process
 * that installed its own Runtime (one that embeds the CLI) keeps it: a Runtime is installed once.
 */
function installReplayRuntime(context: CliContext): void {
  try {
    Runtime.install({
      logger: new DefaultLogger('WARN', ({ level, message, meta }) =>
        context.note(`${level} ${message}${meta ? ` ${inspect(meta, { colors: false, breakLength: Infinity, depth: 4 })}` : ''}`),
      ),
      telemetryOptions: { logging: { filter: { core: 'WARN', other: 'ERROR' }, forward: {} } },
    });
  } catch (error) {
    if (!(error instanceof IllegalStateError)) throw error;
  }
}

export function registerReplayCommand(program: Command, context: CliContext): void {
  program
    .command('replay')
    .description("replay the cluster's histories against this build's workflow code before you deploy it")
    .option('--query <query>', `visibility query of the workflows to replay (default: ${DEFAULT_QUERY})`)
    .option('--since <duration>', 'only workflows started this recently, e.g. 7d, 12h', parseDuration)
    .option('--limit <n>', 'at most this many histories (default 1000)', parsePositive)
    .option('--save <dir>', 'save the fetched histories there as a replay set')
    .option('--from <dir>', 'replay a saved set instead of fetching (offline)')
    .option('--workflows <file>', "your workflows module, as your worker bundles it (default: turnpike's own)")
    .action(async (options: ReplayOptions) => {
      installReplayRuntime(context);
      const turnpike = options.from ? undefined : await context.client();
      const dataConverter = turnpike ? createTurnpikeDataConverter({ contentStore: turnpike.contentStore }) : createTurnpikeDataConverter();
      const report = await replayHistories({
        ...(turnpike ? { client: turnpike.client, query: options.query ?? DEFAULT_QUERY } : {}),
        ...(options.from ? { from: options.from } : {}),
        ...(options.since !== undefined ? { sinceMs: options.since } : {}),
        ...(options.limit !== undefined ? { limit: options.limit } : {}),
        ...(options.save ? { save: options.save } : {}),
        ...(options.workflows ? { workflowsPath: options.workflows } : {}),
        dataConverter,
        onResult: (result) => {
          if (context.json) return;
          context.event({}, () =>
            result.ok
              ? `${context.colors.green('ok')}    ${describe(result)}`
              : `${context.colors.red('FAIL')}  ${describe(result)}: ${result.eventId !== undefined ? `event ${result.eventId}: ` : ''}${result.reason ?? ''}`,
          );
        },
      });
      context.print(report, () => `${report.checked.length} histories checked, ${report.failures.length} did not replay${options.save ? `; saved to ${options.save}` : ''}`);
      const first = report.failures[0];
      if (first) {
        throw new Error(`${describe(first)} does not replay${first.eventId !== undefined ? ` at event ${first.eventId}` : ''}: ${first.reason ?? 'unknown reason'}`);
      }
    });
}
