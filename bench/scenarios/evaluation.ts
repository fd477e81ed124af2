/**
 * Evaluation runs at scale (issue 58; `npm run bench -- --only eval`): `--turns` recorded turns
 * (1,000; 100 with --quick) of a fixed mix (evaluation/recorded-turns.ts: tool calls, approvals
 * approved and denied, plain and typed answers), then evaluated with `TurnpikeClient.evaluate` and
 * a change the scripted model ignores (a system prompt), once per `--eval-concurrency` (4, the
 * default, and 16). One turnpike worker process, which also runs the evaluation Worker
 * (`createWorker({ evaluation: {} })`, no tool safe). Per run:
 *   - turns evaluated a minute: N ÷ the wall time from `evaluate()` to the run's result;
 *   - Temporal actions and history events per evaluated turn: the mean of a sample of the
 *     evaluation turns' histories (`<evaluationId>/<index>`, 20 spread over the run) plus every
 *     history of the `turnpikeEvaluation` workflow (all its runs across continue-as-new) ÷ N;
 *     activity retries, also actions, are counted apart;
 *   - the report's totals against what the mix implies, and the tools' runs in the worker
 *     process during the run (its effects), which must be 0;
 *   - the worker process's RSS and CPU (it runs both Workers).
 */
import os from 'node:os';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Client } from '@temporalio/client';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import type { EvaluationReport } from '../../workflows/evaluation/evaluation-types.js';
import type { BenchContext } from '../context.js';
import { expectedToolRuns, expectedTotals, kindOf, recordTurns, type TurnKind } from '../evaluation/recorded-turns.js';
import { laneTimeline, type LaneTimeline } from '../evaluation/run-timeline.js';
import { actionsOf, activityRetriesOf } from '../history-actions.js';
import type { ReportRow } from '../report-row.js';
import { percentile, round } from '../stats.js';
import { cpuSecondsBetween, WorkerHandle } from '../worker-handle.js';
import type { ProcessSample } from '../worker-protocol.js';

const HISTORY_SAMPLE = 20;
const CHANGE = { system: 'Answer in one short sentence.' };

interface HistoryCount {
  histories: number;
  actions: number;
  events: number;
  activityRetries: number;
  actionTypes: Record<string, number>;
  /** Actions per history by the turn's kind (the sampled turns' only). */
  actionsByKind?: Record<string, number>;
}

export interface EvaluationRunFigures {
  concurrency: number;
  evaluationId: string;
  seconds: number;
  turnsPerMinute: number;
  /** The evaluation turns' latency (start to close, from the report's rows), ms. */
  turnLatencyMs: { p50: number; p95: number };
  /** Per evaluated turn: the sampled evaluation turns' mean, the run's own histories ÷ N, and their sum. */
  perTurn: { actions: number; events: number; turnActions: number; turnEvents: number; runActions: number; runEvents: number };
  evaluationTurns: HistoryCount;
  evaluationRun: HistoryCount;
  /**
   * A lane's mean time per turn (concurrency × wall time ÷ N), and in it the means of the three
   * things a lane waits for in turn (run-timeline.ts); `between` is the rest, the run's workflow tasks.
   */
  lane: LaneTimeline & { perTurnMs: number; betweenMs: number };
  /** `totals` of the report, and whether it equals what the mix implies. */
  totals: EvaluationReport['totals'];
  totalsAsExpected: boolean;
  /** Runs of each tool during the evaluation run (effects): must be all 0. */
  toolRuns: Record<string, number>;
  workerCpuSeconds: number;
  rssMB: { start: number; end: number };
  loadAverage: { start: number; end: number };
}

export interface EvaluationFigures {
  turns: number;
  kinds: Record<string, number>;
  record: { seconds: number; turnsPerMinute: number; workerCpuSeconds: number; toolRuns: Record<string, number>; toolRunsAsExpected: boolean };
  /** The same sample of originals, for comparison: actions and events per recorded turn. */
  originals: HistoryCount;
  rssMB: { ready: number };
  runs: EvaluationRunFigures[];
}

const mb = (bytes: number) => round(bytes / 2 ** 20, 0);
const diff = (after: Record<string, number>, before: Record<string, number>) =>
  Object.fromEntries([...new Set([...Object.keys(after), ...Object.keys(before)])].map((key) => [key, (after[key] ?? 0) - (before[key] ?? 0)]));
/**
 * The sampled turns: two runs of 10 consecutive indexes from a multiple of 10 (at the start and
 * the middle), so the sample holds the mix in its proportions (recorded-turns.ts: the kind is the
 * index mod 10).
 */
const sampleIndexes = (count: number) =>
  Array.from({ length: HISTORY_SAMPLE }, (_, index) => Math.floor(index / 10) * Math.floor(count / 20) * 10 + (index % 10)).filter((index) => index < count);

type History = Awaited<ReturnType<ReturnType<Client['workflow']['getHandle']>['fetchHistory']>>;

