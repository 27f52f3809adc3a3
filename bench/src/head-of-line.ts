/** Section 11: how long fast jobs wait, claimed, behind a slow job of the same batch (started_at − claimed_at). */
import type { Queue } from '../../dist/src/queue/queue.js';
import type { JobRow } from '../../dist/src/store/types.js';
import { pollDrain, quantilesOverRuns, summarize, type Stat } from './common.js';
import type { BenchContext } from './context.js';
import {
  BENCH_CLASS,
  describeClass,
  FINISHED_COUNT,
  fillQueue,
  withSupervisor,
  writeSleepHandler,
} from './leasehold.js';
import { POLL_MS } from './drain.js';

const CHILDREN = 2;
const CONCURRENCY = 1;
/** Fast jobs that waited longer than this are counted. */
export const LONG_WAIT_MS = 500;

export interface HeadOfLineSection {
  config: string;
  jobs: number;
  fast_jobs: number;
  slow_jobs: number;
  fast_ms: number;
  slow_ms: number;
  /** Every slow_every-th job (1-based, in id order) is a slow one. */
  slow_every: number;
  unit: 'ms';
  /** Over a run's fast jobs: started_at − claimed_at (integer ms on both sides). */
  fast_wait_ms: { p50: Stat; p99: Stat; max: Stat };
  /** How many of a run's fast jobs waited longer than LONG_WAIT_MS. */
  fast_waits_over_500ms: Stat;
  /** From spawning the supervisor to the last finished_at. */
  wall_ms: Stat;
  /** The least wall time the slow jobs alone allow: ceil(slow / children) × slow_ms. */
  wall_floor_ms: number;
  /** Jobs that ended other than SUCCEEDED (0 expected). */
  not_succeeded: Stat;
}

interface HeadOfLineRun {
  /** started_at − claimed_at of every fast job that started. */
  waits: number[];
  wallMs: number;
  notSucceeded: number;
}

/** The n-th job (from 0) is slow at every slowEvery-th place, counted from 1. */
function isSlow(n: number, slowEvery: number): boolean {
  return (n + 1) % slowEvery === 0;
}

/** What the finished rows say: waits of the fast jobs, the last finish, and the jobs that did not succeed. */
function readRun(rows: JobRow[], fastMs: number, spawnedAt: number): HeadOfLineRun {
  const waits: number[] = [];
  let lastFinish = spawnedAt;
  let notSucceeded = 0;
  for (const row of rows) {
    if (row.status !== 'SUCCEEDED') notSucceeded++;
    if (row.finished_at !== null) lastFinish = Math.max(lastFinish, row.finished_at);
    const { ms } = JSON.parse(row.payload) as { ms: number };
    if (ms === fastMs && row.started_at !== null && row.claimed_at !== null)
      waits.push(row.started_at - row.claimed_at);
  }
  if (waits.length === 0) throw new Error('no fast job has both claimed_at and started_at');
  return { waits, wallMs: lastFinish - spawnedAt, notSucceeded };
}

async function runOnce(ctx: BenchContext): Promise<{ run: HeadOfLineRun; config: string }> {
  const { jobs, fastMs, slowEvery, slowMs } = ctx.sizes.headOfLine;
  const setup = {
    handler: writeSleepHandler,
    processes: CHILDREN,
    concurrency: CONCURRENCY,
    before: (queue: Queue) =>
      fillQueue(queue, jobs, undefined, (n) => ({ n, ms: isSlow(n, slowEvery) ? slowMs : fastMs })),
  };
  return withSupervisor(ctx, 'head-of-line', setup, async ({ config, database, queue, supervisor }) => {
    const counter = await database.counter();
    try {
      await pollDrain(counter.count(FINISHED_COUNT), jobs, {
        intervalMs: POLL_MS.sqlite,
        timeoutMs: ctx.sizes.drainTimeoutMs,
        alive: () => supervisor.deadReason(),
      });
    } finally {
      await counter.close();
    }
    const rows = await queue.store.jobList({ class: BENCH_CLASS, limit: jobs + 1 });
    if (rows.length !== jobs) throw new Error(`expected ${jobs} jobs, found ${rows.length}`);
    return { run: readRun(rows, fastMs, supervisor.startedAt), config: describeClass(config) };
  });
}

export async function runHeadOfLine(ctx: BenchContext): Promise<HeadOfLineSection> {
  const { sizes } = ctx;
  const { jobs, fastMs, slowEvery, slowMs } = sizes.headOfLine;
  const slowJobs = Math.floor(jobs / slowEvery);
  if (fastMs === slowMs) throw new Error('head-of-line: fast and slow jobs must differ in length');
  const runs: HeadOfLineRun[] = [];
  let described = '';
  for (let run = 0; run < sizes.runs; run++) {
    ctx.progress(
      `head-of-line run ${run + 1}/${sizes.runs}: ${jobs} jobs of ${fastMs} ms, one of ${slowMs} ms at every ${slowEvery}th place, ${CHILDREN} children`,
    );
    const once = await runOnce(ctx);
    runs.push(once.run);
    described = once.config;
  }
  return {
    config: `SQLite, default config but processes, concurrency and handler (${described}); handler sleeps payload.ms`,
    jobs,
    fast_jobs: jobs - slowJobs,
    slow_jobs: slowJobs,
    fast_ms: fastMs,
    slow_ms: slowMs,
    slow_every: slowEvery,
    unit: 'ms',
    fast_wait_ms: quantilesOverRuns(
      runs.map((r) => r.waits),
      ['p50', 'p99', 'max'],
    ),
    fast_waits_over_500ms: summarize(runs.map((r) => r.waits.filter((ms) => ms > LONG_WAIT_MS).length)),
    wall_ms: summarize(runs.map((r) => r.wallMs)),
    wall_floor_ms: Math.ceil(slowJobs / CHILDREN) * slowMs,
    not_succeeded: summarize(runs.map((r) => r.notSucceeded)),
  };
}
