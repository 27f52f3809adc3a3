/** What every drain shares (sections 1-3, 9 and 12): its poll, its figures, and a drain by plain worker processes. */
import { join } from 'node:path';
import { pollDrain, steadyRate, type DrainTiming } from './common.js';
import type { BenchContext } from './context.js';
import type { Driver, RowCounter } from './database.js';
import type { Managed } from './processes.js';

/**
 * How often a drain is polled. A count on PostgreSQL is a query to the
 * server that the queue itself runs on: polled as often as SQLite's it
 * would take a share of the 2 cores from the run it measures.
 */
export const POLL_MS: Record<Driver, number> = { sqlite: 10, postgres: 50 };

export interface DrainRun {
  /** Jobs/s from the first finished job seen to the last (start-up left out). */
  jobsPerSec: number;
  /** Jobs/s from the moment the process(es) were started to the last job finished. */
  jobsPerSecFromStart: number;
}

/** A drain's two rates; `startedMs`: when its processes were spawned (performance.now). */
export function drainRates(timing: DrainTiming, jobs: number, startedMs: number): DrainRun {
  return { jobsPerSec: steadyRate(timing, jobs), jobsPerSecFromStart: jobs / ((timing.endMs - startedMs) / 1000) };
}

export interface WorkerDrain {
  /** Names the processes and their output files in `dir`. */
  name: string;
  script: string;
  args: string[];
  processes: number;
  jobs: number;
  dir: string;
  driver: Driver;
  counter: RowCounter;
  countDone: () => Promise<number>;
  /** The workers exit 0 once the queue is empty; otherwise any exit is too early. */
  exitWhenEmpty: boolean;
}

/** `processes` copies of a worker script drain a filled queue; the counter is closed and every worker stopped after. */
export async function drainByWorkers(ctx: BenchContext, drain: WorkerDrain): Promise<DrainRun> {
  const started = performance.now();
  const workers: Managed[] = [];
  const failed = (w: Managed) => (drain.exitWhenEmpty ? w.exit !== undefined && w.exit.exitCode !== 0 : !w.running);
  try {
    for (let i = 0; i < drain.processes; i++) workers.push(ctx.processes.startNode(`${drain.name}-${i}`, drain.script, drain.args, { output: join(drain.dir, `worker-${i}.out`) }));
    const timing = await pollDrain(drain.countDone, drain.jobs, {
      intervalMs: POLL_MS[drain.driver],
      timeoutMs: ctx.sizes.drainTimeoutMs,
      alive: () => (workers.some(failed) ? `a ${drain.name} worker failed or exited early; see ${drain.dir}` : undefined),
    });
    return drainRates(timing, drain.jobs, started);
  } finally {
    await drain.counter.close();
    await Promise.all(workers.map((w) => w.stop(5_000)));
  }
}
