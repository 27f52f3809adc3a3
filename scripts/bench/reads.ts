/** Section 13: the store calls of `leasehold list` and `stats` on a big store, timed in this process (the CLI's start-up left out). */
import { COST_WINDOW_MS } from '../../src/reports/cost.js';
import { collectStats, DEFAULT_STATS_LIMIT } from '../../src/reports/stats.js';
import { systemClock } from '../../src/clock.js';
import { DEFAULT_RETENTION } from '../../src/queue/limits.js';
import type { Store } from '../../src/store/types.js';
import type { Stat } from './common.js';
import type { BenchContext } from './context.js';
import type { Driver } from './database.js';
import { onBigStores, timeRead, type BigStoreMix } from './big-store.js';

const CLASSES = ['reads-a', 'reads-b', 'reads-c'];
/** Every read must answer within this (issue 12). */
export const READ_TARGET_MS = 100;

export interface ReadsSection {
  jobs: number;
  runs: number;
  drivers: { driver: Driver; setup_seconds: number; reads: { read: string; ms: Stat }[] }[];
}

const mixOf = (jobs: number): BigStoreMix => ({ jobs, classes: CLASSES, spreadMs: 30 * 24 * 3_600_000, queuedEvery: 100, timeline: false, keyEvery: 0 });

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
    ['stats: cost, last hour (its part of the report)', () => store.statsCost({ since: systemClock.now() - COST_WINDOW_MS, limit: DEFAULT_STATS_LIMIT })],
    ['stats (the whole report)', stats],
  ];
}

export async function runReads(ctx: BenchContext, drivers: Driver[]): Promise<ReadsSection> {
  const runs = ctx.sizes.runs + 2;
  const measured = await onBigStores(ctx, 'reads', drivers, mixOf(ctx.sizes.readsJobs), async (store) => {
    const results: { read: string; ms: Stat }[] = [];
    for (const [read, run] of reads(store)) results.push({ read, ms: (await timeRead(run, runs)).ms });
    return { reads: results };
  });
  return { jobs: ctx.sizes.readsJobs, runs, drivers: measured };
}
