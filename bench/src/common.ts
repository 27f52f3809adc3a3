/**
 * What every benchmark section shares: summaries of repeated runs, temp
 * folders, polling with deadlines, and the few /proc readings the sections
 * take (RSS, CPU ticks, descendants of a pid).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { descendants, listProcesses, readStat } from '../../dist/scripts/proc.js';
import { percentiles } from '../../dist/scripts/stats.js';

export { sleep };

/** A figure measured several times: its median, min and max, and every run. */
export interface Stat {
  median: number;
  min: number;
  max: number;
  n: number;
  runs: number[];
}

/** Round to `digits` decimals (figures are reported, not computed on further). */
export function round(value: number, digits = 0): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Median, min and max of repeated runs, each rounded to `digits` decimals. */
export function summarize(values: number[], digits = 0): Stat {
  if (values.length === 0) throw new Error('summarize: no runs');
  return {
    median: round(median(values), digits),
    min: round(Math.min(...values), digits),
    max: round(Math.max(...values), digits),
    n: values.length,
    runs: values.map((v) => round(v, digits)),
  };
}

export type Quantile = 'p50' | 'p95' | 'p99' | 'max';

/** Each quantile of every run's samples, summarised over the runs. */
export function quantilesOverRuns<Q extends Quantile>(
  runs: number[][],
  quantiles: readonly Q[],
  digits = 0,
): Record<Q, Stat> {
  const each = runs.map((samples) => percentiles(samples));
  return Object.fromEntries(
    quantiles.map((q) => [
      q,
      summarize(
        each.map((p) => p[q]),
        digits,
      ),
    ]),
  ) as Record<Q, Stat>;
}

/** Temp folders for the run; all removed by `removeAll` (the orchestrator's finally). */
export class TempDirs {
  private readonly dirs: string[] = [];
  constructor(private readonly keep = false) {}

  make(label: string): string {
    const dir = mkdtempSync(join(tmpdir(), `leasehold-bench-${label}-`));
    this.dirs.push(dir);
    return dir;
  }

  removeAll(): string[] {
    if (this.keep) return [...this.dirs];
    for (const dir of this.dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
    return [];
  }
}

export class DeadlineError extends Error {
  constructor(what: string, ms: number) {
    super(`timed out after ${Math.round(ms / 1000)} s waiting for ${what}`);
    this.name = 'DeadlineError';
  }
}

/** Call `check` every `intervalMs` until it returns a value other than undefined; throw past the deadline. */
export async function waitFor<T>(
  what: string,
  check: () => T | undefined | Promise<T | undefined>,
  options: { intervalMs?: number; timeoutMs?: number } = {},
): Promise<T> {
  const interval = options.intervalMs ?? 20;
  const timeout = options.timeoutMs ?? 30_000;
  const deadline = Date.now() + timeout;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new DeadlineError(what, timeout);
    await sleep(interval);
  }
}

/** The longest wait between two polls of a drain (pollDrain). */
const POLL_MAX_MS = 500;

/** When a drain was first seen doing work, and when it ended, by polling a counter. */
export interface DrainTiming {
  /** Wall time (performance.now) of the last poll that saw nothing finished yet. */
  lastIdleMs: number;
  /** Wall time the poll first saw a finished job, and how many were finished then. */
  firstSeenMs: number;
  doneAtFirstSeen: number;
  /** Wall time the poll saw every job finished. */
  endMs: number;
}

/**
 * Poll `countDone` until it reaches `total`. The steady rate is (total -
 * doneAtFirstSeen) / (endMs - firstSeenMs): start-up (node, forks,
 * migrations) is left out; the caller also has its own start time.
 *
 * Every `intervalMs` until the first job is done; then the wait is a quarter
 * of the time the rate so far says the next goal (the mark, then the end)
 * is away, between `intervalMs` and POLL_MAX_MS: a count of 100,000 rows is
 * 5 ms of SQLite, and one every 10 ms took half a core of 2 from the queue
 * being measured. The end is still seen within `intervalMs` of the last job.
 */
export async function pollDrain(
  countDone: () => Promise<number>,
  total: number,
  options: {
    intervalMs: number;
    timeoutMs: number;
    alive?: () => string | undefined;
    /** Once `atDone` jobs are done and `also()` holds (if given), `reached` is called, once. */
    mark?: { atDone: number; also?: () => boolean; reached: (done: number) => void };
  },
): Promise<DrainTiming> {
  const deadline = performance.now() + options.timeoutMs;
  let lastIdleMs = performance.now();
  let firstSeenMs: number | undefined;
  let doneAtFirstSeen = 0;
  for (;;) {
    const done = await countDone();
    const now = performance.now();
    if (done === 0) lastIdleMs = now;
    if (done > 0 && firstSeenMs === undefined) {
      firstSeenMs = now;
      doneAtFirstSeen = done;
    }
    if (options.mark !== undefined && done >= options.mark.atDone && (options.mark.also?.() ?? true)) {
      options.mark.reached(done);
      options.mark = undefined;
    }
    if (done >= total) return { lastIdleMs, firstSeenMs: firstSeenMs ?? now, doneAtFirstSeen, endMs: now };
    if (now > deadline) throw new DeadlineError(`${total} jobs to finish (${done} done)`, options.timeoutMs);
    const dead = options.alive?.();
    if (dead !== undefined) throw new Error(`${dead} (${done} of ${total} jobs done)`);
    const goal = options.mark?.atDone ?? total;
    const perMs = firstSeenMs === undefined || now <= firstSeenMs ? 0 : (done - doneAtFirstSeen) / (now - firstSeenMs);
    const untilGoalMs = perMs > 0 && goal > done ? (goal - done) / perMs : 0;
    await sleep(Math.min(POLL_MAX_MS, Math.max(options.intervalMs, untilGoalMs / 4)));
  }
}