async function countHistories(histories: Array<Promise<History>>, kinds?: TurnKind[]): Promise<HistoryCount> {
  const count: HistoryCount = { histories: 0, actions: 0, events: 0, activityRetries: 0, actionTypes: {} };
  const byKind: Record<string, { actions: number; n: number }> = {};
  for (const [position, history] of (await Promise.all(histories)).entries()) {
    const events = history.events ?? [];
    const counted = actionsOf(events);
    if (kinds) {
      const kind = (byKind[kinds[position]] ??= { actions: 0, n: 0 });
      kind.actions += counted.actions;
      kind.n++;
    }
    count.histories++;
    count.events += events.length;
    count.actions += counted.actions;
    count.activityRetries += activityRetriesOf(events);
    for (const [type, n] of Object.entries(counted.types)) count.actionTypes[type] = (count.actionTypes[type] ?? 0) + n;
  }
  if (kinds) count.actionsByKind = Object.fromEntries(Object.entries(byKind).map(([kind, { actions, n }]) => [kind, round(actions / n, 2)]));
  return count;
}

/** Every run of the evaluation workflow, latest first, each found from the next one's start event. */
async function runHistories(client: Client, evaluationId: string): Promise<{ count: HistoryCount; lanes: LaneTimeline }> {
  const histories: History[] = [];
  let runId: string | undefined;
  for (;;) {
    const history = await client.workflow.getHandle(evaluationId, runId).fetchHistory();
    histories.push(history);
    runId = history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId ?? undefined;
    if (!runId) break;
  }
  return { count: await countHistories(histories.map((history) => Promise.resolve(history))), lanes: laneTimeline(histories.map((history) => history.events ?? [])) };
}

const matches = (actual: unknown, expected: unknown): boolean =>
  expected !== null && typeof expected === 'object'
    ? Object.entries(expected).every(([key, value]) => matches((actual as Record<string, unknown> | undefined)?.[key], value))
    : actual === expected;

export async function measureEvaluation(context: BenchContext): Promise<EvaluationFigures> {
  const { evalTurns: turns, evalConcurrency } = context.options;
  const taskQueue = `bench-eval-${randomUUID().slice(0, 8)}`;
  const worker = await WorkerHandle.start({ kind: 'turnpike', evaluation: true, address: context.address, namespace: context.namespace, taskQueue, bundlePath: context.bundlePaths.turnpike });
  try {
    const ready = await worker.sample();
    context.log(`  eval: worker ready (RSS ${mb(ready.rss)} MiB); recording ${turns} turns`);
    const recorded = await recordTurns(context.client, taskQueue, turns, taskQueue.slice(-8), context.log);
    const afterRecord = await worker.sample();
    const recordRuns = diff(afterRecord.toolRuns, ready.toolRuns);
    const expectedRuns = expectedToolRuns(recorded.kinds);
    context.log(`  eval: ${turns} turns recorded in ${recorded.seconds.toFixed(1)} s; tool runs ${JSON.stringify(recordRuns)}`);
    const sample = sampleIndexes(turns);
    const sampleKinds = sample.map(kindOf);
    const originals = await countHistories(sample.map((index) => context.client.workflow.getHandle(recorded.turnIds[index]).fetchHistory()), sampleKinds);
    const turnpike = new TurnpikeClient({ client: context.client, taskQueue });
    const runs: EvaluationRunFigures[] = [];
    for (const concurrency of evalConcurrency) {
      const before = await worker.sample();
      const loadStart = os.loadavg()[0];
      const started = performance.now();
      const { evaluationId } = await turnpike.evaluate({ turnIds: recorded.turnIds, change: CHANGE, concurrency });
      await context.client.workflow.getHandle(evaluationId).result();
      const seconds = (performance.now() - started) / 1000;
      const after: ProcessSample = await worker.sample();
      const loadEnd = os.loadavg()[0];
      const report = await turnpike.evaluationReport(evaluationId);
      const rowIndex = new Map(recorded.turnIds.map((turnId, index) => [turnId, index]));
      const evaluationTurns = await countHistories(sample.map((index) => context.client.workflow.getHandle(`${evaluationId}/${index}`).fetchHistory()), sampleKinds);
      const { count: evaluationRun, lanes } = await runHistories(context.client, evaluationId);
      const laneMsPerTurn = (concurrency * seconds * 1000) / turns;
      const latencies = report.rows.map((row) => row.evaluated?.latencyMs ?? Number.NaN).filter(Number.isFinite).sort((a, b) => a - b);
      const turnActions = evaluationTurns.actions / evaluationTurns.histories;
      const turnEvents = evaluationTurns.events / evaluationTurns.histories;
      const figures: EvaluationRunFigures = {
        concurrency,
        evaluationId,
        seconds: round(seconds, 1),
        turnsPerMinute: round((turns / seconds) * 60, 0),
        turnLatencyMs: { p50: round(percentile(latencies, 50), 0), p95: round(percentile(latencies, 95), 0) },
        perTurn: {
          actions: round(turnActions + evaluationRun.actions / turns, 2),
          events: round(turnEvents + evaluationRun.events / turns, 2),
          turnActions: round(turnActions, 2),
          turnEvents: round(turnEvents, 2),
          runActions: round(evaluationRun.actions / turns, 2),
          runEvents: round(evaluationRun.events / turns, 2),
        },
        evaluationTurns,
        evaluationRun,
        lane: { perTurnMs: round(laneMsPerTurn, 0), ...lanes, betweenMs: round(laneMsPerTurn - lanes.prepareMs - lanes.childMs - lanes.compareMs, 0) },
        totals: report.totals,
        totalsAsExpected: report.status === 'completed' && report.rows.length === turns && report.rows.every((row) => rowIndex.has(row.turnId)) && matches(report.totals, expectedTotals(recorded.kinds)),
        toolRuns: diff(after.toolRuns, before.toolRuns),
        workerCpuSeconds: round(cpuSecondsBetween(before, after), 1),
        rssMB: { start: mb(before.rss), end: mb(after.rss) },
        loadAverage: { start: round(loadStart, 2), end: round(loadEnd, 2) },
      };
      context.log(`  eval: concurrency ${concurrency}: ${JSON.stringify({ ...figures, evaluationTurns: undefined, evaluationRun: undefined, totals: undefined })}`);
      if (!figures.totalsAsExpected) context.log(`  eval: totals NOT as expected: ${JSON.stringify(report.totals)} against ${JSON.stringify(expectedTotals(recorded.kinds))}`);
      runs.push(figures);
    }
    return {
      turns,
      kinds: recorded.kinds,
      record: { seconds: round(recorded.seconds, 1), turnsPerMinute: round((turns / recorded.seconds) * 60, 0), workerCpuSeconds: round(cpuSecondsBetween(ready, afterRecord), 1), toolRuns: recordRuns, toolRunsAsExpected: matches(recordRuns, expectedRuns) },
      originals,
      rssMB: { ready: mb(ready.rss) },
      runs,
    };
  } finally {
    await worker.stop();
  }
}

