/** What every drain shares (sections 1-3, 9, 12 and 17): its poll, its figures, and a drain by plain worker processes. */
import { join } from 'node:path';
import { clockTicksPerSecond, cpuTicks, pollDrain, serverCpuTicks, steadyRate, type DrainTiming } from './common.js';
import type { BenchContext } from './context.js';
import type { Driver, RowCounter } from './database.js';
import type { Managed } from './processes.js';

/**
 * How often a drain is polled. A count on PostgreSQL is a query to the
 * server that the queue itself runs on: polled as often as SQLite's it
 * would take a share of the 2 cores from the run it measures.
 */
export const POLL_MS: Record<Driver, number> = { sqlite: 10, postgres: 50 };

/** Where a drain's per-job figures start by default: start-up (node, forks, migrations, first plans) left out. */
export const DEFAULT_MARK = 0.1;

export interface DrainRun {
  /** Jobs/s from the first finished job seen to the last (start-up left out). */
  jobsPerSec: number;
  /** Jobs/s from the moment the process(es) were started to the last job finished. */
  jobsPerSecFromStart: number;
  /**
   * CPU (user + system) per 1,000 jobs of every process that does the
   * queue's work, from a tenth of the jobs done (start-up left out) to the
   * last; unmeasured for workers that exit when the queue is empty.
   */
  cpuMsPer1k?: number;
  /**
   * On PostgreSQL: the server's CPU per 1,000 jobs over the whole run, the
   * enqueue included: from before the enqueue to after the workers stopped
   * (serverCpuTicks, the postmaster and its backends).
   */
  serverCpuWholeMsPer1k?: number;
  /** Jobs/s from the mark (where the CPU per job starts) to the last. */
  jobsPerSecFromMark?: number;
}

/**
 * A drain's rates; `startedMs`: when its processes were spawned, `mark`:
 * where its per-job figures start (performance.now). A drain that ended
 * before the mark was taken (tiny runs) has its steady rate from the mark.
 */
export function drainRates(
  timing: DrainTiming,
  jobs: number,
  startedMs: number,
  mark: { done: number; ms: number },
): DrainRun {
  const jobsPerSec = steadyRate(timing, jobs);
  const marked = mark.done > 0 && timing.endMs > mark.ms;
  return {
    jobsPerSec,
    jobsPerSecFromStart: jobs / ((timing.endMs - startedMs) / 1000),
    jobsPerSecFromMark: marked ? (jobs - mark.done) / ((timing.endMs - mark.ms) / 1000) : jobsPerSec,
  };
}

export interface WorkerDrain {
  /** Names the processes and their output files in `dir`. */
  name: string;
  script: string;
  args: string[];
  processes: number;
  jobs: number;
  dir: string;
  pollMs: number;
  counter: Pick<RowCounter, 'close'>;
  countDone: () => Promise<number>;
  /** The workers exit 0 once the queue is empty (CPU unmeasured); otherwise any exit is too early. */
  exitWhenEmpty: boolean;
  /** Processes other than the workers whose CPU counts too (a peer's server). */
  serverPids?: number[];
  /** The fraction of the jobs done where the CPU per job starts (DEFAULT_MARK unless given). */
  markAt?: number;
}

/** The CPU ticks of `pids` now, by pid (0 for one gone). */
export function ticksOf(pids: number[]): Map<number, number> {
  return new Map(pids.map((pid) => [pid, cpuTicks(pid) ?? 0]));
}

/** Clock ticks as CPU ms per 1,000 of `jobs`. */
export function msPer1k(ticks: number, jobs: number): number {
  return (ticks * 1000) / clockTicksPerSecond() / (jobs / 1000);
}

/**
 * What per-pid counters (CPU ticks, bytes written) rose by between two
 * readings: a pid seen only at the end started after the mark (all of it
 * counts); one seen only at the mark ended before the end (left out: its
 * count since the mark is unknown). A server-wide count is a plain difference.
 */
export function sinceMark(mark: number | Map<number, number>, end: number | Map<number, number>): number {
  if (typeof mark === 'number' || typeof end === 'number') return Number(end) - Number(mark);
  return [...end].reduce((sum, [pid, count]) => sum + count - (mark.get(pid) ?? 0), 0);
}

/** `run`'s figures with the server's CPU of the whole of it (serverCpuWholeMsPer1k), `jobs` enqueued and drained. */
export async function withServerCpu<R extends DrainRun>(jobs: number, run: () => Promise<R>): Promise<R> {
  const before = serverCpuTicks();
  const result = await run();
  return { ...result, serverCpuWholeMsPer1k: msPer1k(serverCpuTicks() - before, jobs) };
}

/** `processes` copies of a worker script drain a filled queue; the counter is closed and every worker stopped after. */
export async function drainByWorkers(ctx: BenchContext, drain: WorkerDrain): Promise<DrainRun> {
  const started = performance.now();
  const workers: Managed[] = [];
  const failed = (w: Managed) => (drain.exitWhenEmpty ? w.exit !== undefined && w.exit.exitCode !== 0 : !w.running);
  try {
    for (let i = 0; i < drain.processes; i++)
      workers.push(
        ctx.processes.startNode(`${drain.name}-${i}`, drain.script, drain.args, {
          output: join(drain.dir, `worker-${i}.out`),
        }),
      );
    const pids = [...workers.map((w) => w.pid), ...(drain.serverPids ?? [])];
    // Until the mark: from the start, which is what a drain that ends between two polls is measured from.
    let atMark = ticksOf(pids);
    const mark = { done: 0, ms: 0 };
    const timing = await pollDrain(drain.countDone, drain.jobs, {
      intervalMs: drain.pollMs,
      timeoutMs: ctx.sizes.drainTimeoutMs,
      alive: () =>
        workers.some(failed) ? `a ${drain.name} worker failed or exited early; see ${drain.dir}` : undefined,
      mark: {
        atDone: Math.ceil(drain.jobs * (drain.markAt ?? DEFAULT_MARK)),
        reached: (done) => {
          if (done >= drain.jobs) return;
          atMark = ticksOf(pids);
          Object.assign(mark, { done, ms: performance.now() });
        },
      },
    });
    const cpu = drain.exitWhenEmpty
      ? {}
      : { cpuMsPer1k: msPer1k(sinceMark(atMark, ticksOf(pids)), drain.jobs - mark.done) };
    return { ...drainRates(timing, drain.jobs, started, mark), ...cpu };
  } finally {
    await drain.counter.close();
    await Promise.all(workers.map((w) => w.stop(5_000)));
  }
}
