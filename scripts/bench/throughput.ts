/**
 * Section 1: no-op jobs through a real supervisor and its children. The
 * queue is filled first (enqueueMany), then `supervise` starts; a read-only
 * connection counts SUCCEEDED rows every POLL_MS until all are done.
 */
import type { Stat } from './common.js';
import { pollDrain, steadyRate } from './common.js';
import { Counter, databaseOf, fillQueue, openBenchQueue, SUCCEEDED_COUNT, SupervisorRun, writeConfig, writeNoopHandler } from './leasehold.js';
import type { BenchContext } from './context.js';

export const POLL_MS = 10;

export interface DrainRun {
  /** Jobs/s from the first finished job seen to the last (start-up left out). */
  jobsPerSec: number;
  /** Jobs/s from the moment the process(es) were started to the last job finished. */
  jobsPerSecFromStart: number;
}

export interface LeaseholdDrainRun extends DrainRun {
  attemptsPerJob: number;
  eventsPerJob: number;
}

export async function leaseholdDrain(ctx: BenchContext, processes: number, claimBatch: number): Promise<LeaseholdDrainRun> {
  const jobs = ctx.sizes.jobs;
  const dir = ctx.dirs.make(`tp-p${processes}-b${claimBatch}`);
  const config = writeConfig(dir, { handler: writeNoopHandler(dir), processes, claimBatch });
  const queue = await openBenchQueue(databaseOf(dir));
  await fillQueue(queue, jobs);
  await queue.close();

  const counter = new Counter(databaseOf(dir));
  const started = performance.now();
  const supervisor = SupervisorRun.start(ctx.processes, config, dir);
  try {
    const timing = await pollDrain(counter.count(SUCCEEDED_COUNT), jobs, {
      intervalMs: POLL_MS,
      timeoutMs: ctx.sizes.drainTimeoutMs,
      alive: () => supervisor.deadReason(),
    });
    const attempts = counter.count('SELECT count(*) FROM job_attempts')();
    const events = counter.count('SELECT count(*) FROM job_events')();
    return {
      jobsPerSec: steadyRate(timing, jobs),
      jobsPerSecFromStart: jobs / ((timing.endMs - started) / 1000),
      attemptsPerJob: attempts / jobs,
      eventsPerJob: events / jobs,
    };
  } finally {
    counter.close();
    await supervisor.stop();
  }
}

export interface ThroughputRow {
  processes: number;
  claim_batch: number;
  jobs_per_sec: Stat;
  jobs_per_sec_from_start: Stat;
  attempts_per_job: number;
  events_per_job: number;
}
