/**
 * Section 13: the store calls of `leasehold list` and `stats` on a big store, and the operator's pages on a store
 * with an hour of live load behind it (issue 32), timed in this process (the CLI's start-up left out).
 */
import { COST_WINDOW_MS } from '../../src/reports/cost.js';
import { collectStats, DEFAULT_STATS_LIMIT } from '../../src/reports/stats.js';
import { systemClock } from '../../src/clock.js';
import { DEFAULT_RETENTION } from '../../src/queue/limits.js';
import type { Store } from '../../src/store/types.js';
import type { Stat } from './common.js';
import type { BenchContext } from './context.js';
import type { Driver } from './database.js';
import { onBigStores, timeRead, type BigStoreMix } from './big-store.js';
import { dashboardData } from '../../src/dashboard/data.js';
import { SupervisorMetrics } from '../../supervisor/metrics.js';

const CLASSES = ['reads-a', 'reads-b', 'reads-c'];
/** Every read must answer within this (issue 12). */
export const READ_TARGET_MS = 100;
/** With an hour of 100 jobs/s behind it, the overview and `stats` answer within READ_TARGET_MS, /metrics within this (issue 32). */
export const METRICS_TARGET_MS = 50;
const HOUR_MS = 3_600_000;

export interface ReadsSection {
  jobs: number;
  runs: number;
  drivers: { driver: Driver; setup_seconds: number; reads: { read: string; ms: Stat }[] }[];
  /** The second shape: `jobs` finished within the last hour (100 jobs/s at full size), read as the operator's pages read them. */
  live_hour: { jobs: number; drivers: { driver: Driver; setup_seconds: number; reads: LiveRead[] }[] };
}

/** One read of the live-hour store: `key` names its target (`13-live-<key>`). */
export interface LiveRead {
  key: string;
  read: string;
  target_ms: number;
  ms: Stat;
}

const mixOf = (jobs: number): BigStoreMix => ({ jobs, classes: CLASSES, spreadMs: 30 * 24 * 3_600_000, queuedEvery: 100, timeline: false, keyEvery: 0 });

const statsReport = (store: Store) => () => collectStats(store, { now: systemClock.now(), retention: DEFAULT_RETENTION });

/** An hour of live load: every job finished within the last hour, 1% FAILED with an error code, cost measured. */
const liveHourOf = (jobs: number): BigStoreMix => ({ jobs, classes: CLASSES, spreadMs: HOUR_MS, queuedEvery: 1_000, timeline: false, keyEvery: 0 });

/** The reads issue 32 holds to a target under live load: key, label, target, call. */
function liveReads(store: Store): [string, string, number, () => Promise<unknown>][] {
  const metrics = new SupervisorMetrics({ store, supervisorId: 'bench-supervisor', classes: () => [] });
  return [
    ['overview', 'dashboard overview (first view)', READ_TARGET_MS, () => dashboardData(store, { now: Date.now }).overview()],
    ['stats', 'stats (the whole report)', READ_TARGET_MS, statsReport(store)],
    ['metrics', '/metrics (the registry collected)', METRICS_TARGET_MS, () => metrics.registry.metrics()],
  ];
}

/** The reads, each as `leasehold` makes it. */
function reads(store: Store): [string, () => Promise<unknown>][] {
  return [
    ['list (newest 50)', () => store.jobList({ limit: 50 })],
    ['list --status FAILED', () => store.jobList({ status: 'FAILED', limit: 50 })],
    ['list --status SUCCEEDED', () => store.jobList({ status: 'SUCCEEDED', limit: 50 })],
    ['list --status QUEUED', () => store.jobList({ status: 'QUEUED', limit: 50 })],
    ['list --class reads-b', () => store.jobList({ class: 'reads-b', limit: 50 })],
    ['list --class reads-b --status FAILED', () => store.jobList({ class: 'reads-b', status: 'FAILED', limit: 50 })],
    ['stats: cost, last hour (its part of the report)', () => store.statsCost({ since: systemClock.now() - COST_WINDOW_MS, limit: DEFAULT_STATS_LIMIT })],
    ['stats (the whole report)', statsReport(store)],
  ];
}

export async function runReads(ctx: BenchContext, drivers: Driver[]): Promise<ReadsSection> {
  const runs = ctx.sizes.runs + 2;
  const measured = await onBigStores(ctx, 'reads', drivers, mixOf(ctx.sizes.readsJobs), async (store) => {
    const results: { read: string; ms: Stat }[] = [];
    for (const [read, run] of reads(store)) results.push({ read, ms: (await timeRead(run, runs)).ms });
    return { reads: results };
  });
  const liveJobs = ctx.sizes.liveHourJobs;
  const live = await onBigStores(ctx, 'reads-live-hour', drivers, liveHourOf(liveJobs), async (store) => {
    const results: LiveRead[] = [];
    for (const [key, read, target, run] of liveReads(store)) results.push({ key, read, target_ms: target, ms: (await timeRead(run, runs)).ms });
    return { reads: results };
  });
  return { jobs: ctx.sizes.readsJobs, runs, drivers: measured, live_hour: { jobs: liveJobs, drivers: live } };
}
