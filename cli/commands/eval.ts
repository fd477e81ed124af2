/**
 * `eval`: an evaluation run over recorded turns (docs/evaluations.md), by visibility query or by
 * ids, with another model, system prompt or tools; it waits for the report and prints it as a
 * table (`--json`: the report). `--graders` names functions registered on the evaluation worker;
 * `--rubric` (with `--rubric-model`) adds a model grader. `eval-report <evaluationId>`: a run's
 * report, so far or whole.
 */
import type { Command } from 'commander';
import { TurnpikeRejectedError } from '../../client/errors.js';
import type { EvaluationReport, EvaluationRow } from '../../workflows/evaluation/evaluation-types.js';
import type { EvaluationGrade, GraderSpec } from '../../workflows/evaluation/grader-types.js';
import type { ModelSettings } from '../../workflows/types/index.js';
import { parseCount, parseList, parseModel, parsePositive } from '../arguments.js';
import type { CliContext } from '../context.js';

interface EvalOptions {
  query?: string;
  turns?: string[];
  model?: ModelSettings;
  system?: string;
  tools?: string[];
  fromStep?: number;
  concurrency?: number;
  maxTokens?: number;
  maxCost?: number;
  taskQueue?: string;
  graders?: string[];
  rubric?: string;
  rubricModel?: ModelSettings;
  rubricName: string;
  passScore?: number;
  wait: boolean;
  interval: number;
}

const calls = (row: Pick<EvaluationRow, 'toolCalls'>) => {
  const c = row.toolCalls;
  return c ? `${c.same}/${c.differentInput}/${c.new}/${c.missing}` : '-';
};

/** A grade in a cell: `0.75 pass`, `0.20 fail`, `error`. */
const gradeCell = (grade: EvaluationGrade | undefined) => (!grade ? '-' : grade.error !== undefined || grade.score === undefined ? 'error' : `${grade.score.toFixed(2)} ${grade.pass ? 'pass' : 'fail'}`);

/** The report as a table: one line per turn (a column per grader), then the totals, then a line per grader. */
export function reportTable(report: EvaluationReport): string {
  const graders = Object.keys(report.totals.graders ?? {});
  const header = ['turn', 'status', 'text', 'output', 'calls s/d/n/m', 'replayed', 'not run', 'ran safe', 'would ask', 'denied', 'tokens', ...graders];
  const lines = report.rows.map((row) =>
    row.error !== undefined
      ? [row.turnId, 'error', row.error.slice(0, 60), '', '', '', '', '', '', '', '', ...graders.map(() => '')]
      : [
          row.turnId,
          row.status!.original === row.status!.evaluated ? row.status!.evaluated : `${row.status!.original}→${row.status!.evaluated}`,
          row.textChanged ? 'changed' : 'same',
          row.output ? (row.output.valid ? (row.output.changedFields.length > 0 ? `~${row.output.changedFields.join(',')}` : 'same') : 'invalid') : '-',
          calls(row),
          String(row.replayed ?? 0),
          String(row.notRun ?? 0),
          String(row.ranSafe ?? 0),
          String(row.wouldAsk ?? 0),
          String(row.denials ?? 0),
          `${row.original?.usage.tokens ?? 0}→${row.evaluated?.usage.tokens ?? 0}`,
          ...graders.map((name) => gradeCell(row.grades?.find((grade) => grade.grader === name))),
        ],
  );
  const t = report.totals;
  lines.push([
    `total (${t.turns}/${report.total})`,
    report.status,
    `${t.textChanged} changed`,
    `${t.outputInvalid} invalid`,
    calls(t),
    String(t.replayed),
    String(t.notRun),
    String(t.ranSafe),
    String(t.wouldAsk),
    String(t.denials),
    `${t.original.usage.tokens}→${t.evaluated.usage.tokens}`,
    ...graders.map((name) => (t.graders![name].meanScore !== undefined ? `mean ${t.graders![name].meanScore!.toFixed(2)}` : '-')),
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...lines.map((line) => line[column].length)));
  const format = (line: string[]) => line.map((cell, column) => cell.padEnd(widths[column])).join('  ').trimEnd();
  const graderLines = graders.map((name) => {
    const total = t.graders![name];
    const mean = total.meanScore !== undefined ? `mean ${total.meanScore.toFixed(2)}` : 'no score';
    return `grader ${name}: ${mean}, ${total.passes} passed, ${total.fails} failed, ${total.errors} errors${total.tokens > 0 ? `, ${total.tokens} tokens` : ''}`;
  });
  return [`Evaluation ${report.evaluationId}`, format(header), ...lines.map(format), ...graderLines].join('\n');
}

