/**
 * Company scale on the production topology (issue 57, part 1; `npm run bench -- --only cluster`):
 * the cluster of bench/cluster/topology.ts (PostgreSQL, the Temporal server with SQL visibility,
 * three workers, two API processes, the PostgreSQL live channel). In one run:
 *   1. park `clusterTurns` turns (100,000; 10,000 with --quick; `--turns N`): time to park,
 *      Temporal actions per parked turn (from a sample of histories), database bytes per turn;
 *   2. an approver's first page of parked calls (`GET /api/approvals`, rights-filtered) on both
 *      processes;
 *   3. decisions at a steady rate through both processes, request → the tool's effect, with
 *      hostile decisions in the same window (none may be accepted);
 *   4. 200 SSE readers over both processes on 50 streaming turns: first token to reader, and the
 *      NOTIFY traffic each process receives;
 * and worker and API RSS at the start (cluster up, nothing parked) and the end.
 * Not measured here: the dashboard's first paint (a browser's), and the figures at 100,000 unless
 * the run is the full one.
 */
import { randomUUID } from 'node:crypto';
import type { BenchContext } from '../context.js';
import type { ReportRow } from '../report-row.js';
import { measureDecisions, measureListing, type DecisionFigures, type ListingFigures } from '../cluster/decisions.js';
import { parkTurns, PARKED_QUERY, type ParkFigures } from '../cluster/park.js';
import { measureReaders, startStreamingFake, type ReaderFigures } from '../cluster/readers.js';
import { measureFirstPaint, type FirstPaint } from '../cluster/first-paint.js';
import { API_PROCESSES, startClusterTopology, WORKERS, type ClusterTopology, type DatabaseActivity } from '../cluster/topology.js';
import { round } from '../stats.js';

const DECISION_SECONDS = 30;
/** Hostile decisions spread over the decisions' window: 1,000 at the default 20 a second. */
const HOSTILE_PER_DECISION = 1_000 / (20 * DECISION_SECONDS);
const STREAMING_TURNS = 50;
const READERS = 200;

export interface ClusterFigures {
  workers: number;
  apiProcesses: number;
  park: ParkFigures;
  databaseBytes: { before: number; after: number; perParkedTurn: number };
  /** PostgreSQL transactions and rows written (Temporal's databases) per parked turn, and per decision in the decisions' window (hostile ones and the effects' reads included). */
  /** CPU milliseconds per decision in the decisions' window: all workers together, all API processes together, the Temporal server, PostgreSQL. */
  cpuPerDecisionMs: { workers: number; apis: number; server: number; postgres: number };
  /** CPU milliseconds per parked turn while parking, the same four. */
  cpuPerParkedTurnMs: { workers: number; apis: number; server: number; postgres: number };
  databaseWork: { perParkedTurn: { commits: number; rowsWritten: number }; perDecision: { commits: number; rowsWritten: number } };
  listing: ListingFigures;
  /** The dashboard's first paint in Chromium, per identity (bench/cluster/first-paint.ts), or why it was not measured. */
  firstPaint?: Record<string, FirstPaint> | { skipped: string };
  decisions: DecisionFigures;
  readers?: ReaderFigures;
  readersError?: string;
  /** MiB, per process: cluster up with nothing parked, after parking, and at the end. */
  rss: { start: { workers: number[]; apis: number[] }; parked: { workers: number[]; apis: number[] }; end: { workers: number[]; apis: number[] } };
}

type CpuSeconds = ReturnType<ClusterTopology['cpuSeconds']>;

/** CPU milliseconds per unit of work between two readings, each part of the cluster (workers and API processes summed). */
function cpuPer(count: number, [from, to]: [CpuSeconds, CpuSeconds]) {
  const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);
  const ms = (seconds: number) => round((seconds * 1000) / count, 1);
  return { workers: ms(sum(to.workers) - sum(from.workers)), apis: ms(sum(to.apis) - sum(from.apis)), server: ms(to.server - from.server), postgres: ms(to.postgres - from.postgres) };
}

const mib = (rss: { workers: number[]; apis: number[] }) => ({ workers: rss.workers.map((bytes) => round(bytes / 2 ** 20, 0)), apis: rss.apis.map((bytes) => round(bytes / 2 ** 20, 0)) });

