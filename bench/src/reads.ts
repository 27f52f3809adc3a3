/** Section 13: the store calls of `leasehold list` and `stats` on a big store, timed in this process (the CLI's start-up left out). */
import { COST_WINDOW_MS } from '../../dist/src/reports/cost.js';
import { collectStats, DEFAULT_STATS_LIMIT } from '../../dist/src/reports/stats.js';
import { systemClock } from '../../dist/src/clock.js';
import { DEFAULT_RETENTION } from '../../dist/src/limits.js';
import type { Store } from '../../dist/src/store/types.js';
import type { Stat } from './common.js';
import type { BenchContext } from './context.js';
import type { Driver } from './database.js';
import { onBigStores, timeRead, type BigStoreMix } from './big-store.js';
import { dashboardData } from '../../dist/src/dashboard/data.js';
import { SupervisorMetrics } from '../../dist/supervisor/metrics.js';
import { MINUTES_PER_ROLL_UP } from '../../dist/supervisor/stats-rollup.js';

const CLASSES = ['reads-a', 'reads-b', 'reads-c'];
/** Every read must answer within this (issue 12), and `stats` and the overview with an hour of 100 jobs/s behind them (issue 32). */
export const READ_TARGET_MS = 100;
/** A scrape of /metrics with an hour of 100 jobs/s behind it (issue 32). */
export const METRICS_TARGET_MS = 50;
/** The live hour's reads that READ_TARGET_MS and METRICS_TARGET_MS hold. */
export const METRICS_READ = '/metrics (the database gauges)';

type TimedReads = { read: string; ms: Stat }[];

export interface ReadsSection {
  jobs: number;
  runs: number;
  drivers: { driver: Driver; setup_seconds: number; reads: TimedReads }[];
  /** The windowed reads with `jobs` finished in the last hour, summed by statsRollUp as a supervisor does first (`roll_up_ms`). */
  live_hour: {
    jobs: number;
    drivers: { driver: Driver; setup_seconds: number; roll_up_ms: number; reads: TimedReads }[];
  };
}

const mixOf = (jobs: number): BigStoreMix => ({
  jobs,
  classes: CLASSES,
  spreadMs: 30 * 24 * 3_600_000,
  queuedEvery: 100,
  timeline: false,
  keyEvery: 0,
});

/** The reads, each as `leasehold` makes it. */
function reads(store: Store): [string, () => Promise<unknown>][] {
  const stats = () => collectStats(store, { now: systemClock.now(), retention: DEFAULT_RETENTION });
  return [
    ['list (newest 50)', () => store.jobList({ limit: 50 })],
    ['list --status FAILED', () => store.jobList({ status: 'FAILED', limit: 50 })],
    ['list --status SUCCEEDED', () => store.jobList({ status: 'SUCCEEDED', limit: 50 })],
    ['list --status QUEUED', () => store.jobList({ status: 'QUEUED', limit: 50 })],
    ['list --class reads-b', () => store.jobList({ class: 'reads-b', limit: 50 })],
    ['list --class reads-b --status FAILED', () => store.jobList({ class: 'reads-b', status: 'FAILED', limit: 50 })],
    [
      'stats: cost, last hour (its part of the report)',
      () => store.statsCost({ since: systemClock.now() - COST_WINDOW_MS, limit: DEFAULT_STATS_LIMIT }),
    ],
    ['stats (the whole report)', stats],
  ];
}

/** What an operator reads about the last hour: `stats`, the overview (first view and polled), and /metrics. */
function liveHourReads(store: Store): [string, () => Promise<unknown>][] {
  const metrics = new SupervisorMetrics({ store, supervisorId: 'bench', classes: () => [] });
  let offset = 0;
  const polled = dashboardData(store, { now: () => Date.now() + offset });
  return [
    ['stats (the whole report)', () => collectStats(store, { now: systemClock.now(), retention: DEFAULT_RETENTION })],
    ['overview: first view (nothing kept)', () => dashboardData(store, { now: Date.now }).overview()],
    ['overview: polled every 2 s', () => polled.overview().finally(() => (offset += 2_000))],
    [METRICS_READ, () => metrics.registry.metrics()],
  ];
}

/** Sums the hour into the stats rollup, MINUTES_PER_ROLL_UP a transaction, as a supervisor does; the wall time it took. */
async function rollUp(store: Store): Promise<number> {
  const started = performance.now();
  while ((await store.statsRollUp({ maxMinutes: MINUTES_PER_ROLL_UP })) === MINUTES_PER_ROLL_UP);
  return Math.round(performance.now() - started);
}

export async function runReads(ctx: BenchContext, drivers: Driver[]): Promise<ReadsSection> {
  const runs = ctx.sizes.runs + 2;
  const measured = await onBigStores(ctx, 'reads', drivers, mixOf(ctx.sizes.readsJobs), async (store) => {
    const results: { read: string; ms: Stat }[] = [];
    for (const [read, run] of reads(store)) results.push({ read, ms: (await timeRead(run, runs)).ms });
    return { reads: results };
  });
  const hour = { ...mixOf(ctx.sizes.liveHourJobs), spreadMs: 3_500_000 };
  const live = await onBigStores(ctx, 'reads-live-hour', drivers, hour, async (store) => {
    const rollUpMs = await rollUp(store);
    const results: TimedReads = [];
    for (const [read, run] of liveHourReads(store)) results.push({ read, ms: (await timeRead(run, runs)).ms });
    return { roll_up_ms: rollUpMs, reads: results };
  });
  return {
    jobs: ctx.sizes.readsJobs,
    runs,
    drivers: measured,
    live_hour: { jobs: ctx.sizes.liveHourJobs, drivers: live },
  };
}
