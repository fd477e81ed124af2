/**
 * `pending`, `approve`, `deny` and `submit`: find parked tool calls and resolve them.
 */
import { Option, type Command } from 'commander';
import type { ApproveToolCallInput } from '../../workflows/types/index.js';
import { parseJson, parsePositive, parseTenant } from '../arguments.js';
import type { CliContext } from '../context.js';
import { parkedCallsTable, resolveHint } from '../format.js';
import { approverList } from '../approval-progress.js';

interface DecisionOptions {
  as?: string;
  group?: string[];
  reason?: string;
  input?: unknown;
  inputHash?: string;
}

export function registerParkedCommands(program: Command, context: CliContext): void {
  program
    .command('pending')
    .description('list parked tool calls: approvals to decide, client tools awaiting a result, questions from MCP servers to answer')
    .option('--query <query>', 'a Temporal visibility query for the turns to look at (default: parked turns on the task queue)')
    .option('--conversation <conversationId>', 'only the parked calls of this conversation\'s running turn')
    .option('--limit <n>', 'look at this many turns at most (default 500)', parsePositive)
    .addOption(new Option('--tenant <tenant>', 'only the parked calls of turns of this tenant').argParser(parseTenant).conflicts('conversation'))
    .addHelpText('after', '\nThe listing comes from Temporal visibility, which may lag a turn that parked a moment ago.')
    .action(async (options: { query?: string; conversation?: string; limit?: number; tenant?: string }) => {
      const turnpike = await context.client();
      const calls = options.conversation
        ? await turnpike.conversationPending(options.conversation)
        : await turnpike.listParkedCalls({ query: options.query, limit: options.limit, ...(options.tenant !== undefined ? { tenant: options.tenant } : {}) });
      const { colors } = context;
      context.print(calls, () =>
        calls.length === 0
          ? colors.dim('No parked calls.')
          : [parkedCallsTable(calls, colors, Date.now()), ...calls.map((call) => colors.dim(resolveHint(call.turnWorkflowId, call)))].join('\n'),
      );
    });

  program
    .command('approve')
    .description('approve a parked call: the tool runs (with --input: on that input)')
    .argument('<turnId>')
    .argument('<approvalId>', 'from `turnpike pending` (apr_...)')
    .option('--as <approver>', 'who approves; checked against the tool\'s approvers, when it has a list')
    .option('--group <group...>', 'the approver\'s groups, checked against the tool\'s approverGroups')
    .option('--reason <text>', 'recorded with the decision')
    .option('--input <json>', 'run the tool with this input instead (validated against its schema again)', parseJson)
    .option('--input-hash <hash>', 'only if the call\'s input still has this hash (inputHash from `pending --json`)')
    .action(async (turnId: string, approvalId: string, options: DecisionOptions) => decide(context, turnId, approvalId, true, options));

  program
    .command('deny')
    .description('deny a parked call: the tool never runs; the model is told the reason')
    .argument('<turnId>')
    .argument('<approvalId>', 'from `turnpike pending` (apr_...)')
    .requiredOption('--reason <text>', 'why; the model reads it')
    .option('--as <approver>', 'who denies; checked against the tool\'s approvers, when it has a list')
    .option('--group <group...>', 'the approver\'s groups, checked against the tool\'s approverGroups')
    .option('--input-hash <hash>', 'only if the call\'s input still has this hash (inputHash from `pending --json`)')
    .action(async (turnId: string, approvalId: string, options: DecisionOptions) => decide(context, turnId, approvalId, false, options));

  program
    .command('delegate')
    .description('hand a parked approval to named approvers or groups: they may decide it and are nudged')
    .argument('<turnId>')
    .argument('<approvalId>', 'from `turnpike pending` (apr_...)')
    .requiredOption('--as <approver>', 'who delegates; must be allowed to decide the call')
    .option('--group <group...>', 'the delegator\'s groups, checked against the tool\'s approverGroups')
    .option('--to <approver...>', 'the people it goes to')
    .option('--to-group <group...>', 'the groups it goes to')
    .requiredOption('--reason <text>', 'why; recorded and sent with the nudge')
    .action(async (turnId: string, approvalId: string, options: { as: string; group?: string[]; to?: string[]; toGroup?: string[]; reason: string }) => {
      const turnpike = await context.client();
      const to = { ...(options.to ? { approvers: options.to } : {}), ...(options.toGroup ? { approverGroups: options.toGroup } : {}) };
      const result = await turnpike.delegateApproval(turnId, { approvalId, approver: options.as, ...(options.group ? { approverGroups: options.group } : {}), to, reason: options.reason });
      context.print(result, () => `${context.colors.green('✔ delegated')} ${approvalId} (${result.toolCallId}) to ${approverList(to)}`);
    });

  program
    .command('submit')
    .description('submit the result of a client tool call (e.g. ask_user), or the answer to an MCP server\'s question')
    .argument('<turnId>')
    .argument('<toolCallId>', 'from `turnpike pending` (call_...)')
    .argument('<output>', 'the result as JSON, e.g. \'{"answer":"large"}\', or for a question \'{"action":"accept","content":{…}}\' / \'{"action":"decline"}\'; checked against the tool\'s output schema or the requested schema', parseJson)
    .option('--error', 'the tool failed: <output> is the error the model is told')
    .action(async (turnId: string, toolCallId: string, output: unknown, options: { error?: boolean }) => {
      const turnpike = await context.client();
      const accepted = await turnpike.submitToolResult(turnId, { toolCallId, output, ...(options.error ? { isError: true } : {}) });
      context.print(accepted, () => `${context.colors.green('✔')} ${options.error ? 'error' : 'result'} submitted for ${toolCallId}; the turn goes on`);
    });
}

async function decide(context: CliContext, turnId: string, approvalId: string, approved: boolean, options: DecisionOptions): Promise<void> {
  const turnpike = await context.client();
  const decision: ApproveToolCallInput = {
    approvalId,
    approved,
    ...(options.as !== undefined ? { approver: options.as } : {}),
    ...(options.group !== undefined ? { approverGroups: options.group } : {}),
    ...(options.reason !== undefined ? { reason: options.reason } : {}),
    ...(options.input !== undefined ? { input: options.input } : {}),
    ...(options.inputHash !== undefined ? { inputHash: options.inputHash } : {}),
  };
  const result = await turnpike.approveToolCall(turnId, decision);
  const { colors } = context;
  const votes = result.votes;
  context.print(result, () =>
    votes && !votes.decided
      ? `${colors.green(approved ? '✔ vote recorded' : '✘ vote recorded')} on ${approvalId} (${result.toolCallId}): ${votes.approvals}/${votes.quorum} approvals; the call waits for more`
      : approved
      ? `${colors.green('✔ approved')} ${approvalId} (${result.toolCallId}); the turn goes on`
      : `${colors.red('✘ denied')} ${approvalId} (${result.toolCallId}): ${options.reason}`,
  );
}
