/** The fleet figure's rows in the bench report (scenarios/fleet.ts measures them). */
import type { ReportRow } from '../report-row.js';
import { round } from '../stats.js';
import type { FleetFigures, FleetVariant } from './fleet.js';
import type { CpuStretch } from './fleet-cpu.js';
import { PHASES, type PhaseSummary } from './fleet-phases.js';

const PHASE_NAMES: Record<keyof PhaseSummary, string> = {
  startMs: 'start',
  firstTaskWaitMs: 'first task wait',
  firstTaskRunMs: 'run',
  modelQueueWaitMs: 'model queue',
  beforeRequestMs: 'in worker',
  modelCallMs: 'model call',
  lastTaskWaitMs: 'next task wait',
  finishMs: 'finish',
  resultMs: 'result',
};

/**
 * A phase summary as `start 3/9 (12) · first task wait …` ms: p50/p95 (the slowest 5%'s mean).
 * Results from before the segments were cut this way (bench/rejudge.ts) have four of them and no means.
 */
/** `server 1.2 · workers 0.5 · … cores (machine 95% busy)` over a stretch of the run. */
function cpuText(stretch: CpuStretch): string {
  return `${Object.entries(stretch.cores).map(([name, cores]) => `${name} ${cores}`).join(' · ')} cores (machine ${Math.round(stretch.machineBusy * 100)}% busy, ${stretch.seconds} s)`;
}

function phasesText(phases: Partial<PhaseSummary>): string {
  const text = (name: keyof PhaseSummary) => {
    const phase = phases[name]!;
    return `${PHASE_NAMES[name]} ${phase.p50}/${phase.p95}${phase.slowestMean === undefined ? '' : ` (${phase.slowestMean})`}`;
  };
  return `${PHASES.filter((name) => phases[name]).map(text).join(' · ')} ms`;
}

/**
 * The report's rows: each model queue variant in the turnpike column, today's in the floor column.
 * The throughput goal is met by A's and B's calls together: B's turns spend from the same limit
 * (one call a second of the provider's 8), so A's alone cannot reach 90% of it.
 */