async function waitForReport(context: CliContext, evaluationId: string, intervalMs: number): Promise<EvaluationReport> {
  const turnpike = await context.client();
  for (;;) {
    const report = await turnpike.evaluationReport(evaluationId);
    if (report.status !== 'running') return report;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

export function registerEvalCommands(program: Command, context: CliContext): void {
  program
    .command('eval')
    .description('evaluate recorded turns with another model, system prompt or tools; their tools answered from their records, none run (docs/evaluations.md)')
    .option('--query <visibility query>', 'the turns, e.g. \'AgentTurnStatus="completed" AND StartTime > "2026-01-01T00:00:00Z"\'')
    .option('--turns <ids>', 'the turns, comma-separated ids (instead of --query)', parseList)
    .option('--model <provider[:model]>', "the evaluation turns' model (default: each original's)", parseModel)
    .option('--system <prompt>', 'their system prompt')
    .option('--tools <names>', 'comma-separated tool names they are offered', parseList)
    .option('--from-step <k>', 'fork each turn after its step k (default 0: the whole turn again)', parseCount)
    .option('--concurrency <n>', 'evaluation turns at once (default 4)', parsePositive)
    .option('--max-tokens <n>', 'stop starting evaluation turns once they spent this many tokens', parsePositive)
    .option('--max-cost <usd>', 'stop starting evaluation turns once they cost this much', Number)
    .option('--task-queue <name>', 'the evaluation task queue (default <task queue>-eval)')
    .option('--graders <names>', 'comma-separated graders registered on the evaluation worker (evaluation.graders)', parseList)
    .option('--rubric <text>', 'a model grader: the rubric it grades each evaluated turn by (needs --rubric-model)')
    .option('--rubric-model <provider[:model]>', "the model grader's model", parseModel)
    .option('--rubric-name <name>', "the model grader's name in the report", 'rubric')
    .option('--pass-score <score>', 'the score from 0 to 1 at or above which the model grader passes a turn (default 0.5)', Number)
    .option('--no-wait', 'print the evaluation id and return at once')
    .option('--interval <ms>', 'how often to poll the report while waiting', parsePositive, 1000)
    .action(async (options: EvalOptions) => {
      const turnpike = await context.client();
      if ((options.rubric === undefined) !== (options.rubricModel === undefined)) throw new TurnpikeRejectedError('Invalid eval: --rubric and --rubric-model go together', 'InvalidRequest');
      const graders: GraderSpec[] = [
        ...(options.graders ?? []),
        ...(options.rubric !== undefined ? [{ name: options.rubricName, rubric: options.rubric, model: options.rubricModel!, ...(options.passScore !== undefined ? { passScore: options.passScore } : {}) }] : []),
      ];
      const budget = { ...(options.maxTokens !== undefined ? { tokens: options.maxTokens } : {}), ...(options.maxCost !== undefined ? { costUsd: options.maxCost } : {}) };
      const started = await turnpike.evaluate({
        ...(options.query !== undefined ? { query: options.query } : {}),
        ...(options.turns ? { turnIds: options.turns } : {}),
        change: {
          ...(options.model ? { model: options.model } : {}),
          ...(options.system !== undefined ? { system: options.system } : {}),
          ...(options.tools ? { tools: options.tools } : {}),
        },
        ...(options.fromStep !== undefined ? { fromStep: options.fromStep } : {}),
        ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
        ...(Object.keys(budget).length > 0 ? { budget } : {}),
        ...(options.taskQueue !== undefined ? { taskQueue: options.taskQueue } : {}),
        ...(graders.length > 0 ? { graders } : {}),
      });
      if (!options.wait) {
        context.print(started, () => `Evaluating ${started.turns} turns: ${context.colors.bold(started.evaluationId)}\n${context.colors.dim(`  turnpike eval-report ${started.evaluationId}`)}`);
        return;
      }
      const report = await waitForReport(context, started.evaluationId, options.interval);
      context.print(report, () => reportTable(report));
    });
  program
    .command('eval-report')
    .description("an evaluation run's report: so far while it runs, whole once done")
    .argument('<evaluationId>')
    .action(async (evaluationId: string) => {
      const report = await (await context.client()).evaluationReport(evaluationId);
      context.print(report, () => reportTable(report));
    });
}
