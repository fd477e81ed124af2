/**
 * The cluster chaos test's events, each done to the real processes of scripts/temporal-cluster.ts:
 *
 * - worker-kill: SIGKILL the worker that began the latest charge (so a charge is cut off mid-way),
 *   then start a replacement, so the cluster always has its number of workers.
 * - server-restart: SIGKILL the Temporal server and start it again on the same database and ports.
 * - postgres-restart: an immediate shutdown of PostgreSQL (SIGQUIT, as a crash: no checkpoint,
 *   sessions cut without a word, the WAL replayed on start) and a start on the same data folder
 *   and port, under the running server and workers.
 *
 * A restart is measured until the server serves again: a visibility count (the visibility
 * database) and a describe of a turn (the main database) both answer. What the server logged
 * meanwhile (errors and warnings) is kept for the report.
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import type { Client } from '@temporalio/client';
import type { Cluster } from '../../scripts/temporal-cluster.js';
import type { ChaosEvent } from './chaos-plan.js';

export interface ChargeAttempt {
  key: string;
  pid: number;
}

export interface EventReport {
  kind: ChaosEvent['kind'];
  /** Charge attempts seen when it fired, and seconds since the chaos began. */
  atAttempts: number;
  atSeconds: number;
  /** worker-kill: the pid killed, and how long its replacement took to poll. */
  pid?: number;
  replacementSeconds?: number;
  /** Restarts: PostgreSQL down (signal to ready), and the Temporal server's serving again (from the signal). */
  databaseDownSeconds?: number;
  servingAgainSeconds?: number;
  /** Restarts: error and warning lines the server logged until it served again, and their distinct messages. */
  serverErrors?: number;
  serverWarnings?: number;
  serverMessages?: string[];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The bytes a log file gained since `offset`. */
function logSince(file: string, offset: number): string {
  const size = statSync(file).size;
  if (size <= offset) return '';
  const buffer = Buffer.alloc(size - offset);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, buffer, 0, buffer.length, offset);
  } finally {
    closeSync(fd);
  }
  return buffer.toString('utf8');
}

function summarizeServerLog(text: string): Pick<EventReport, 'serverErrors' | 'serverWarnings' | 'serverMessages'> {
  const lines = text.split('\n').filter((line) => line.startsWith('{'));
  const levelOf = (line: string) => /"level":"(\w+)"/.exec(line)?.[1];
  const messages = new Map<string, number>();
  for (const line of lines) {
    if (levelOf(line) !== 'error') continue;
    const message = /"msg":"((?:[^"\\]|\\.)*)"/.exec(line)?.[1] ?? line.slice(0, 80);
    messages.set(message, (messages.get(message) ?? 0) + 1);
  }
  return {
    serverErrors: lines.filter((line) => levelOf(line) === 'error').length,
    serverWarnings: lines.filter((line) => levelOf(line) === 'warn').length,
    serverMessages: [...messages].sort((a, b) => b[1] - a[1]).slice(0, 6).map(([message, count]) => `${count}× ${message}`),
  };
}

export interface ChaosTarget {
  cluster: Cluster;
  client: Client;
  /** A turn to describe, to see the main database answer through the server. */
  probeWorkflowId: string;
  visibilityQuery: string;
  attempts(): ChargeAttempt[];
  began: number;
}

/** Polls until the server answers from both databases; resolves with when it first did. */
async function servingAgain(target: ChaosTarget, timeoutMs = 300_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      await target.client.withDeadline(Date.now() + 3_000, async () => {
        await target.client.workflow.count(target.visibilityQuery);
        await target.client.workflow.getHandle(target.probeWorkflowId).describe();
      });
      return Date.now();
    } catch (error) {
      lastError = error;
      await sleep(100);
    }
  }
  throw new Error(`the Temporal server did not serve again within ${timeoutMs / 1000}s: ${String(lastError)}`);
}

export async function fire(event: ChaosEvent, target: ChaosTarget): Promise<EventReport> {
  const { cluster } = target;
  const report: EventReport = { kind: event.kind, atAttempts: target.attempts().length, atSeconds: Math.round((Date.now() - target.began) / 1000) };
  if (event.kind === 'worker-kill') {
    const live = new Set(cluster.workers.filter((worker) => worker.running).map((worker) => worker.pid));
    const busyPid = target.attempts().reverse().find((attempt) => live.has(attempt.pid))?.pid ?? [...live][0];
    const victim = cluster.workers.find((worker) => worker.pid === busyPid)!;
    await victim.kill();
    report.pid = busyPid;
    const starting = Date.now();
    await cluster.startWorker();
    report.replacementSeconds = (Date.now() - starting) / 1000;
    return report;
  }
  const serverLog = cluster.server.process.logFile;
  const logOffset = statSync(serverLog).size;
  const down = Date.now();
  if (event.kind === 'server-restart') {
    await cluster.server.kill();
    await cluster.restartServer();
  } else {
    const { downMs } = await cluster.restartPostgres('immediate');
    report.databaseDownSeconds = downMs / 1000;
  }
  report.servingAgainSeconds = (await servingAgain(target) - down) / 1000;
  Object.assign(report, summarizeServerLog(logSince(serverLog, logOffset)));
  return report;
}

export function describeEvent(report: EventReport): string {
  const at = `at ${report.atSeconds}s (${report.atAttempts} attempts)`;
  if (report.kind === 'worker-kill') return `worker ${report.pid} SIGKILLed ${at}, replacement polling after ${report.replacementSeconds!.toFixed(1)}s`;
  const log = `; server log meanwhile: ${report.serverErrors} errors, ${report.serverWarnings} warnings${report.serverMessages!.length ? ` (${report.serverMessages!.join('; ')})` : ''}`;
  if (report.kind === 'server-restart') return `server SIGKILLed ${at}, serving again after ${report.servingAgainSeconds!.toFixed(1)}s${log}`;
  return `PostgreSQL immediate restart ${at}: down ${report.databaseDownSeconds!.toFixed(1)}s, server serving again after ${report.servingAgainSeconds!.toFixed(1)}s${log}`;
}