/**
 * Jobs per second over the steady part of a drain (from the first finished
 * job seen to the last). A drain that the poll saw start and end at once
 * (tiny runs) is timed from the last poll that saw nothing done: a lower bound.
 */
export function steadyRate(timing: DrainTiming, total: number): number {
  const seconds = (timing.endMs - timing.firstSeenMs) / 1000;
  const jobs = total - timing.doneAtFirstSeen;
  if (seconds > 0 && jobs > 0) return jobs / seconds;
  return total / ((timing.endMs - timing.lastIdleMs) / 1000);
}

// ---- /proc

/** True while the pid names a running process (a zombie counts as gone). */
export { isPidAlive as isAlive } from '../../dist/src/pids.js';

/** Every live descendant of a pid (children, grandchildren, ...). */
export function descendantsOf(root: number): number[] {
  return descendants(listProcesses(), [root]).map((stat) => stat.pid);
}

/** The backends of the bench's own connections that count a drain's progress, and the ticks of those that ended. */
const probes = new Set<number>();
let endedProbeTicks = 0;

/** A backend (its pid) whose work is the bench's measuring, not the measured queue's: serverCpuTicks leaves it out. */
export function probeBackendStarted(pid: number): void {
  probes.add(pid);
}

/** Its connection is about to close: what it spent stays left out. */
export function probeBackendEnding(pid: number): void {
  endedProbeTicks += cpuTicks(pid) ?? 0;
  probes.delete(pid);
}

/**
 * The CPU ticks of the PostgreSQL server on this machine: each postmaster's
 * own, its backends' that it reaped, and its live children's. Two readings
 * cover every backend that ran between them, also one that came and went.
 * The bench's own counting connections are left out: a poll of a drain's
 * progress is not work of the queue it measures.
 */
export function serverCpuTicks(): number {
  const postgres = listProcesses().filter((stat) => stat.comm === 'postgres');
  const pids = new Set(postgres.map((stat) => stat.pid));
  const all = postgres.reduce((sum, stat) => sum + stat.cpuTicks + (pids.has(stat.ppid) ? 0 : stat.reapedTicks), 0);
  let probing = endedProbeTicks;
  for (const pid of probes) probing += cpuTicks(pid) ?? 0;
  return all - probing;
}

let ticksPerSecond: number | undefined;

/** Clock ticks per second of /proc/<pid>/stat times (`getconf CLK_TCK`, 100 on Linux). */
export function clockTicksPerSecond(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    } catch {
      ticksPerSecond = Number.NaN;
    }
    if (!Number.isFinite(ticksPerSecond) || ticksPerSecond <= 0) ticksPerSecond = 100;
  }
  return ticksPerSecond;
}

/** utime + stime of a pid, in clock ticks; undefined when it is gone. */
export function cpuTicks(pid: number): number | undefined {
  return readStat(pid)?.cpuTicks;
}

/** Bytes a pid has passed to write() and its kin (/proc/<pid>/io wchar), undefined when it is gone. */
export function writtenBytes(pid: number): number | undefined {
  try {
    const match = /^wchar:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'));
    return match === null ? undefined : Number(match[1]);
  } catch {
    return undefined;
  }
}

/** Resident memory of a pid in bytes (VmRSS), undefined when it is gone. */
export function rssBytes(pid: number): number | undefined {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match === null ? undefined : Number(match[1]) * 1024;
  } catch {
    return undefined;
  }
}

/** The machine's CPU busy share (all cores) over `ms`, from /proc/stat: how loaded it was before we began. */
export async function machineBusyPercent(ms: number): Promise<number> {
  const read = () => {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
    const values = line.trim().split(/\s+/).slice(1).map(Number);
    const idle = (values[3] ?? 0) + (values[4] ?? 0);
    const total = values.reduce((sum, v) => sum + v, 0);
    return { idle, total };
  };
  const before = read();
  await sleep(ms);
  const after = read();
  const total = after.total - before.total;
  return total <= 0 ? 0 : round((100 * (total - (after.idle - before.idle))) / total, 1);
}

export const MB = 1024 * 1024;
