/**
 * Where the machine's CPU went during a stretch of the fleet figure: the cores each process used
 * on average (its own time, not its children's), and how busy the machine was, from /proc. The
 * fleet runs the Temporal dev server, three workers, the bench's process (B's client, the fake
 * provider, the measurements) and A's starter on the same cores, so a turn's latency under the
 * burst depends on who else is running.
 */
import { readFileSync } from 'node:fs';
import { treeCpuSeconds } from '../cluster/process-cpu.js';
import { round } from '../stats.js';

/** Clock ticks per second of /proc's times (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

/**
 * A process's own user + system CPU seconds so far, without its children's (the bench's process
 * is the parent of every other one here); NaN once it has ended.
 */
function ownCpuSeconds(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After the command name in parentheses, which may hold spaces: utime and stime are fields 14 and 15.
    const fields = text.slice(text.lastIndexOf(') ') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return NaN;
  }
}

/** Busy and total clock ticks of the whole machine, from /proc/stat's first line. */
function machineTicks(): { busy: number; total: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = fields.reduce((sum, value) => sum + value, 0);
  // user nice system idle iowait irq softirq steal: idle and iowait are not busy.
  return { busy: total - fields[3]! - fields[4]!, total };
}

export interface CpuStretch {
  seconds: number;
  /** Cores each named process used on average (CPU seconds ÷ wall seconds). */
  cores: Record<string, number>;
  /** The machine's busy share of all its cores, 0..1. */
  machineBusy: number;
}

/**
 * Marks the start of a stretch now; `end()` gives the stretch's figures: for each of `processes`
 * its processes' own time, for each of `trees` a process and all below it (PostgreSQL's backends).
 */
export function cpuStretch(processes: Record<string, Array<number | undefined>>, trees: Record<string, number | undefined> = {}): { end: () => CpuStretch } {
  const cpuOf = () => ({
    ...Object.fromEntries(Object.entries(processes).map(([name, pids]) => [name, pids.reduce<number>((sum, pid) => sum + ownCpuSeconds(pid), 0)])),
    ...Object.fromEntries(Object.entries(trees).map(([name, pid]) => [name, treeCpuSeconds(pid)])),
  });
  const started = performance.now();
  const before = cpuOf();
  const machineBefore = machineTicks();
  return {
    end() {
      const seconds = (performance.now() - started) / 1_000;
      const after = cpuOf();
      const machineAfter = machineTicks();
      return {
        seconds: round(seconds, 1),
        cores: Object.fromEntries(Object.entries(after).map(([name, cpu]) => [name, round((cpu - before[name]!) / seconds, 2)])),
        machineBusy: round((machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total), 2),
      };
    },
  };
}
