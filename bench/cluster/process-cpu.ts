/**
 * CPU time of a process tree, from /proc: a process and every process below it (PostgreSQL's
 * backends under the postmaster, the Temporal server under the `sh` that starts it). Each
 * process counts its own user + system time and that of its children it has already reaped
 * (`cutime`, `cstime`), so a backend that ended between two readings still counts.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's times (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

interface ProcStat {
  pid: number;
  ppid: number;
  ticks: number;
}

function readStat(pid: number): ProcStat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: split after its last ')'.
    const fields = text.slice(text.lastIndexOf(') ') + 2).split(' ');
    // From field 3 on: state ppid … utime (14) stime (15) cutime (16) cstime (17).
    return { pid, ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]) };
  } catch {
    return undefined; // It ended while the table was read.
  }
}

/** Seconds of CPU used so far by `root` and all its descendants (NaN when `root` is not running). */
export function treeCpuSeconds(root: number | undefined): number {
  if (root === undefined) return NaN;
  const all = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map((name) => readStat(Number(name)))
    .filter((stat): stat is ProcStat => stat !== undefined);
  const children = new Map<number, ProcStat[]>();
  for (const stat of all) children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), stat]);
  const top = all.find((stat) => stat.pid === root);
  if (!top) return NaN;
  let ticks = 0;
  const stack = [top];
  while (stack.length > 0) {
    const stat = stack.pop()!;
    ticks += stat.ticks;
    stack.push(...(children.get(stat.pid) ?? []));
  }
  return ticks / TICKS_PER_SECOND;
}