/** The report's rows: turnpike alone (the floor has no evaluation). */
export function evaluationRows(figures: EvaluationFigures): ReportRow[] {
  const at = (run: EvaluationRunFigures) => `${figures.turns.toLocaleString('en-US')} recorded turns, concurrency ${run.concurrency}, scripted model, 1 worker process`;
  const row = (figure: string, value: string, target = '—', met: boolean | null = null): ReportRow => ({ figure: `eval: ${figure}`, turnpike: value, floor: '—', ratio: '—', target, met });
  const effects = (run: EvaluationRunFigures) => Object.values(run.toolRuns).reduce((sum, value) => sum + value, 0);
  const original = figures.originals;
  return [
    row(`recording (${figures.turns} turns, 50 at once)`, `${figures.record.seconds} s (${figures.record.turnsPerMinute} turns/min, ${figures.record.workerCpuSeconds} worker CPU-s); tool runs ${JSON.stringify(figures.record.toolRuns)}; originals ${round(original.actions / original.histories, 2)} actions / ${round(original.events / original.histories, 2)} events per turn (${original.histories} histories)`),
    ...figures.runs.flatMap((run) => [
      row(`turns evaluated per minute (${at(run)})`, `${run.turnsPerMinute} (${run.seconds} s; evaluation turn p50 / p95 ${run.turnLatencyMs.p50} / ${run.turnLatencyMs.p95} ms)`),
      row(
        `Temporal actions / history events per evaluated turn (${at(run)})`,
        `${run.perTurn.actions} / ${run.perTurn.events} = turn ${run.perTurn.turnActions} / ${run.perTurn.turnEvents} (${run.evaluationTurns.histories} histories) + run ${run.perTurn.runActions} / ${run.perTurn.runEvents} (${run.evaluationRun.histories} runs); activity retries ${run.evaluationTurns.activityRetries + run.evaluationRun.activityRetries}`,
      ),
      row(
        `a lane's time per turn: prepare + evaluation turn + compare + between (${at(run)})`,
        `${run.lane.perTurnMs} ms = ${run.lane.prepareMs} + ${run.lane.childMs} + ${run.lane.compareMs} + ${run.lane.betweenMs} ms`,
      ),
      row(`report's totals as the mix implies; tool effects during the run (${at(run)})`, `${run.totalsAsExpected ? 'yes' : 'NO'}; ${effects(run)}`, 'yes; 0', run.totalsAsExpected && effects(run) === 0),
      row(`worker RSS start → end, CPU (${at(run)})`, `${run.rssMB.start} → ${run.rssMB.end} MiB; ${run.workerCpuSeconds} CPU-s (${round((run.workerCpuSeconds * 1000) / figures.turns, 0)} ms per turn); load ${run.loadAverage.start} → ${run.loadAverage.end}`),
    ]),
  ];
}
