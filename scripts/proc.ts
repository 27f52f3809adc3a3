/** What /proc says of processes, for the chaos program and the benchmark. */
import { readdirSync, readFileSync } from 'node:fs';

/** What /proc/<pid>/stat says about a process: enough to find its family and to tell it from a later process with its pid. */
export interface ProcStat {
  pid: number;
  /** The one-letter state (R, S, D, T, Z, ...). */
  state: string;
  ppid: number;
  pgrp: number;
  session: number;
  /** When it started, in clock ticks since boot: a pid reused by another process has another start. */
  startTicks: number;
  /** utime + stime, in clock ticks. */
  cpuTicks: number;
  /** cutime + cstime: the CPU of its children that it has waited for, in clock ticks. */
  reapedTicks: number;
  comm: string;
}

/** The process's stat, or undefined when it is gone (or was never there). */
export function readStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // "pid (comm) S ppid pgrp session ...": comm may hold spaces and parentheses, the fields follow the last ')'.
  const close = text.lastIndexOf(')');
  const fields = text.slice(close + 2).split(' ');
  return {
    pid,
    comm: text.slice(text.indexOf('(') + 1, close),
    state: fields[0] ?? '?',
    ppid: Number(fields[1]),
    pgrp: Number(fields[2]),
    session: Number(fields[3]),
    // field 22 of stat; fields[] starts at field 3
    startTicks: Number(fields[19]),
    cpuTicks: Number(fields[11]) + Number(fields[12]),
    reapedTicks: Number(fields[13]) + Number(fields[14]),
  };
}

/** A zombie (exited, not yet reaped) runs nothing and holds nothing but its pid: it counts as gone. */
export function isRunning(stat: ProcStat | undefined): stat is ProcStat {
  return stat !== undefined && stat.state !== 'Z' && stat.state !== 'X';
}

/** Every process running now. */
export function listProcesses(): ProcStat[] {
  const all: ProcStat[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readStat(Number(name));
    if (isRunning(stat)) all.push(stat);
  }
  return all;
}

/** The command line of a pid, for a report ("" when it is gone). */
export function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return '';
  }
}

/** The processes in `running` that descend from `roots` (the roots themselves excluded). */
export function descendants(running: ProcStat[], roots: number[]): ProcStat[] {
  const childrenOf = new Map<number, ProcStat[]>();
  for (const stat of running) childrenOf.set(stat.ppid, [...(childrenOf.get(stat.ppid) ?? []), stat]);
  const found: ProcStat[] = [];
  const seen = new Set<number>(roots);
  const queue = [...roots];
  for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
    for (const child of childrenOf.get(pid) ?? []) {
      if (seen.has(child.pid)) continue;
      seen.add(child.pid);
      found.push(child);
      queue.push(child.pid);
    }
  }
  return found;
}