export async function measureCluster(context: BenchContext): Promise<ClusterFigures> {
  const { clusterTurns, clusterDecisionRate } = context.options;
  const streaming = await startStreamingFake();
  const topology = await startClusterTopology({ bundlePath: context.bundlePaths.turnpike, openaiBaseURL: streaming.fake.openaiBaseURL, log: context.log });
  try {
    const start = mib(topology.rss());
    const bytesBefore = await topology.databaseBytes();
    const activityBefore = await topology.databaseActivity();
    context.log(`  cluster up: ${WORKERS} workers, ${API_PROCESSES} API processes; RSS ${JSON.stringify(start)} MiB; databases ${(bytesBefore / 2 ** 20).toFixed(0)} MiB; parking ${clusterTurns} turns`);
    const cpuStart = topology.cpuSeconds();
    const park = await parkTurns(topology.client, clusterTurns, context.log);
    const cpuParked = topology.cpuSeconds();
    const bytesAfter = await topology.databaseBytes();
    const activityParked = await topology.databaseActivity();
    const parked = mib(topology.rss());
    context.log(`  cluster: ${JSON.stringify(park)}; databases +${((bytesAfter - bytesBefore) / 2 ** 20).toFixed(0)} MiB; RSS ${JSON.stringify(parked)} MiB`);

    const { figures: listing, calls } = await measureListing(topology.apis);
    context.log(`  cluster: listing ${JSON.stringify(listing)}`);
    const firstPaint = await measureFirstPaint(topology.apis[0]!, ['approver-3', 'mallory', 'approver-1']);
    context.log(`  cluster: dashboard first paint ${JSON.stringify(firstPaint)}`);
    const cpuBefore = topology.cpuSeconds();
    const decisionCount = Math.min(Math.round(clusterDecisionRate * DECISION_SECONDS), Math.floor(calls.length / 2));
    const decisions = await measureDecisions(topology.client, topology.apis, calls, {
      decisions: decisionCount,
      ratePerSecond: clusterDecisionRate,
      hostile: Math.round(decisionCount * HOSTILE_PER_DECISION),
      parkedQuery: PARKED_QUERY,
      log: context.log,
    });
    const cpuAfter = topology.cpuSeconds();
    const activityDecided = await topology.databaseActivity();
    const cpuPerDecisionMs = cpuPer(Math.max(1, decisions.decisions), [cpuBefore, cpuAfter]);
    context.log(`  cluster: decisions ${JSON.stringify(decisions)}`);
    const per = (count: number, [from, to]: [DatabaseActivity, DatabaseActivity]) => ({ commits: round((to.commits - from.commits) / count, 1), rowsWritten: round((to.rowsWritten - from.rowsWritten) / count, 1) });
    const databaseWork = { perParkedTurn: per(clusterTurns, [activityBefore, activityParked]), perDecision: per(Math.max(1, decisions.decisions), [activityParked, activityDecided]) };
    context.log(`  cluster: database work ${JSON.stringify(databaseWork)}`);

    let readers: ReaderFigures | undefined;
    let readersError: string | undefined;
    try {
      readers = await measureReaders(topology, streaming, { turns: STREAMING_TURNS, readers: READERS, runId: randomUUID().slice(0, 8) });
      context.log(`  cluster: readers ${JSON.stringify(readers)}`);
    } catch (error) {
      readersError = error instanceof Error ? error.message : String(error);
      context.log(`  cluster: readers FAILED: ${readersError}`);
    }
    const end = mib(topology.rss());
    return {
      workers: WORKERS,
      apiProcesses: API_PROCESSES,
      park,
      databaseBytes: { before: bytesBefore, after: bytesAfter, perParkedTurn: round((bytesAfter - bytesBefore) / clusterTurns, 0) },
      databaseWork,
      cpuPerDecisionMs,
      cpuPerParkedTurnMs: cpuPer(clusterTurns, [cpuStart, cpuParked]),
      listing,
      firstPaint,
      decisions,
      ...(readers ? { readers } : {}),
      ...(readersError ? { readersError } : {}),
      rss: { start, parked, end },
    };
  } finally {
    await topology.stop();
    await streaming.fake.close();
  }
}

const cpuCells = (cpu: ClusterFigures['cpuPerDecisionMs']) => `${cpu.workers} / ${cpu.apis} / ${cpu.server} / ${cpu.postgres} ms`;

