/**
 * `send` and `history`: a conversation keeps its history server-side; the CLI sends only the
 * new text and reads the history back in pages.
 */
import { Option, type Command } from 'commander';
import type { ModelSettings, ParkedMessagePolicy } from '../../workflows/types/index.js';
import type { TurnPriority } from '../../client/tenants.js';
import { defaultModel, parseCount, parseModel, parsePositive, parsePriority, parseTenant, PRIORITY_HELP } from '../arguments.js';
import type { CliContext } from '../context.js';
import { historyText } from '../format.js';
import { INTERVAL_OPTION, watchTurn } from './turns.js';

interface SendOptions {
  model?: ModelSettings;
  system?: string;
  policy?: ParkedMessagePolicy;
  messageId?: string;
  tenant?: string;
  priority?: TurnPriority;
  wait?: boolean;
  interval: number;
}

export function registerConversationCommands(program: Command, context: CliContext): void {
  program
    .command('send')
    .description('send a user message to a conversation, as its next turn (the first message creates it)')
    .argument('<conversationId>')
    .argument('<text...>', 'the message (the words are joined with spaces)')
    .option('--model <provider[:model]>', 'the conversation\'s model, when this message creates it (default: as npm start picks)', parseModel)
    .option('--system <prompt>', 'the conversation\'s system prompt, when this message creates it')
    .addOption(new Option('--policy <policy>', 'when a turn is still running or parked: queue this message behind it, or supersede it').choices(['queue', 'supersede']))
    .option('--message-id <id>', 'your id for this message: sending it again starts no second turn')
    .option('--tenant <tenant>', 'the tenant the conversation runs for, when this message creates it; its turns carry it on', parseTenant)
    .option('--priority <priority>', `when this message creates the conversation, ${PRIORITY_HELP}`, parsePriority)
    .option('--wait', 'then watch this message\'s turn until it ends, as `turnpike watch` does')
    .option(...INTERVAL_OPTION)
    .action(async (conversationId: string, words: string[], options: SendOptions) => {
      const turnpike = await context.client();
      const reply = await turnpike.sendMessage({
        conversationId,
        text: words.join(' '),
        conversation: { model: options.model ?? defaultModel(), ...(options.system !== undefined ? { system: options.system } : {}) },
        ...(options.policy ? { policy: options.policy } : {}),
        ...(options.messageId ? { messageId: options.messageId } : {}),
        ...(options.tenant !== undefined ? { tenant: options.tenant } : {}),
        ...(options.priority !== undefined ? { priority: options.priority } : {}),
      });
      const { colors } = context;
      const line = () =>
        `${reply.queued ? 'Queued' : 'Started'} ${colors.bold(reply.turnWorkflowId)} for message ${reply.messageId}` +
        `${reply.queued ? ' (it starts when the turns ahead of it end)' : ''}${reply.supersededTurn ? `; superseded ${reply.supersededTurn}` : ''}`;
      if (!options.wait) {
        context.print(reply, () => `${line()}\n${colors.dim(`  turnpike watch ${reply.turnWorkflowId}`)}`);
        return;
      }
      context.event({ type: 'sent', ...reply }, line);
      await watchTurn(context, turnpike, reply.turnWorkflowId, { intervalMs: options.interval, waitForStart: true });
    });

  program
    .command('history')
    .description('show a conversation\'s messages: those of its finished turns')
    .argument('<conversationId>')
    .option('--offset <n>', 'the first message to show (default 0)', parseCount)
    .option('--limit <n>', 'how many messages to show (default 100)', parsePositive)
    .action(async (conversationId: string, options: { offset?: number; limit?: number }) => {
      const turnpike = await context.client();
      const page = await turnpike.history(conversationId, { offset: options.offset, limit: options.limit });
      context.print(page, () => historyText(page, context.colors));
    });
}
