/** Section 12: section 1's drain with 1 child at several classes[].concurrency, beside a BullMQ figure measured elsewhere (it needs Redis). */
import { defaultClaimBatch } from '../../dist/src/limits.js';
import type { BenchContext } from './context.js';
import { POLL_MS } from './drain.js';
import { runRounds, runsOf } from './rounds.js';
import {
  leaseholdDrain,
  throughputRow,
  type LeaseholdDrainRun,
  type ThroughputRow,
  type Workload,
} from './throughput.js';

const CHILDREN = 1;

/** BullMQ, concurrency 50, no-op jobs, on this machine type (2-core VM): measured elsewhere, not by this benchmark. */
export const BULLMQ_REFERENCE = {
  queue: 'BullMQ',
  concurrency: 50,
  jobs_per_sec: 12_022,
  note: 'no-op jobs/s at concurrency 50 on this machine type, measured elsewhere (not run here)',
} as const;

export interface ConcurrencyRow extends ThroughputRow {
  concurrency: number;
  /** How long each job's handler sleeps (0: the no-op handler). */
  job_ms: number;
  jobs: number;
}

export interface ConcurrencySection {
  method: string;
  children: number;
  results: ConcurrencyRow[];
  reference: typeof BULLMQ_REFERENCE;
}

export async function runConcurrency(ctx: BenchContext): Promise<ConcurrencySection> {
  const { sizes } = ctx;
  const { levels, sleepMs, sleepJobs } = sizes.concurrency;
  const workloads: Required<Pick<Workload, 'concurrency' | 'jobMs' | 'jobs'>>[] = levels.flatMap((concurrency, i) => [
    { concurrency, jobMs: 0, jobs: sizes.jobs },
    { concurrency, jobMs: sleepMs, jobs: sleepJobs[i] ?? sleepJobs[sleepJobs.length - 1] ?? sizes.jobs },
  ]);
  const rounds = await runRounds(
    ctx,
    'concurrency',
    workloads.map((w, i) => ({
      key: String(i),
      label: `${CHILDREN} child, concurrency ${w.concurrency}, ${w.jobs} jobs of ${w.jobMs} ms`,
      drain: () => leaseholdDrain(ctx, CHILDREN, defaultClaimBatch(w.concurrency), 'sqlite', w),
    })),
  );
  return {
    method:
      `as section 1: jobs/s from the first job seen SUCCEEDED to the last (counted every ${POLL_MS.sqlite} ms), from_start from spawning the supervisor; ` +
      `SQLite, ${CHILDREN} child, classes[].concurrency per row with its default claim_batch (${defaultClaimBatch(1)} at 1, ${defaultClaimBatch(2)} above); job_ms 0 is the no-op handler, else the handler sleeps job_ms`,
    children: CHILDREN,
    results: workloads.map((w, i) => ({
      concurrency: w.concurrency,
      job_ms: w.jobMs,
      jobs: w.jobs,
      ...throughputRow(
        CHILDREN,
        defaultClaimBatch(w.concurrency),
        runsOf<LeaseholdDrainRun>(rounds, String(i)),
        'sqlite',
      ),
    })),
    reference: BULLMQ_REFERENCE,
  };
}
