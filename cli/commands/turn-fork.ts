/**
 * `turns fork <turnId> --at <step>`: a new turn from another's transcript up to the end of step k,
 * on another model, system prompt or tools (docs/conversations.md, "Forking a turn from step k");
 * `turns forks <turnId>`: the forks started from a turn; `turns transcript <turnId>`: a turn's whole
 * transcript, a fork's read through the turns it was forked from.
 */
import type { Command } from 'commander';
import type { ModelSettings } from '../../workflows/types/index.js';
import { historyText } from '../format.js';
import { parseList, parseModel, parsePositive } from '../arguments.js';
import type { CliContext } from '../context.js';
import { INTERVAL_OPTION, watchTurn } from './turns.js';

interface ForkOptions {
  at: number;
  model?: ModelSettings;
  system?: string;
  tools?: string[];
  id?: string;
  wait?: boolean;
  interval: number;
}

export function registerTurnForkCommand(program: Command, context: CliContext): void {
  const turns = program.commands.find((command) => command.name() === 'turns') ?? program.command('turns').description('commands on one turn');
  turns
    .command('fork')
    .description("start a new turn from a turn's transcript up to the end of step --at (its tool results carried, none run again)")
    .argument('<turnId>')
    .requiredOption('--at <step>', 'the last step of the original the fork carries', parsePositive)
    .option('--model <provider[:model]>', "the fork's model (default: the original's)", parseModel)
    .option('--system <prompt>', "the fork's system prompt (default: the original's)")
    .option('--tools <names>', "comma-separated tool names the fork is offered (default: the original's)", parseList)
    .option('--id <turnId>', "the fork's workflow id (default <turnId>/fork-<step>-…)")
    .option('--wait', 'then watch the fork until it ends, as `turnpike watch` does')
    .option(...INTERVAL_OPTION)
    .action(async (turnId: string, options: ForkOptions) => {
      const turnpike = await context.client();
      const fork = await turnpike.forkTurn(turnId, {
        atStep: options.at,
        ...(options.model ? { model: options.model } : {}),
        ...(options.system !== undefined ? { system: options.system } : {}),
        ...(options.tools ? { tools: options.tools } : {}),
        ...(options.id ? { turnId: options.id } : {}),
      });
      const { colors } = context;
      const line = () => `Forked ${colors.bold(fork.turnId)} from ${turnId} at step ${options.at} (${fork.messages} messages carried)`;
      if (!options.wait) {
        context.print(fork, () => `${line()}\n${colors.dim(`  turnpike watch ${fork.turnId}`)}`);
        return;
      }
      context.event({ type: 'forked', ...fork }, line);
      await watchTurn(context, turnpike, fork.turnId, { intervalMs: options.interval });
    });
  turns
    .command('forks')
    .description('list the forks started from a turn (oldest first)')
    .argument('<turnId>')
    .action(async (turnId: string) => {
      const forks = await (await context.client()).forks(turnId);
      context.print(forks, () =>
        forks.length === 0
          ? `No forks of ${turnId}`
          : forks.map((fork) => `${fork.turnId}  step ${fork.atStep}  ${fork.status.toLowerCase()}  ${fork.startedAt.toISOString()}${fork.startedBy ? `  by ${fork.startedBy}` : ''}`).join('\n'),
      );
    });
  turns
    .command('transcript')
    .description("print a turn's whole transcript (a fork's too: the messages it carries are read from the original)")
    .argument('<turnId>')
    .action(async (turnId: string) => {
      const messages = await (await context.client()).turnTranscript(turnId);
      context.print({ turnId, messages }, () => historyText({ messages, offset: 0, total: messages.length }, context.colors));
    });
}
