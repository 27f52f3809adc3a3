/**
 * Section 1: no-op jobs through a real supervisor and its children. The
 * queue is filled first (enqueueMany), then `supervise` starts; a read-only
 * connection counts SUCCEEDED rows every POLL_MS until all are done.
 */
import type { Stat } from './common.js';
import { clockTicksPerSecond, cpuTicks, pollDrain, steadyRate } from './common.js';
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
  /**
   * CPU (user + system) per 1,000 jobs from the moment a tenth of the jobs
   * were done (every child has started by then: start-up left out) to the
   * last, of the supervisor and of its children together.
   */
  supervisorCpuMsPer1k: number;
  childrenCpuMsPer1k: number;
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
  // CPU ticks of the supervisor and of each child once a tenth of the jobs are done.
  let atMark = new Map<number, number>();
  let doneAtMark = 0;
  const ticksNow = () => new Map([supervisor.pid, ...supervisor.process.noteDescendants()].map((pid) => [pid, cpuTicks(pid) ?? 0]));
  try {
    const timing = await pollDrain(counter.count(SUCCEEDED_COUNT), jobs, {
      intervalMs: POLL_MS,
      timeoutMs: ctx.sizes.drainTimeoutMs,
      alive: () => supervisor.deadReason(),
      mark: {
        atDone: Math.ceil(jobs / 10),
        reached: (done) => {
          atMark = ticksNow();
          doneAtMark = done;
        },
      },
    });
    // Read before the stop: the children are still alive.
    const atEnd = ticksNow();
    const perThousand = (jobs - doneAtMark) / 1000;
    const used = (pid: number) => (((atEnd.get(pid) ?? 0) - (atMark.get(pid) ?? 0)) * 1000) / clockTicksPerSecond() / perThousand;
    const supervisorCpu = used(supervisor.pid);
    const childrenCpu = [...atEnd.keys()].filter((pid) => pid !== supervisor.pid).reduce((sum, pid) => sum + used(pid), 0);
    const attempts = counter.count('SELECT count(*) FROM job_attempts')();
    const events = counter.count('SELECT count(*) FROM job_events')();
    return {
      jobsPerSec: steadyRate(timing, jobs),
      jobsPerSecFromStart: jobs / ((timing.endMs - started) / 1000),
      attemptsPerJob: attempts / jobs,
      eventsPerJob: events / jobs,
      supervisorCpuMsPer1k: supervisorCpu,
      childrenCpuMsPer1k: childrenCpu,
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
  /** CPU ms per 1,000 jobs (user + system, spawn to last job): where the work happens. */
  cpu_ms_per_1k_jobs: { supervisor: Stat; children: Stat };
}