export function fleetRows(fleet: FleetFigures): ReportRow[] {
  const { today, provider } = fleet;
  const starter = `${today.aStarter === 'process' ? ' from its own process' : today.aStarter === 'inline' ? " from the bench's process" : ''}${today.aStartConcurrency !== undefined ? ` (startTurns, ${today.aStartConcurrency} in flight)` : ''}`;
  const setting = `${fleet.workers} workers, A ${today.aTurns} turns at once${starter}, B 1/s; provider ${provider.requestsPerMinute} RPM / ${provider.tokensPerMinute} TPM per ${provider.windowMs / 1_000} s window (${provider.callsPerSecond} calls/s at ${provider.tokensPerCall} tokens)`;
  const tasks = fleet.workflowTasks ? `, ${fleet.workflowTasks} workflow tasks a worker` : '';
  const afterStarts = (variant: FleetVariant) =>
    variant.bAfterAStarts && variant.aStartsSeconds !== undefined
      ? `; started after A's ${variant.aStartsSeconds} s of starts (n=${variant.bAfterAStarts.n}): ${variant.bAfterAStarts.p50} / ${variant.bAfterAStarts.p95} ms (p95 ${round(variant.bAfterAStarts.p95 / variant.bAlone.p95, 2)}×)`
      : '';
  const ratioOf = (variant: FleetVariant) => round(variant.bUnderBurst.p95 / variant.bAlone.p95, 2);
  const variants: Array<[string, FleetVariant | undefined]> = [
    [`queue ${fleet.queueRate}/s${tasks}`, fleet.modelQueue],
    [
      `queue ${fleet.tokensQueueRate}/s + token counter ${fleet.counter?.tokensPerMinute} TPM over ${fleet.counter?.windowSeconds} s${fleet.counter?.interactiveShare ? `, ${fleet.counter.interactiveShare * 100}% kept for interactive calls` : ''} + headers${tasks}`,
      fleet.tokenCounter,
    ],
  ];
  const counter = fleet.counterRate;
  const counterRows: ReportRow[] = counter
    ? [
        {
          figure: `fleet: PostgreSQL token counter, bookings/s for one key (${counter.counters} counters × ${counter.concurrentBookers / counter.counters} concurrent bookers, ${counter.seconds} s, each booking settled)`,
          turnpike: `${counter.bookingsPerSecond}/s; a booking p50 ${counter.bookMs.p50} ms, p95 ${counter.bookMs.p95} ms`,
          floor: '—',
          ratio: '—',
          target: "above the provider's requests/s",
          met: null,
          note: "the limit's own cost: one key's bookings are serialised by its lock",
        },
      ]
    : [];
  return [...counterRows, ...variants.flatMap(([name, queue]) => {
    if (!queue) return [];
    const at = `${setting}; ${name}`;
    const note = `turnpike = ${name}; floor column = today (no model queue)`;
    return [
      { figure: `fleet: 429s received, RPM + TPM (${at})`, turnpike: `${queue.rejected.requests} + ${queue.rejected.tokens}`, floor: `${today.rejected.requests} + ${today.rejected.tokens}`, ratio: '—', target: '0 with the queue', met: queue.rejected.requests + queue.rejected.tokens === 0, note },
      {
        figure: `fleet: B's latency p50 / p95, alone → under A's burst (${at})`,
        turnpike: `${queue.bAlone.p50} / ${queue.bAlone.p95} → ${queue.bUnderBurst.p50} / ${queue.bUnderBurst.p95} ms (p95 ${ratioOf(queue)}×)${afterStarts(queue)}`,
        floor: `${today.bAlone.p50} / ${today.bAlone.p95} → ${today.bUnderBurst.p50} / ${today.bUnderBurst.p95} ms (p95 ${ratioOf(today)}×)`,
        ratio: '—',
        target: 'under burst ≤ 1.5× alone',
        met: ratioOf(queue) <= 1.5,
        note,
      },
      {
        figure: `fleet: A's turns/s ÷ the provider's calls/s (A and B's) (${at})`,
        turnpike: `${queue.aPerSecond}/s = ${(queue.aShareOfLimit * 100).toFixed(0)}% (${(queue.allShareOfLimit * 100).toFixed(0)}%)`,
        floor: `${today.aPerSecond}/s = ${(today.aShareOfLimit * 100).toFixed(0)}% (${(today.allShareOfLimit * 100).toFixed(0)}%)`,
        ratio: '—',
        target: "≥ 90% (A's and B's calls: B spends from the same limit)",
        met: queue.allShareOfLimit >= 0.9,
        note,
      },
      ...(queue.bPhasesUnderBurst
        ? [
            {
              figure: `fleet: B under A's burst by segment (scenarios/fleet-phases.ts), p50/p95 and in brackets the slowest 5% of B's turns' mean (${at})`,
              turnpike: phasesText(queue.bPhasesUnderBurst),
              floor: today.bPhasesUnderBurst ? phasesText(today.bPhasesUnderBurst) : '—',
              ratio: '—',
              target: '—',
              met: null,
              note,
            },
          ]
        : []),
      ...(queue.cpu
        ? [
            {
              figure: `fleet: cores used while A's turns were started → after, by process (scenarios/fleet-cpu.ts) (${at})`,
              turnpike: `${cpuText(queue.cpu.aStarts)} → ${cpuText(queue.cpu.afterStarts)}`,
              floor: today.cpu ? `${cpuText(today.cpu.aStarts)} → ${cpuText(today.cpu.afterStarts)}` : '—',
              ratio: '—',
              target: '—',
              met: null,
              note,
            },
          ]
        : []),
      { figure: `fleet: events / callModel attempts per turn (${at})`, turnpike: `${queue.eventsPerTurn} / ${queue.modelAttemptsPerTurn}`, floor: `${today.eventsPerTurn} / ${today.modelAttemptsPerTurn}`, ratio: '—', target: '—', met: null, note },
    ];
  })];
}
