/**
 * `decisions`: the audit trail of approval decisions (a person's or a policy's), newest first.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { parsePositive, parseTenant } from '../arguments.js';
import type { CliContext } from '../context.js';
import { decisionsTable } from '../format.js';

interface DecisionsOptions {
  tool?: string;
  approver?: string;
  since?: string;
  until?: string;
  limit?: number;
  tenant?: string;
  jsonl?: boolean;
}

function isoTime(value: string): string {
  const time = Date.parse(value);
  if (Number.isNaN(time)) throw new InvalidArgumentError('expected a date and time, e.g. 2026-11-23T09:00:00Z');
  return new Date(time).toISOString();
}

export function registerDecisionsCommand(program: Command, context: CliContext): void {
  program
    .command('decisions')
    .description('the audit trail: approval decisions on the task queue, newest first')
    .option('--tool <name>', 'only this tool\'s decisions')
    .option('--approver <identity>', 'only this approver\'s decisions')
    .option('--since <time>', 'decided at or after this time (ISO 8601)', isoTime)
    .option('--until <time>', 'decided before this time (ISO 8601; the next page)', isoTime)
    .option('--limit <n>', 'at most this many (default 100, at most 1000)', parsePositive)
    .option('--tenant <tenant>', 'only the decisions on turns of this tenant', parseTenant)
    .option('--jsonl', 'one JSON object per line, for export')
    .action(async (options: DecisionsOptions) => {
      const turnpike = await context.client();
      const { jsonl, ...query } = options;
      const decisions = await turnpike.listDecisions(query);
      if (jsonl) {
        for (const decision of decisions) context.jsonLine(decision);
        return;
      }
      context.print(decisions, () => (decisions.length === 0 ? context.colors.dim('No decisions.') : decisionsTable(decisions, context.colors)));
    });
}
