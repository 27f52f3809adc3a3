/**
 * Section 17: jobs that do real work, as issue 32 states its targets: they
 * await 5 ms (the default config, then `concurrency: 20`), or burn 0.5 ms of
 * CPU (1 child, then 2), through section 1's drain on SQLite. With
 * LEASEHOLD_BENCH_BASELINE set, that build's `supervise` runs the
 * `concurrency: 20` drain too, in the same rounds (issue 52: no worse than
 * the build before the one writer).
 */
import { defaultClaimBatch } from '../../dist/src/limits.js';
import { benchBaseline } from './baseline.js';
import { summarize, type Stat } from './common.js';
import type { BenchContext } from './context.js';
import { POLL_MS } from './drain.js';
import { CPU_PER_JOB, ratioOf, runRounds, runsOf, type Contender } from './rounds.js';
import { leaseholdDrain, throughputRow, type LeaseholdDrainRun, type ThroughputRow } from './throughput.js';

const AWAIT_MS = 5;
const BURN_MS = 0.5;
const WIDE_CONCURRENCY = 20;

interface RealWorkload {
  key: string;
  work: 'await' | 'burn';
  jobMs: number;
  concurrency: number;
  children: number;
  jobs: number;
}

export interface RealWorkRow extends ThroughputRow {
  work: RealWorkload['work'];
  job_ms: number;
  concurrency: number;
  jobs: number;
  /** CPU per job of every process (supervisor and children), ms: cpu_ms_per_1k_jobs added up, over 1,000. */
  cpu_ms_per_job: Stat;
  /** The most jobs seen running at once in a child (the handler counts its calls in flight). */
  peak_running: Stat;
}

export interface RealWorkSection {
  method: string;
  results: RealWorkRow[];
  /** Burning jobs: 2 children's jobs/s over 1 child's, within each round. */
  burn_two_over_one?: Stat;
  /** With a baseline: this build's awaiting jobs at concurrency 20 over the baseline's, within each round. */
  await_wide_over_baseline?: { baseline: string; jobs_per_sec: Stat; cpu_per_job: Stat };
}

const WIDE_KEY = 'await-wide';
const WIDE_BASELINE_KEY = 'await-wide@baseline';

function workloads(ctx: BenchContext): RealWorkload[] {
  const { awaitJobs, wideJobs, burnJobs } = ctx.sizes.realWork;
  return [
    { key: 'await', work: 'await', jobMs: AWAIT_MS, concurrency: 1, children: 1, jobs: awaitJobs },
    { key: WIDE_KEY, work: 'await', jobMs: AWAIT_MS, concurrency: WIDE_CONCURRENCY, children: 1, jobs: wideJobs },
    { key: 'burn-1', work: 'burn', jobMs: BURN_MS, concurrency: 1, children: 1, jobs: burnJobs },
    { key: 'burn-2', work: 'burn', jobMs: BURN_MS, concurrency: 1, children: 2, jobs: burnJobs },
  ];
}

export async function runRealWork(ctx: BenchContext): Promise<RealWorkSection> {
  const all = workloads(ctx);
  const labelOf = (w: RealWorkload) =>
    `${w.children} child(ren), concurrency ${w.concurrency}, ${w.jobs} jobs that ${w.work} ${w.jobMs} ms`;
  const contenders: Contender[] = all.map((w) => ({
    key: w.key,
    label: labelOf(w),
    drain: () => leaseholdDrain(ctx, w.children, defaultClaimBatch(w.concurrency), 'sqlite', w),
  }));
  const baseline = benchBaseline();
  const wide = all.find((w) => w.key === WIDE_KEY)!;
  if (baseline !== undefined)
    contenders.push({
      key: WIDE_BASELINE_KEY,
      label: `baseline, ${labelOf(wide)}`,
      drain: () =>
        leaseholdDrain(ctx, wide.children, defaultClaimBatch(wide.concurrency), 'sqlite', {
          ...wide,
          supervise: baseline.supervise,
        }),
    });
  const rounds = await runRounds(ctx, 'real-work', contenders);
  const burnScaling = ratioOf(rounds, 'burn-2', 'burn-1');
  return {
    method:
      `as section 1 (jobs/s counted every ${POLL_MS.sqlite} ms; CPU from /proc from the 10% mark), SQLite, each class's default claim_batch ` +
      `(${defaultClaimBatch(1)} at concurrency 1, ${defaultClaimBatch(WIDE_CONCURRENCY)} at ${WIDE_CONCURRENCY}); a job awaits a ${AWAIT_MS} ms timer, or burns ${BURN_MS} ms of CPU ` +
      '(a busy loop on process.cpuUsage); the handler counts its calls in flight in its child and returns the most so far, peak_running is the highest result',
    results: all.map((w) => {
      const runs = runsOf<LeaseholdDrainRun>(rounds, w.key);
      return {
        work: w.work,
        job_ms: w.jobMs,
        concurrency: w.concurrency,
        jobs: w.jobs,
        ...throughputRow(w.children, defaultClaimBatch(w.concurrency), runs, 'sqlite'),
        cpu_ms_per_job: summarize(
          runs.map((run) => (run.supervisorCpuMsPer1k + run.childrenCpuMsPer1k) / 1000),
          3,
        ),
        peak_running: summarize(runs.map((run) => run.peakRunning ?? 0)),
      };
    }),
    ...(burnScaling === undefined ? {} : { burn_two_over_one: burnScaling }),
    ...(baseline === undefined
      ? {}
      : {
          await_wide_over_baseline: {
            baseline: baseline.folder,
            jobs_per_sec: ratioOf(rounds, WIDE_KEY, WIDE_BASELINE_KEY)!,
            cpu_per_job: ratioOf(rounds, WIDE_KEY, WIDE_BASELINE_KEY, CPU_PER_JOB)!,
          },
        }),
  };
}

/** Issue 32's real-work targets, as checkTargets' arguments: id, what, the figure, whether it is met. */
export function realWorkTargets(
  section: RealWorkSection | undefined,
): [string, string, number | undefined, (value: number) => boolean][] {
  const row = (work: RealWorkload['work'], concurrency: number) =>
    section?.results.find((r) => r.work === work && r.concurrency === concurrency && r.processes === 1);
  return [
    [
      '32-await-cpu',
      `jobs that await ${AWAIT_MS} ms, default config, 1 child: CPU per job of all processes <= 0.5 ms`,
      row('await', 1)?.cpu_ms_per_job.median,
      (v) => v <= 0.5,
    ],
    [
      '32-await-wide',
      `the same at concurrency ${WIDE_CONCURRENCY}, 1 child: >= 3,000 jobs/s`,
      row('await', WIDE_CONCURRENCY)?.jobs_per_sec.median,
      (v) => v >= 3_000,
    ],
    [
      '32-burn-scale',
      `jobs that burn ${BURN_MS} ms of CPU: 2 children >= 1.8x 1 child (within a round)`,
      section?.burn_two_over_one?.median,
      (v) => v >= 1.8,
    ],
    [
      '52-await-wide',
      `awaiting jobs at concurrency ${WIDE_CONCURRENCY}: jobs/s >= 0.95x the baseline build's (LEASEHOLD_BENCH_BASELINE, within a round)`,
      section?.await_wide_over_baseline?.jobs_per_sec.median,
      (v) => v >= 0.95,
    ],
    [
      '52-await-wide-cpu',
      `awaiting jobs at concurrency ${WIDE_CONCURRENCY}: CPU per job <= 1.05x the baseline build's (within a round)`,
      section?.await_wide_over_baseline?.cpu_per_job.median,
      (v) => v <= 1.05,
    ],
  ];
}