/** The report's rows: figures of turnpike alone (no floor on the cluster). */
export function clusterRows(figures: ClusterFigures): ReportRow[] {
  const n = figures.park.turns.toLocaleString('en-US');
  const at = `${n} parked, ${figures.workers} workers, ${figures.apiProcesses} API processes, PostgreSQL + Temporal server`;
  const row = (figure: string, value: string, target = '—', met: boolean | null = null): ReportRow => ({ figure: `cluster: ${figure} (${at})`, turnpike: value, floor: '—', ratio: '—', target, met });
  const { park, decisions, listing, readers, rss } = figures;
  const hostile = decisions.hostile;
  return [
    row('time to park', `${park.seconds} s (${park.turnsPerSecond} turns/s)`),
    row(`Temporal actions / history events per parked turn (${park.historySample} histories)`, `${park.actionsPerTurn} / ${park.eventsPerTurn}`),
    row('database bytes per parked turn (temporal + temporal_visibility)', `${(figures.databaseBytes.perParkedTurn / 1024).toFixed(1)} KiB`),
    row('PostgreSQL transactions / rows written per parked turn, and per decision (its window: hostile decisions and the effects\' reads included)', `${figures.databaseWork.perParkedTurn.commits} / ${figures.databaseWork.perParkedTurn.rowsWritten}; ${figures.databaseWork.perDecision.commits} / ${figures.databaseWork.perDecision.rowsWritten}`),
    row('CPU per decision in its window, all workers / all API processes / Temporal server / PostgreSQL (hostile decisions and the effects\' reads included)', cpuCells(figures.cpuPerDecisionMs)),
    row('CPU per parked turn while parking, all workers / all API processes / Temporal server / PostgreSQL', cpuCells(figures.cpuPerParkedTurnMs)),
    row(`an approver's first page (GET /api/approvals), p50 / max of ${listing.rounds * Object.keys(listing.listedByApprover).length}`, `${listing.p50Ms} / ${listing.maxMs} ms (listed ${JSON.stringify(listing.listedByApprover)})`),
    row(`each one's first page, p50 of ${listing.rounds} (ms)`, JSON.stringify(listing.p50MsByApprover ?? {})),
    ...(figures.firstPaint
      ? [
          row(
            "the dashboard's first paint in Chromium: sign-in → the first card (or the empty notice), cards then",
            'skipped' in figures.firstPaint ? `not measured: ${String(figures.firstPaint.skipped)}` : Object.entries(figures.firstPaint).map(([identity, paint]) => `${identity} ${paint.ms} ms (${paint.cards} cards)`).join('; '),
          ),
        ]
      : []),
    row(`decision → tool's effect p50 / p99 (${decisions.decisions} at ${decisions.ratePerSecond}/s over both APIs)`, `${decisions.toEffect.p50} / ${decisions.toEffect.p99} ms (answer p50 / p99 ${decisions.answered.p50} / ${decisions.answered.p99} ms; refused ${decisions.refused})`),
    row(`a decided turn's whole history: events / actions / bytes (${decisions.decidedTurn.sample} histories; parked: ${park.eventsPerTurn} / ${park.actionsPerTurn})`, `${decisions.decidedTurn.events} / ${decisions.decidedTurn.actions} / ${(decisions.decidedTurn.bytes / 1024).toFixed(1)} KiB (activity retries ${decisions.decidedTurn.activityRetries})`),
    row(`hostile decisions accepted (${hostile.sent} in the same window)`, `${hostile.accepted}; targets still parked: ${decisions.untouchedStillParked ? 'yes' : 'NO'}`, '0', hostile.accepted === 0 && decisions.untouchedStillParked && decisions.refused === 0),
    ...(readers
      ? [
          row(`first token → reader p50 / p95 (${readers.readers} SSE readers on ${readers.turns} streaming turns)`, `${readers.firstToken.p50} / ${readers.firstToken.p95} ms`),
          row('NOTIFY received per API process ÷ all the turns\' pieces', readers.notify.map((process) => `${process.received.notifications} / ${readers.allTurns.notifications} (${process.readTurns} of ${readers.turns} turns read)`).join('; ')),
        ]
      : [row('readers', `not measured: ${figures.readersError}`)]),
    row('worker RSS start → parked → end (MiB)', rss.start.workers.map((start, index) => `${start} → ${rss.parked.workers[index]} → ${rss.end.workers[index]}`).join('; ')),
    row('API RSS start → parked → end (MiB)', rss.start.apis.map((start, index) => `${start} → ${rss.parked.apis[index]} → ${rss.end.apis[index]}`).join('; ')),
  ];
}
