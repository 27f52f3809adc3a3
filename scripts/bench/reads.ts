/**
 * Section 13: what an operator's reads cost on a big store. `readsJobs`
 * jobs of three classes are enqueued (enqueueMany), then finished in bulk
 * by statements of this benchmark's own (98% SUCCEEDED, 1% FAILED with one
 * of five error codes, 1% left QUEUED; an attempt row each, with its
 * cost: CPU and peak memory), their ends
 * spread evenly over the last 30 days (the default retention of SUCCEEDED
 * jobs): the store of a queue that has run steadily for a month, vacuumed
 * (PostgreSQL) as autovacuum would have. Each read is the store call
 * `leasehold list` or `stats` makes (in this process: the CLI's start-up is
 * not in the figure), timed `runs` + 2 times after one warm-up.
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { COST_WINDOW_MS } from '../../src/cli/reports/cost.js';
import { collectStats, DEFAULT_STATS_LIMIT } from '../../src/cli/reports/stats.js';
import { systemClock } from '../../src/clock.js';
import { DEFAULT_RETENTION } from '../../src/queue/limits.js';
import { openStore } from '../../src/store/open.js';
import type { Store } from '../../src/store/types.js';
import { round, summarize, type Stat } from './common.js';
import type { BenchContext } from './context.js';
import { benchDatabase, type BenchDatabase, type Driver } from './database.js';
import { FILL_CHUNK, openBenchQueue } from './leasehold.js';

const CLASSES = ['reads-a', 'reads-b', 'reads-c'];
/** Every read must answer within this (issue 12). */
export const READ_TARGET_MS = 100;

export interface ReadsSection {
  jobs: number;
  runs: number;
  drivers: { driver: Driver; setup_seconds: number; reads: { read: string; ms: Stat }[] }[];
}

const SPREAD_MS = 30 * 24 * 3_600_000;

/** Ends every job but 1 in 100 (left QUEUED), as a month of running would have: status, times, owner, attempt row with its cost. */
function finishSql(now: number, jobs: number): string[] {
  const finishedAt = `${now} - (${jobs} - id) * ${Math.floor(SPREAD_MS / jobs)}`;
  const status = `CASE WHEN id % 100 = 0 THEN 'FAILED' ELSE 'SUCCEEDED' END`;
  const code = `CASE WHEN id % 100 = 0 THEN 'E:' || (id / 100 % 5) END`;
  return [
    `UPDATE jobs SET status = ${status}, attempts = 1, owner_id = 'bench', lease_token = 'bench', claimed_at = ${finishedAt} - 10,
       started_at = ${finishedAt} - 10, finished_at = ${finishedAt}, error_code = ${code} WHERE id % 100 <> 1`,
    `INSERT INTO job_attempts (job_id, attempt, owner_id, lease_token, started_at, finished_at, status, error_code, cpu_ms, peak_rss_bytes)
       SELECT id, 1, owner_id, lease_token, started_at, finished_at, status, error_code, (id % 997) * 0.25, (60 + id % 200) * 1048576
       FROM jobs WHERE finished_at IS NOT NULL`,
  ];
}

/** Statements of this benchmark's own, in one transaction, on the measurement's database. */
async function runStatements(ctx: BenchContext, database: BenchDatabase, statements: string[]): Promise<void> {
  if (database.driver === 'sqlite') {
    const db = new Database(database.url);
    try {
      db.transaction(() => statements.forEach((sql) => db.exec(sql)))();
    } finally {
      db.close();
    }
    return;
  }
  const schema = new URL(database.url).searchParams.get('schema') ?? 'public';
  const client = new pg.Client({ connectionString: ctx.pgUrl, options: `-c search_path=${schema}` });
  await client.connect();
  try {
    await client.query('BEGIN');
    for (const sql of statements) await client.query(sql);
    await client.query('COMMIT');
    await client.query('VACUUM ANALYZE');
  } finally {
    await client.end();
  }
}

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

async function measureDriver(ctx: BenchContext, driver: Driver): Promise<ReadsSection['drivers'][number]> {
  const dir = ctx.dirs.make(`reads-${driver}`);
  const database = benchDatabase(ctx, dir, driver);
  try {
    const started = performance.now();
    const queue = await openBenchQueue(database.url);
    const jobs = ctx.sizes.readsJobs;
    for (let done = 0; done < jobs; done += FILL_CHUNK) {
      const size = Math.min(FILL_CHUNK, jobs - done);
      await queue.enqueueMany(Array.from({ length: size }, (_, i) => ({ class: CLASSES[(done + i) % CLASSES.length]!, payload: { n: done + i } })));
    }
    await queue.close();
    await runStatements(ctx, database, finishSql(systemClock.now(), jobs));
    const setupSeconds = round((performance.now() - started) / 1000, 1);
    ctx.progress(`reads on ${driver}: ${jobs} jobs set up in ${setupSeconds} s`);
    const store = await openStore(database.url);
    try {
      const results: { read: string; ms: Stat }[] = [];
      for (const [read, run] of reads(store)) {
        await run();
        const times: number[] = [];
        for (let i = 0; i < ctx.sizes.runs + 2; i++) {
          const t = performance.now();
          await run();
          times.push(performance.now() - t);
        }
        results.push({ read, ms: summarize(times, 1) });
      }
      return { driver, setup_seconds: setupSeconds, reads: results };
    } finally {
      await store.close();
    }
  } finally {
    await database.dispose();
  }
}

export async function runReads(ctx: BenchContext, drivers: Driver[]): Promise<ReadsSection> {
  const results: ReadsSection['drivers'] = [];
  for (const driver of drivers) results.push(await measureDriver(ctx, driver));
  return { jobs: ctx.sizes.readsJobs, runs: ctx.sizes.runs + 2, drivers: results };
}

/** The slowest read's median, over every driver measured. */
export function slowestRead(section: ReadsSection | undefined): number | undefined {
  const medians = section?.drivers.flatMap((d) => d.reads.map((r) => r.ms.median)) ?? [];
  return medians.length === 0 ? undefined : Math.max(...medians);
}
